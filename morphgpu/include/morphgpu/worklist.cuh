// Worklists: block-wide prefix sums, one-atomic-per-block enqueues, per-thread and
// per-block local queues, and the contiguous range of items a thread owns.
//
// Why: a global queue with one atomicAdd per pushed item serialises thousands of threads
// on one address. Here a block first agrees, through a prefix sum in shared memory, where
// each of its threads writes, and then ONE thread reserves the block's total with ONE
// atomicAdd; items are then written without further atomics (paper §7.5; Merrill et al.'s
// prefix-sum enqueue).
//
// Contract (shared by every wing; see also morphgpu/worklist.py):
//   template <int BLOCK, typename T> T   block_exclusive_sum(T value, T* block_total)
//   template <int BLOCK>             i64 block_reserve(u64* tail, i64 count)
//   template <typename T, int CAP>            struct LocalWorklist
//   template <typename T, int CAP, int BLOCK> struct BlockWorklist   (declare __shared__)
//   template <typename T = i64>      i64 range_of_thread(i64 n, i64* begin, i64* end)
//
// BLOCK must equal blockDim.x (a multiple of 32, at most 1024): the shared scratch is
// sized from it at compile time. Functions marked "block-wide" must be called by every
// thread of the block, from the same call site, outside divergent code (they contain
// __syncthreads()); they may be called again right away (they end with a barrier).
#pragma once
#include <morphgpu/common.cuh>

namespace mg {

// Inclusive prefix sum over the 32 lanes of a full warp (every lane active).
template <typename T>
__device__ __forceinline__ T warp_inclusive_sum(T value) {
    const unsigned lane = lane_id();
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T other = __shfl_up_sync(0xffffffffu, value, offset);
        if (lane >= (unsigned)offset) value += other;
    }
    return value;
}

// Block-wide. Exclusive prefix sum of `value` over the threads of the block in threadIdx
// order; every thread receives the block's total in *block_total (a per-thread pointer,
// typically to a local variable). T: int, unsigned, long long, unsigned long long, float,
// double.
template <int BLOCK, typename T>
__device__ T block_exclusive_sum(T value, T* block_total) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
                  "BLOCK must be a multiple of 32 in [32, 1024]");
    constexpr int WARPS = BLOCK / 32;
    __shared__ T warp_totals[WARPS];
    const unsigned lane = lane_id();
    const unsigned warp = warp_id();

    const T inclusive = warp_inclusive_sum(value);
    if (lane == 31) warp_totals[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        // WARPS <= 32, so one warp scans the warp totals.
        T total = (lane < (unsigned)WARPS) ? warp_totals[lane] : T(0);
        total = warp_inclusive_sum(total);
        if (lane < (unsigned)WARPS) warp_totals[lane] = total;  // now inclusive per warp
    }
    __syncthreads();
    const T warp_offset = (warp == 0) ? T(0) : warp_totals[warp - 1];
    *block_total = warp_totals[WARPS - 1];
    // A second call must not overwrite warp_totals before every thread has read it.
    __syncthreads();
    return warp_offset + inclusive - value;
}

// Block-wide. Each thread asks for `count` (>= 0) consecutive slots of a global queue
// whose next free slot is *tail; the block makes ONE atomicAdd for its total (none when the
// total is 0). Returns this thread's first slot; its slots are [first, first + count).
// The caller checks first + count against the queue's capacity: *tail keeps counting past
// it, which tells the host how large the queue had to be (kernel-host growth).
template <int BLOCK>
__device__ i64 block_reserve(u64* tail, i64 count) {
    __shared__ u64 block_base;
    i64 total;
    const i64 offset = block_exclusive_sum<BLOCK, i64>(count, &total);
    if (threadIdx.x == 0) block_base = total > 0 ? atomicAdd(tail, (u64)total) : 0ull;
    __syncthreads();
    const i64 first = (i64)block_base + offset;
    __syncthreads();  // block_base is reused by the next call
    return first;
}

// A per-thread stack of at most CAP items, kept in registers when CAP is small and the
// loops that index it unroll, else in local memory. No synchronisation: only its thread
// touches it. push() returns false (and drops nothing: the item was not taken) when full.
template <typename T, int CAP>
struct LocalWorklist {
    static_assert(CAP > 0, "LocalWorklist needs a positive capacity");
    T items[CAP];
    int count;

    __device__ LocalWorklist() : count(0) {}
    __device__ __forceinline__ bool push(const T& item) {
        if (count >= CAP) return false;
        items[count++] = item;
        return true;
    }
    __device__ __forceinline__ bool pop(T& item) {
        if (count == 0) return false;
        item = items[--count];
        return true;
    }
    __device__ __forceinline__ int size() const { return count; }
    __device__ __forceinline__ bool full() const { return count >= CAP; }
    __device__ __forceinline__ bool empty() const { return count == 0; }
};

// A per-block queue of at most CAP items in shared memory; declare it `__shared__`
// (it has no constructor for that reason) and call init() from every thread first.
// push() costs one shared-memory atomic; flush() moves the block's items to a global
// queue with ONE global atomicAdd per block and a coalesced copy, then empties the queue.
template <typename T, int CAP, int BLOCK>
struct BlockWorklist {
    static_assert(CAP > 0, "BlockWorklist needs a positive capacity");
    T items[CAP];
    unsigned count;  // may pass CAP: pushes that found the queue full still count
    u64 base;        // this block's first slot in the global queue during a flush

    // Block-wide.
    __device__ void init() {
        if (threadIdx.x == 0) count = 0;
        __syncthreads();
    }
    // Any thread, any time between init()/flush() calls. False when the queue is full:
    // the item was NOT stored, the caller keeps it (flush and retry, or push_or_spill).
    __device__ __forceinline__ bool push(const T& item) {
        const unsigned slot = atomicAdd(&count, 1u);
        if (slot >= (unsigned)CAP) return false;
        items[slot] = item;
        return true;
    }
    // Like push(), but a full queue sends the item straight to the global queue (one
    // atomic for that item only), so nothing is ever lost. Returns false only when the
    // global queue is full too (its tail still counts the item).
    __device__ __forceinline__ bool push_or_spill(const T& item, T* global_queue, u64* global_tail,
                                                  u64 global_capacity) {
        if (push(item)) return true;
        const u64 slot = atomicAdd(global_tail, 1ull);
        if (slot >= global_capacity) return false;
        global_queue[slot] = item;
        return true;
    }
    // Items currently held; exact once a __syncthreads() separates it from the pushes.
    __device__ __forceinline__ unsigned size() const { return count < (unsigned)CAP ? count : (unsigned)CAP; }

    // Block-wide. Appends the held items to global_queue at *global_tail and empties the
    // queue. Items beyond global_capacity are dropped but still counted in *global_tail,
    // so the host can grow the queue to *global_tail and redo the round; *overflow (if
    // given) is set to 1 then. Returns the number of items this block flushed.
    __device__ unsigned flush(T* global_queue, u64* global_tail,
                              u64 global_capacity = ~0ull, int* overflow = nullptr) {
        __syncthreads();  // every push of the block is done
        const unsigned n = size();
        if (threadIdx.x == 0) {
            base = n > 0 ? atomicAdd(global_tail, (u64)n) : 0ull;
            if (overflow && n > 0 && base + n > global_capacity) *overflow = 1;
        }
        __syncthreads();
        for (unsigned i = threadIdx.x; i < n; i += BLOCK) {
            if (base + i < global_capacity) global_queue[base + i] = items[i];
        }
        __syncthreads();
        if (threadIdx.x == 0) count = 0;
        __syncthreads();
        return n;
    }
};

// The paper's local worklist (§7.5): the n items split into gridDim.x * blockDim.x
// contiguous chunks whose sizes differ by at most one; this thread owns [*begin, *end).
// Contiguous ownership keeps neighbouring elements (after a locality-preserving layout)
// with one thread, which lowers conflicts. Returns *end - *begin. T documents the item
// type and is otherwise unused; call it as range_of_thread(n, &b, &e).
template <typename T = i64>
__device__ __forceinline__ i64 range_of_thread(i64 n, i64* begin, i64* end) {
    const i64 threads = global_stride();
    const i64 t = global_tid();
    const i64 chunk = n / threads;
    const i64 extra = n % threads;  // the first `extra` threads take one item more
    *begin = t * chunk + (t < extra ? t : extra);
    *end = *begin + chunk + (t < extra ? 1 : 0);
    return *end - *begin;
}

}  // namespace mg
