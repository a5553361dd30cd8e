// Grid-wide barriers for persistent kernels: every block of the grid must be resident
// (the Python launcher, morphgpu.barrier, sizes the grid from the occupancy calculator).
//
// Usage (the barrier state is the kernel's LAST argument):
//     extern "C" __global__ void k(..., unsigned* barrier_state) {
//         mg::GridBarrier bar(barrier_state);
//         for (...) { work; mg::grid_sync(bar); }
//     }
//
// Three implementations behind one call, mg::grid_sync(bar):
// - the atomic-free barrier of Xiao and Feng (IPDPS 2010, "lock-free synchronization"):
//   each block's leader writes the round's goal into its own slot of `arrive`; block 0
//   waits until every slot holds the goal, then writes the goal into every slot of
//   `release`; each block waits on its own `release` slot. No atomics, so no contention
//   on one address. The paper's version predates caches; here each hand-off is a
//   release/acquire pair at GPU scope (PTX memory model): the writer publishes its flag
//   with st.release (cumulative, so it covers the block's writes that __syncthreads
//   ordered before it); the reader polls with ld.relaxed, then fence.acq_rel, then
//   __syncthreads, so the block's loads after the barrier see every write made before it
//   anywhere in the grid. -DMG_BARRIER_THREADFENCE selects the classic form instead
//   (volatile flags and __threadfence(), i.e. fence.sc), slower; kept for the benchmark.
// - cooperative groups' grid.sync(), when compiled with -DMG_BARRIER_COOP (the kernel must
//   then be launched cooperatively; the Python launcher does that).
// - a counting barrier, -DMG_BARRIER_ATOMIC: each block's leader adds 1 to one counter
//   (state[0]) with a release atomic; the block that brings it to goal * nblocks publishes
//   the goal in one generation word (state[nblocks]) that every leader polls. One hop
//   fewer than Xiao–Feng (no gather by block 0), at the price of nblocks atomics on one
//   address, which today's L2 serves fast; no cooperative launch needed. Counter and
//   goal wrap modulo 2^32 together, so any number of rounds works.
//
// A non-resident block would make the Xiao–Feng barrier wait forever; instead a waiter
// gives up after MG_BARRIER_TIMEOUT_MS (default 20 s) of spinning, writes 1 into the abort
// word, and every later barrier of the launch gives up after at most 1024 polls. Results are
// then meaningless; the host learns it from PersistentGrid.check() (morphgpu/barrier.py)
// instead of hanging.
//
// Layout of the state array (unsigned, 2 * gridDim.x + 1 words, zeroed before each launch):
//   [0, nblocks)          arrive slots
//   [nblocks, 2*nblocks)  release slots
//   [2*nblocks]           abort word (0 = fine, 1 = a barrier timed out)
#pragma once
#include <morphgpu/common.cuh>

#ifdef MG_BARRIER_COOP
#include <cooperative_groups.h>
#endif

#ifndef MG_BARRIER_TIMEOUT_MS
#define MG_BARRIER_TIMEOUT_MS 20000
#endif

namespace mg {

struct GridBarrier {
    unsigned* state;   // 2 * nblocks + 1 words
    unsigned nblocks;
    unsigned goal;     // the round this block is entering; each block keeps its own copy

    __device__ explicit GridBarrier(unsigned* state_) : state(state_), nblocks(gridDim.x), goal(0) {}

    __device__ __forceinline__ volatile unsigned* abort_word() const { return state + 2 * nblocks; }
};

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The flag operations of one hand-off (see the header comment).
__device__ __forceinline__ unsigned flag_poll(const unsigned* p) {
#ifdef MG_BARRIER_THREADFENCE
    return *(const volatile unsigned*)p;
#else
    unsigned v;
    asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
#endif
}
__device__ __forceinline__ void flag_publish(unsigned* p, unsigned v) {
#ifdef MG_BARRIER_THREADFENCE
    __threadfence();
    *(volatile unsigned*)p = v;
#else
    asm volatile("st.release.gpu.u32 [%0], %1;" : : "l"(p), "r"(v) : "memory");
#endif
}
__device__ __forceinline__ void flag_acquired() {
#ifdef MG_BARRIER_THREADFENCE
    __threadfence();
#else
    asm volatile("fence.acq_rel.gpu;" : : : "memory");
#endif
}

// Spin until *slot == goal. False if the barrier was aborted (by this waiter's timeout or
// another's). The clock and the abort word are read only every 1024 polls.
__device__ __forceinline__ bool barrier_wait(const GridBarrier& bar, const unsigned* slot,
                                             unsigned goal) {
    unsigned polls = 0;
    unsigned long long started = 0;
    while (flag_poll(slot) != goal) {
        if ((++polls & 1023u) == 0) {
            if (*bar.abort_word()) return false;
            const unsigned long long now = global_timer_ns();
            if (started == 0) {
                started = now;
            } else if (now - started > (unsigned long long)MG_BARRIER_TIMEOUT_MS * 1000000ull) {
                *bar.abort_word() = 1u;
                return false;
            }
        }
    }
    return true;
}

__device__ __forceinline__ void xiao_feng_sync(GridBarrier& bar) {
    bar.goal += 1;
    const unsigned goal = bar.goal;
    unsigned* arrive = bar.state;
    unsigned* release = bar.state + bar.nblocks;
    // Every thread of the block has finished the round's writes.
    __syncthreads();
    if (threadIdx.x == 0) flag_publish(arrive + blockIdx.x, goal);
    if (blockIdx.x == 0) {
        for (unsigned b = threadIdx.x; b < bar.nblocks; b += blockDim.x) {
            if (!barrier_wait(bar, arrive + b, goal)) break;
        }
        flag_acquired();
        // What each thread of block 0 saw of the others' arrivals (and so of their
        // writes) is ordered, through this __syncthreads and the release stores, before
        // every block's release.
        __syncthreads();
        for (unsigned b = threadIdx.x; b < bar.nblocks; b += blockDim.x) {
            flag_publish(release + b, goal);
        }
    }
    if (threadIdx.x == 0) {
        barrier_wait(bar, release + blockIdx.x, goal);
        flag_acquired();  // later loads of the block see the grid's writes
    }
    __syncthreads();
}

__device__ __forceinline__ void counting_sync(GridBarrier& bar) {
    bar.goal += 1;
    const unsigned goal = bar.goal;
    unsigned* counter = bar.state;
    unsigned* generation = bar.state + bar.nblocks;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned before;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], 1;"
                     : "=r"(before) : "l"(counter) : "memory");
        if (before == goal * bar.nblocks - 1u) {
            // The last arrival; acquire the others' releases before publishing, so the
            // release below carries all of them (cumulativity).
            flag_acquired();
            flag_publish(generation, goal);
        } else {
            barrier_wait(bar, generation, goal);
        }
        flag_acquired();
    }
    __syncthreads();
}

__device__ __forceinline__ void grid_sync(GridBarrier& bar) {
#ifdef MG_BARRIER_COOP
    (void)bar;
    cooperative_groups::this_grid().sync();
#else
#ifdef MG_BARRIER_ATOMIC
    counting_sync(bar);
#else
    xiao_feng_sync(bar);
#endif
#endif
}

}  // namespace mg
