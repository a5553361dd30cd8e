// BFS with its level loop driven from the device by dynamic parallelism (the dynamic-graph
// BFS seed, §V: "running the main loop directly on the GPU ... launching a one-thread kernel
// to handle managing the iterations"), over the frontier classes of class_servers.cuh.
//
// bfs_dp_control (one thread) reads the four class counts of level L, launches one child
// grid per non-empty class, each sized to its queue (a thread, warp or block per vertex;
// the grid for the huge class), and then launches itself for level L + 1. Every launch goes
// into the tail-launch stream, which runs its grids one after another once the launching
// grid has finished: the children of level L, then the control of L + 1, which so sees
// their counts. No device-side wait is needed (CDP2, the only dynamic parallelism on sm_90,
// has none). A chain of controls is at most `levels_left` long; the last one records where
// it stopped and the host launches the next chain, so the nesting depth stays bounded
// whatever the graph's depth, and the host reads one word per chain instead of per level.
//
// Compiled with -rdc=true (gpu side: kernels.load_module's extra options), for CSR or, with
// MG_PAGED, for a dynamic graph's paged adjacency.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <bfs/kernels/class_servers.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 256
#endif
#ifndef cudaStreamTailLaunch
#define cudaStreamTailLaunch ((cudaStream_t)0x3)
#endif

using namespace mg;
using namespace mg::bfs;

constexpr int BLOCK = MG_BFS_BLOCK;
constexpr int MAX_CHILD_BLOCKS = 65535;

// state[0]: 0 running, 1 finished, 2 the chain ended (resume at state[1]), 3 out of count
// rows (the host grows the table and resumes at state[1]).
enum { RUNNING = 0, FINISHED = 1, RESUME = 2, NEED_ROWS = 3 };

#define MG_DP_CHILD(NAME, SERVE)                                                            \
    extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK) NAME(                       \
        MG_ADJ_PARAMS(graph), const vid_t* queue, const u64* count, int* dist,             \
        vid_t* parent, vid_t* out_queues, u64* out_tails, i64 stride, int next_level,      \
        i64 warp_bound, i64 block_bound, i64 grid_bound, int* error) {                     \
        const ClassLevel level{dist, parent, out_queues, out_tails, stride, next_level,    \
                               ClassBounds{warp_bound, block_bound, grid_bound}, error};   \
        SERVE<BLOCK>(MG_ADJ(graph), queue, (i64)*count, level);                            \
    }

MG_DP_CHILD(bfs_dp_small, serve_small)
MG_DP_CHILD(bfs_dp_medium, serve_medium)
MG_DP_CHILD(bfs_dp_large, serve_large)
MG_DP_CHILD(bfs_dp_huge, serve_huge)

__device__ __forceinline__ unsigned child_blocks(i64 items_per_block, u64 count) {
    const u64 blocks = (count + (u64)items_per_block - 1) / (u64)items_per_block;
    return (unsigned)(blocks < (u64)MAX_CHILD_BLOCKS ? blocks : (u64)MAX_CHILD_BLOCKS);
}

// queues: two sets of 4 class queues of `stride` entries (level L reads set L & 1);
// counts: rows of 4 u64 per level (row L = level L's class lengths), zeroed by the host.
extern "C" __global__ void bfs_dp_control(MG_ADJ_PARAMS(graph), int* dist, vid_t* parent,
                                          vid_t* queues, u64* counts, i64 n_rows, i64 stride,
                                          int level, int levels_left, i64 warp_bound,
                                          i64 block_bound, i64 grid_bound, unsigned huge_blocks,
                                          int* error, int* state) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const u64* here = counts + 4 * (i64)level;
    const u64 n0 = here[0], n1 = here[1], n2 = here[2], n3 = here[3];
    if (n0 + n1 + n2 + n3 == 0) {
        state[0] = FINISHED;
        state[1] = level;
        return;
    }
    if ((i64)level + 2 > n_rows) {  // row L + 1 is written by the children
        state[0] = NEED_ROWS;
        state[1] = level;
        return;
    }
    const vid_t* in = queues + (i64)(level & 1) * 4 * stride;
    vid_t* out = queues + (i64)((level + 1) & 1) * 4 * stride;
    u64* out_tails = counts + 4 * ((i64)level + 1);
    const int next = level + 1;
#ifdef MG_PAGED
#define MG_DP_GRAPH graph_a, graph_b, graph_c
#else
#define MG_DP_GRAPH graph_a, graph_b
#endif
    if (n0)
        bfs_dp_small<<<child_blocks(BLOCK, n0), BLOCK, 0, cudaStreamTailLaunch>>>(
            MG_DP_GRAPH, in, here, dist, parent, out, out_tails, stride, next, warp_bound,
            block_bound, grid_bound, error);
    if (n1)
        bfs_dp_medium<<<child_blocks(BLOCK / 32, n1), BLOCK, 0, cudaStreamTailLaunch>>>(
            MG_DP_GRAPH, in + stride, here + 1, dist, parent, out, out_tails, stride, next,
            warp_bound, block_bound, grid_bound, error);
    if (n2)
        bfs_dp_large<<<child_blocks(1, n2), BLOCK, 0, cudaStreamTailLaunch>>>(
            MG_DP_GRAPH, in + 2 * stride, here + 2, dist, parent, out, out_tails, stride, next,
            warp_bound, block_bound, grid_bound, error);
    if (n3)
        bfs_dp_huge<<<huge_blocks, BLOCK, 0, cudaStreamTailLaunch>>>(
            MG_DP_GRAPH, in + 3 * stride, here + 3, dist, parent, out, out_tails, stride, next,
            warp_bound, block_bound, grid_bound, error);
    if (levels_left > 1) {
        bfs_dp_control<<<1, 1, 0, cudaStreamTailLaunch>>>(
            MG_DP_GRAPH, dist, parent, queues, counts, n_rows, stride, next, levels_left - 1,
            warp_bound, block_bound, grid_bound, huge_blocks, error, state);
    } else {
        state[0] = RESUME;
        state[1] = next;
    }
#undef MG_DP_GRAPH
}
