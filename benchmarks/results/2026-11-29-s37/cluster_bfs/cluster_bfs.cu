// Session 37, prepared for the next GPU session (not part of the package): a BFS whose
// whole level loop runs in one thread-block cluster (Hopper: 8 blocks portably), levels
// crossing at cluster.sync() (0.31 us per round on an H200 against grid.sync()'s 1.04; s37
// run 1) instead of a grid barrier, the frontier in block-private queue segments counted in
// each block's own shared memory (no global counter), read by the whole cluster through
// distributed shared memory. It measures the best a cluster tier could do per level on the
// graphs that miss the issue's 3 us (Delaunay graphs of random points: frontiers of a few
// thousand vertices over thousands of levels), before any of it goes into persistent.cu.
// BITMAP=1: vertices are claimed in a visited bitmap spread over the cluster's shared
// memory (a distributed-shared-memory atomicOr) instead of a global compare-and-swap on
// the labels; the bitmap must fit (n / 8 bytes over CLUSTER blocks).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 8
#endif
#ifndef BITMAP
#define BITMAP 0
#endif

typedef long long i64;

// dist: -1 everywhere but source (0), set by the caller; queue_a / queue_b: CLUSTER
// segments of n entries each, segment 0 of queue_a holding the source. words_per_block:
// the bitmap words each block holds (BITMAP). levels_out: the levels searched.
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(1024, 1)
cluster_bfs(const i64* __restrict__ indptr, const int* __restrict__ indices, int* dist,
            int* queue_a, int* queue_b, i64 n, int source, unsigned words_per_block,
            int* levels_out) {
    extern __shared__ unsigned bitmap[];  // BITMAP: this block's share of the visited bits
    __shared__ unsigned counts[3];        // this block's segment length, by level % 3
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank();
    const unsigned tid = rank * blockDim.x + threadIdx.x;
    const unsigned nthreads = CLUSTER * blockDim.x;
    if (threadIdx.x < 3) counts[threadIdx.x] = threadIdx.x == 0 && rank == 0 ? 1u : 0u;
#if BITMAP
    for (unsigned i = threadIdx.x; i < words_per_block; i += blockDim.x) bitmap[i] = 0u;
    __syncthreads();
    const unsigned source_word = (unsigned)source >> 5;
    if (threadIdx.x == 0 && source_word / words_per_block == rank)
        bitmap[source_word - rank * words_per_block] |= 1u << (source & 31);
#endif
    cluster.sync();
    int* in = queue_a;
    int* out = queue_b;
    int level = 0;
    for (;;) {
        const int slot = level % 3, next_slot = (level + 1) % 3;
        unsigned start[CLUSTER + 1];
        start[0] = 0u;
#pragma unroll
        for (int r = 0; r < CLUSTER; ++r)
            start[r + 1] = start[r] + cluster.map_shared_rank(counts, r)[slot];
        const unsigned total = start[CLUSTER];
        if (total == 0u) break;
        for (unsigned i = tid; i < total; i += nthreads) {
            int r = 0;  // the segment holding entry i (selects: no indexed local array)
            unsigned first = 0u;
#pragma unroll
            for (int q = 1; q < CLUSTER; ++q) {
                if (i >= start[q]) {
                    r = q;
                    first = start[q];
                }
            }
            const int v = __ldcg(in + (i64)r * n + (i - first));
            const i64 b = __ldg(indptr + v), e = __ldg(indptr + v + 1);
            for (i64 k = b; k < e; ++k) {
                const int w = __ldg(indices + k);
#if BITMAP
                const unsigned word = (unsigned)w >> 5, bit = 1u << (w & 31);
                const unsigned owner = word / words_per_block;
                unsigned* cell = cluster.map_shared_rank(bitmap, owner) + (word - owner * words_per_block);
                const bool won = !(*(volatile unsigned*)cell & bit) && !(atomicOr(cell, bit) & bit);
                if (won) dist[w] = level + 1;
#else
                const bool won = __ldcg(dist + w) == -1 && atomicCAS(dist + w, -1, level + 1) == -1;
#endif
                if (won) {  // a warp's winners take consecutive places in this block's segment
                    cg::coalesced_group g = cg::coalesced_threads();
                    unsigned at = 0u;
                    if (g.thread_rank() == 0) at = atomicAdd(counts + next_slot, g.size());
                    at = g.shfl(at, 0) + g.thread_rank();
                    out[(i64)rank * n + at] = w;
                }
            }
        }
        // The slot of level + 2 was last read at the top of level - 1, before the barrier
        // that ended it; it is first written during level + 1, after the one below.
        if (threadIdx.x == 0) counts[(level + 2) % 3] = 0u;
        cluster.sync();
        int* t = in;
        in = out;
        out = t;
        ++level;
    }
    // No block may leave while another still reads its counts (the last level's look).
    cluster.sync();
    if (tid == 0) *levels_out = level;
}
