// Probe kernels for include/morphgpu/worklist.cuh (tests, sanitizer runs).
#include <morphgpu/worklist.cuh>

#ifndef WL_BLOCK
#define WL_BLOCK 256
#endif

namespace {

// Whether item i is pushed, and how many copies a thread asks for: a cheap hash so the
// counts are irregular (some threads push nothing, some several items).
__device__ __forceinline__ unsigned item_hash(mg::u64 x, unsigned salt) {
    x = (x + salt) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (unsigned)x;
}

}  // namespace

// Each thread of each call pushes counts[t] = hash % (max_per_thread + 1) items through
// block_reserve. Item code: ((call * gridDim.x + block) * blockDim.x + thread) * 64 + k.
// A queue in which each (call, block) forms one contiguous run shows one reservation per
// block per call. tail counts past capacity; items beyond it are dropped.
extern "C" __global__ void reserve_push(int calls, int max_per_thread, unsigned salt,
                                        mg::i64* queue, mg::u64* tail, mg::u64 capacity) {
    for (int call = 0; call < calls; ++call) {
        const mg::i64 code = ((mg::i64)call * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x;
        const int count = (int)(item_hash((mg::u64)code, salt) % (unsigned)(max_per_thread + 1));
        const mg::i64 first = mg::block_reserve<WL_BLOCK>(tail, count);
        for (int k = 0; k < count; ++k) {
            if ((mg::u64)(first + k) < capacity) queue[first + k] = code * 64 + k;
        }
    }
}

// Exclusive sums of values[] per block (checks block_exclusive_sum against NumPy).
extern "C" __global__ void block_scan(const long long* values, mg::i64 n, long long* prefix,
                                     long long* totals) {
    const mg::i64 i = mg::global_tid();
    long long total;
    const long long v = i < n ? values[i] : 0ll;
    const long long p = mg::block_exclusive_sum<WL_BLOCK, long long>(v, &total);
    if (i < n) prefix[i] = p;
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// Items [0, n): each thread takes its range (range_of_thread), keeps the items with
// hash % 3 != 0 in a LocalWorklist (flushing into the block queue when it fills), pushes
// them into a small shared BlockWorklist (push_or_spill when full) and flushes it every
// round. owner[i] = the thread that owned item i. The queue ends with each kept item
// exactly once.
extern "C" __global__ void local_block_push(mg::i64 n, unsigned salt, mg::i64* owner,
                                            mg::i64* queue, mg::u64* tail, mg::u64 capacity,
                                            int* overflow) {
    constexpr int LOCAL_CAP = 4;
    constexpr int SHARED_CAP = 64;  // small, so that push_or_spill is exercised
    __shared__ mg::BlockWorklist<mg::i64, SHARED_CAP, WL_BLOCK> block_queue;
    block_queue.init();
    mg::i64 begin, end;
    mg::range_of_thread(n, &begin, &end);
    mg::LocalWorklist<mg::i64, LOCAL_CAP> local;
    // Every thread loops the same number of times (flush is block-wide).
    const mg::i64 per_thread = (n + mg::global_stride() - 1) / mg::global_stride();
    for (mg::i64 step = 0; step < per_thread; ++step) {
        const mg::i64 i = begin + step;
        if (i < end) {
            owner[i] = mg::global_tid();
            if (item_hash((mg::u64)i, salt) % 3u != 0u) local.push(i);
        }
        if (local.full() || step + 1 == per_thread) {
            mg::i64 item;
            while (local.pop(item)) {
                if (!block_queue.push_or_spill(item, queue, tail, capacity)) *overflow = 1;
            }
        }
        block_queue.flush(queue, tail, capacity, overflow);
    }
}
