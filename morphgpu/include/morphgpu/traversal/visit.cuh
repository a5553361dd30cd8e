// What to do with each edge (src -> dst) that an expand operator hands out: the policies
// that decide whether dst joins the next frontier and how duplicates are culled.
//
// - ClaimVisit: the label check then an atomicCAS on the label (exactly one discoverer
//   wins, so the queue it fills has no duplicates), with a warp-aggregated enqueue.
// - StatusVisit: Enterprise's status array: plain stores of the next level (every writer
//   stores the same value, so the race is benign); the queue is generated afterwards by
//   scanning labels (queue.cuh), so nothing is enqueued here.
// - CollectVisit: the expand half of Merrill's two-phase: every neighbour that still looks
//   unvisited goes, with its source, to an edge queue; contract culls it later.
// Each is called with every lane of the warp that holds an edge converged at the call.
#pragma once
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/queue.cuh>

namespace mg {
namespace traversal {

__device__ __forceinline__ bool claim_label(int* dist, vid_t v, int next_level) {
    // The plain read first filters most visited vertices without an atomic.
    if (load_volatile(dist + v) != -1) return false;
    return atomicCAS(dist + v, -1, next_level) == -1;
}

struct ClaimVisit {
    int* dist;
    vid_t* parent;  // may be null
    int next_level;
    vid_t* out_queue;
    u64* out_tail;

    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const bool mine = claim_label(dist, dst, next_level);
        if (mine && parent) parent[dst] = src;
        warp_enqueue(out_queue, out_tail, mine, dst);
    }
};

struct StatusVisit {
    int* dist;
    vid_t* parent;  // may be null
    int next_level;

    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        if (load_volatile(dist + dst) == -1) {
            dist[dst] = next_level;
            if (parent) parent[dst] = src;
        }
    }
};

struct CollectVisit {
    const int* dist;
    vid_t* edge_dst;
    vid_t* edge_src;
    u64* edge_tail;

    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const bool fresh = load_volatile(dist + dst) == -1;
        warp_append(edge_tail, fresh, [&](u64 slot, unsigned) {
            edge_dst[slot] = dst;
            edge_src[slot] = src;
        });
    }
};

}  // namespace traversal
}  // namespace mg
