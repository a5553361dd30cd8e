// The four servers of the frontier classes (Enterprise §4.2; the dynamic-graph BFS seed's
// classification): class c of the current frontier is served by a thread (small rows), a
// warp (medium), a block (large) or the whole grid (huge) per vertex, and every vertex a
// server discovers goes into the next level's queue of its class (immediate
// classification: claim_and_classify + flush_classes, traversal/classes.cuh). Each server
// is grid-stride, so it runs inside one launch with the others (classes.cu), or alone in
// a grid sized to its queue (dynamic_parallelism.cu's child kernels).
//
// Bounds that put every degree in class 0 turn the servers into the first half of
// deferred classification: all discoveries land in one queue, which bfs_classify
// (classes.cu) splits by degree afterwards.
//
// Queues: class c of a level lives at queues + c * stride (stride >= n), counts[c] its
// length. Adj: an adjacency layout (morphgpu/adjacency.cuh).
#pragma once
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/classes.cuh>

namespace mg {
namespace bfs {

using traversal::ClassBounds;
using traversal::ClassBuffer;
using traversal::claim_run;
using traversal::flush_classes;

constexpr int THREAD_CAP = 32;  // a small row (degree < bounds.warp <= 32) in one run
constexpr int WARP_CAP = 8;     // a medium row (degree < bounds.block <= 256): 8 per lane
constexpr int WIDE_CAP = 4;     // large and huge rows: 4 edges per thread per step

// Error codes (error[0]): a row longer than its class allows (bounds the host did not
// check), so edges would have been skipped.
constexpr int ERROR_ROW_TOO_LONG = 1;

// What every server needs besides its own queue.
struct ClassLevel {
    int* dist;
    vid_t* parent;  // may be null
    vid_t* out_queues;
    u64* out_tails;
    i64 stride;
    int next_level;
    ClassBounds bounds;  // how discoveries are classified
    int* error;
};

// Small: one thread per vertex, the whole row in one run. Block-wide.
template <int BLOCK, typename Adj>
__device__ void serve_small(const Adj& adj, const vid_t* queue, i64 n, const ClassLevel& L) {
    for (i64 base = (i64)blockIdx.x * BLOCK; base < n; base += (i64)gridDim.x * BLOCK) {
        ClassBuffer<THREAD_CAP> buffer;
        const i64 i = base + threadIdx.x;
        if (i < n) {
            const vid_t v = queue[i];
            const i64 b = (i64)adj.begin(v), e = (i64)adj.end(v);
            if (e - b > THREAD_CAP) report_error(L.error, ERROR_ROW_TOO_LONG);
            claim_run(buffer, adj, L.dist, L.parent, v, b, 1, e, L.next_level, L.bounds);
        }
        flush_classes<BLOCK>(buffer, L.out_queues, L.stride, L.out_tails);
    }
}

// Medium: one warp per vertex, lanes strided by 32. Block-wide.
template <int BLOCK, typename Adj>
__device__ void serve_medium(const Adj& adj, const vid_t* queue, i64 n, const ClassLevel& L) {
    constexpr int WARPS = BLOCK / 32;
    for (i64 base = (i64)blockIdx.x * WARPS; base < n; base += (i64)gridDim.x * WARPS) {
        ClassBuffer<WARP_CAP> buffer;
        const i64 i = base + warp_id();
        if (i < n) {
            const vid_t v = queue[i];
            const i64 b = (i64)adj.begin(v), e = (i64)adj.end(v);
            if (e - b > 32 * WARP_CAP) report_error(L.error, ERROR_ROW_TOO_LONG);
            claim_run(buffer, adj, L.dist, L.parent, v, b + (i64)lane_id(), 32, e,
                      L.next_level, L.bounds);
        }
        flush_classes<BLOCK>(buffer, L.out_queues, L.stride, L.out_tails);
    }
}

// Large: one block per vertex, BLOCK * WIDE_CAP edges per step. Block-wide.
template <int BLOCK, typename Adj>
__device__ void serve_large(const Adj& adj, const vid_t* queue, i64 n, const ClassLevel& L) {
    for (i64 i = blockIdx.x; i < n; i += gridDim.x) {
        const vid_t v = queue[i];
        const i64 b = (i64)adj.begin(v), e = (i64)adj.end(v);
        for (i64 base = b; base < e; base += BLOCK * WIDE_CAP) {  // uniform
            ClassBuffer<WIDE_CAP> buffer;
            claim_run(buffer, adj, L.dist, L.parent, v, base + threadIdx.x, BLOCK, e,
                      L.next_level, L.bounds);
            flush_classes<BLOCK>(buffer, L.out_queues, L.stride, L.out_tails);
        }
    }
}

// Huge: every block of the grid on each vertex's row in turn. Block-wide.
template <int BLOCK, typename Adj>
__device__ void serve_huge(const Adj& adj, const vid_t* queue, i64 n, const ClassLevel& L) {
    const i64 grid_step = (i64)gridDim.x * (BLOCK * WIDE_CAP);
    for (i64 i = 0; i < n; ++i) {
        const vid_t v = queue[i];
        const i64 b = (i64)adj.begin(v), e = (i64)adj.end(v);
        for (i64 base = b + (i64)blockIdx.x * (BLOCK * WIDE_CAP); base < e;
             base += grid_step) {  // uniform
            ClassBuffer<WIDE_CAP> buffer;
            claim_run(buffer, adj, L.dist, L.parent, v, base + threadIdx.x, BLOCK, e,
                      L.next_level, L.bounds);
            flush_classes<BLOCK>(buffer, L.out_queues, L.stride, L.out_tails);
        }
    }
}

// Deferred classification's second half: the discoveries of a level (one queue) go to
// the queues of their classes. Block-wide, grid-stride; one block_reserve per class and
// step.
template <int BLOCK, typename Adj>
__device__ void classify_queue(const Adj& adj, const vid_t* queue, i64 n,
                               const ClassBounds& bounds, vid_t* out_queues, i64 stride,
                               u64* out_tails) {
    for (i64 base = (i64)blockIdx.x * BLOCK; base < n; base += (i64)gridDim.x * BLOCK) {
        ClassBuffer<1> buffer;
        const i64 i = base + threadIdx.x;
        if (i < n) {
            const vid_t v = queue[i];
            buffer.push(v, traversal::frontier_class(adj.degree(v), bounds));
        }
        flush_classes<BLOCK>(buffer, out_queues, stride, out_tails);
    }
}

}  // namespace bfs
}  // namespace mg
