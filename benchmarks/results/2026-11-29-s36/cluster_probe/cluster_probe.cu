// Session 36, prepared for the next GPU session (not part of the package): what a level
// barrier costs inside one thread-block cluster (Hopper: up to 8 blocks portably), the
// tier between persistent.cu's block 0 alone (no barrier, one SM's throughput) and the
// whole grid (a grid barrier per level). Delaunay graphs run 4.6-6.0 us per level against
// the issue's 3: their frontiers are too wide for one block and too narrow to pay for the
// grid's barrier. If a cluster barrier costs well under a microsecond, a cluster tier of
// 8 SMs is worth building. CLUSTER: the cluster's size in blocks (a define).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#ifndef CLUSTER
#define CLUSTER 8
#endif

// `rounds` cluster barriers and nothing else.
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)
cluster_sync_rounds(int rounds, unsigned* sink) {
    cg::cluster_group cluster = cg::this_cluster();
    for (int r = 0; r < rounds; ++r) cluster.sync();
    if (threadIdx.x == 0 && cluster.block_rank() == 0) atomicAdd(sink, 1u);
}

// A level's worth of cluster traffic per round: every block adds to a counter in block
// 0's shared memory (distributed shared memory), a barrier, every thread reads the sum,
// a barrier. out[block] = the sums seen by its thread 0 (rounds * CLUSTER when right).
extern "C" __global__ void __cluster_dims__(CLUSTER, 1, 1)
cluster_dsmem_rounds(int rounds, unsigned* out) {
    __shared__ unsigned counter[2];
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x < 2) counter[threadIdx.x] = 0u;
    cluster.sync();
    unsigned* home = cluster.map_shared_rank(counter, 0);
    unsigned seen = 0u;
    for (int r = 0; r < rounds; ++r) {
        const int slot = r & 1;
        if (threadIdx.x == 0) atomicAdd(home + slot, 1u);
        cluster.sync();
        seen += home[slot];
        // The other slot is next round's; nobody reads it before the barrier below.
        if (threadIdx.x == 0 && cluster.block_rank() == 0) home[slot ^ 1] = 0u;
        cluster.sync();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = seen;
}
