// Grid-wide barriers for persistent kernels: every block of the grid must be resident
// (the Python launcher, morphgpu.barrier, sizes the grid from the occupancy calculator).
//
// Two implementations behind one call, mg::grid_sync(bar):
// - the atomic-free barrier of Xiao and Feng (IPDPS 2010, "lock-free synchronization"):
//   each block's leader writes the round's goal into its own slot of `arrive`; block 0
//   waits until every slot holds the goal, then writes the goal into every slot of
//   `release`; each block waits on its own `release` slot. No atomics, so no contention
//   on one address; __threadfence() makes each block's writes before the barrier visible
//   to every block after it (the paper's version predates caches coherent only at L2).
// - cooperative groups' grid.sync(), when compiled with -DMG_BARRIER_COOP (the kernel must
//   then be launched cooperatively; the Python launcher does that).
//
// Layout of the state array (unsigned, 2 * gridDim.x words, zeroed before each launch):
//   [0, nblocks)          arrive slots
//   [nblocks, 2*nblocks)  release slots
#pragma once
#include <morphgpu/common.cuh>

#ifdef MG_BARRIER_COOP
#include <cooperative_groups.h>
#endif

namespace mg {

struct GridBarrier {
    unsigned* state;   // 2 * nblocks words
    unsigned nblocks;
    unsigned goal;     // the round this block is entering; each block keeps its own copy

    __device__ explicit GridBarrier(unsigned* state_) : state(state_), nblocks(gridDim.x), goal(0) {}
};

__device__ __forceinline__ void xiao_feng_sync(GridBarrier& bar) {
    bar.goal += 1;
    const unsigned goal = bar.goal;
    volatile unsigned* arrive = bar.state;
    volatile unsigned* release = bar.state + bar.nblocks;
    // Every thread's writes of this round are ordered before the leader's arrival.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) arrive[blockIdx.x] = goal;
    if (blockIdx.x == 0) {
        for (unsigned b = threadIdx.x; b < bar.nblocks; b += blockDim.x) {
            while (arrive[b] != goal) { }
        }
        __syncthreads();
        // What block 0 saw of the others' writes is ordered before the release.
        __threadfence();
        for (unsigned b = threadIdx.x; b < bar.nblocks; b += blockDim.x) release[b] = goal;
    }
    if (threadIdx.x == 0) {
        while (release[blockIdx.x] != goal) { }
    }
    __syncthreads();
    // Reads after the barrier must not be satisfied from a stale L1 line.
    __threadfence();
}

__device__ __forceinline__ void grid_sync(GridBarrier& bar) {
#ifdef MG_BARRIER_COOP
    (void)bar;
    cooperative_groups::this_grid().sync();
#else
    xiao_feng_sync(bar);
#endif
}

}  // namespace mg
