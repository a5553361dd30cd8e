// Frontier classes (Enterprise §4.2; Schmidt et al. §III-B / the dynamic-graph BFS seed):
// the frontier is kept as four queues by out-degree, served by a thread / warp / block /
// the whole grid per vertex (class_servers.cuh).
//
// bfs_frontier_classes: one launch per level serves the four class queues in turn (the
// phases only claim labels, so they need no barrier between them). With the real bounds
// every discovered vertex goes straight into the next level's queue of its class
// (immediate classification); with bounds that put every degree in class 0 all
// discoveries go to one queue, and bfs_classify then splits it by degree (deferred
// classification: five queues, the seed's other variant).
//
// Compiled for CSR or, with MG_PAGED, for the paged adjacency of a dynamic graph
// (morphgpu/adjacency.cuh). The host launches levels back to back and reads the counts only
// every few levels.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <bfs/kernels/class_servers.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 256
#endif

using namespace mg;
using namespace mg::bfs;

constexpr int BLOCK = MG_BFS_BLOCK;

extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_frontier_classes(MG_ADJ_PARAMS(graph), int* dist, vid_t* parent, const vid_t* in_queues,
                     const u64* in_counts, vid_t* out_queues, u64* out_tails, i64 stride,
                     int next_level, i64 warp_bound, i64 block_bound, i64 grid_bound,
                     int* error) {
    const Adjacency adj = MG_ADJ(graph);
    const ClassLevel level{dist, parent, out_queues, out_tails, stride, next_level,
                           ClassBounds{warp_bound, block_bound, grid_bound}, error};
    serve_small<BLOCK>(adj, in_queues, (i64)in_counts[0], level);
    serve_medium<BLOCK>(adj, in_queues + stride, (i64)in_counts[1], level);
    serve_large<BLOCK>(adj, in_queues + 2 * stride, (i64)in_counts[2], level);
    serve_huge<BLOCK>(adj, in_queues + 3 * stride, (i64)in_counts[3], level);
}

// Deferred classification: the one queue of discoveries (in_queue, *in_count entries) into
// the four class queues of the next level.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_classify(MG_ADJ_PARAMS(graph), const vid_t* in_queue, const u64* in_count,
             vid_t* out_queues, u64* out_tails, i64 stride, i64 warp_bound, i64 block_bound,
             i64 grid_bound) {
    classify_queue<BLOCK>(MG_ADJ(graph), in_queue, (i64)*in_count,
                          ClassBounds{warp_bound, block_bound, grid_bound}, out_queues, stride,
                          out_tails);
}
