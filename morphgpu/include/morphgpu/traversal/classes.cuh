// Frontier classification (Enterprise §4.2; Schmidt et al. §III-B, immediate variant):
// the frontier is kept as four queues by out-degree, each served by its own granularity:
//
//   class 0 (small, degree < bounds.warp)   one thread per vertex
//   class 1 (medium, < bounds.block)        one warp per vertex
//   class 2 (large, < bounds.grid)          one block per vertex
//   class 3 (huge, the rest)                the whole grid per vertex
//
// A vertex is classified when it is discovered: the thread that wins its label keeps it,
// with its class, in a small per-thread buffer (registers / local memory), and the block
// then reserves slots in the four next-level queues with the shared prefix-sum enqueue
// (mg::block_reserve: one atomicAdd per block and class, none per item).
#pragma once
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/visit.cuh>
#include <morphgpu/worklist.cuh>

namespace mg {
namespace traversal {

constexpr int N_CLASSES = 4;

struct ClassBounds {
    i64 warp;   // first degree served by a warp
    i64 block;  // first degree served by a block
    i64 grid;   // first degree served by the whole grid
};

__device__ __forceinline__ int frontier_class(i64 degree, const ClassBounds& bounds) {
    return degree < bounds.warp ? 0 : degree < bounds.block ? 1 : degree < bounds.grid ? 2 : 3;
}

// The vertices one thread discovered in one step, with their classes.
template <int CAP>
struct ClassBuffer {
    vid_t item[CAP];
    unsigned char cls[CAP];
    int count;

    __device__ ClassBuffer() : count(0) {}
    __device__ __forceinline__ void push(vid_t v, int c) {
        item[count] = v;
        cls[count] = (unsigned char)c;
        ++count;
    }
};

// Claims w for next_level (label check + atomicCAS); the winner records the parent and
// keeps w in its buffer, classified by its out-degree.
template <int CAP, typename Adj>
__device__ __forceinline__ void claim_and_classify(ClassBuffer<CAP>& buffer, const Adj& adj,
                                                   int* dist, vid_t* parent, vid_t src, vid_t w,
                                                   int next_level, const ClassBounds& bounds) {
    if (!claim_label(dist, w, next_level)) return;
    if (parent) parent[w] = src;
    buffer.push(w, frontier_class(adj.degree(w), bounds));
}

// Block-wide: every thread's buffered vertices go to the queue of their class
// (queues + c * stride, tail tails[c]), one block_reserve per class, then the buffer is
// emptied.
template <int BLOCK, int CAP>
__device__ void flush_classes(ClassBuffer<CAP>& buffer, vid_t* queues, i64 stride, u64* tails) {
#pragma unroll
    for (int c = 0; c < N_CLASSES; ++c) {
        i64 mine = 0;
        for (int x = 0; x < buffer.count; ++x) mine += buffer.cls[x] == c;
        i64 slot = block_reserve<BLOCK>(tails + c, mine);
        if (mine) {
            vid_t* queue = queues + (i64)c * stride;
            for (int x = 0; x < buffer.count; ++x) {
                if (buffer.cls[x] == c) queue[slot++] = buffer.item[x];
            }
        }
    }
    buffer.count = 0;
}

// One strided run of a row: edges first, first + step, ... (at most CAP of them, below
// end) claimed into the buffer.
template <int CAP, typename Adj>
__device__ __forceinline__ void claim_run(ClassBuffer<CAP>& buffer, const Adj& adj, int* dist,
                                          vid_t* parent, vid_t src, i64 first, i64 step, i64 end,
                                          int next_level, const ClassBounds& bounds) {
#pragma unroll 4
    for (int t = 0; t < CAP; ++t) {
        const i64 k = first + (i64)t * step;
        if (k >= end) break;
        claim_and_classify(buffer, adj, dist, parent, src, adj.at((eid_t)k), next_level,
                           bounds);
    }
}

}  // namespace traversal
}  // namespace mg
