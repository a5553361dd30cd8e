// Recycle allocators for morph algorithms (paper §7.1 subgraph addition, §7.2 deletion).
//
// SlotPool: indices ("slots") into the caller's arrays, e.g. triangle slots in DMR.
//   Freed slots are handed out again before the pool grows (recycling, §7.2); when both
//   the free list and the capacity are used up, slot_alloc() returns -1 and counts the
//   request in *n_wanted. The host then grows (kernel-host, §7.1) by an over-allocation
//   factor and reruns the work of the claimants that got -1 (morphgpu/alloc.py:
//   SlotPool.after_round()). Host-only growth: the host reserves room from a known bound
//   before the kernel (SlotPool.grow_for()).
//
//   Phases: within one phase, a kernel either allocates or frees, never both; a grid
//   barrier or kernel boundary separates them, and slot_pool_compact() (one thread, or the
//   host's after_round()) runs after every allocation phase, before the next free phase.
//
//   Layout: free_slots[0, *n_free) is a stack of freed slots. An allocation phase takes
//   them from the top (the k-th taker gets free_slots[*n_free - 1 - k], so taking is one
//   atomicAdd on *n_taken_free and needs no compaction of the array), then fresh slots
//   from *high_water upward. *n_free does not change during an allocation phase, so every
//   thread reads the same value. Free phases push onto the stack.
//
// ChunkPool: kernel-only allocation (§7.1) of fixed-size chunks for per-node lists that
//   grow, like PTA's incoming edges. A node's list is head[node] -> chunk -> next_chunk[chunk]
//   -> ... (-1 ends it); item i of the node's list is in chunk number i / chunk_size of
//   that walk, at data[chunk * chunk_size + i % chunk_size]. chunk_list_append() lets many
//   threads append to the same node concurrently. Out of chunks: chunk_alloc() returns -1
//   and sets *out_of_chunks; the host grows the pool (alloc.ChunkPool.grow()) and reruns.
#pragma once
#include <morphgpu/common.cuh>

namespace mg {

struct SlotPool {
    i64* free_slots;    // capacity entries; [0, *n_free) are free slots
    u64* n_free;        // size of the free stack (constant during an allocation phase)
    u64* n_taken_free;  // free slots handed out in this allocation phase (may pass *n_free)
    u64* high_water;    // next never-used slot (may pass capacity; compact clamps it)
    u64 capacity;       // slots that exist
    u64* n_wanted;      // requests that found the pool exhausted since the last compact
};

// Build the struct from one u64 counter block [n_free, n_taken_free, high_water, n_wanted]
// (how morphgpu/alloc.py stores them; its device_struct() passes the same pieces).
__device__ __forceinline__ SlotPool make_slot_pool(i64* free_slots, u64* counters, u64 capacity) {
    SlotPool p;
    p.free_slots = free_slots;
    p.n_free = counters;
    p.n_taken_free = counters + 1;
    p.high_water = counters + 2;
    p.capacity = capacity;
    p.n_wanted = counters + 3;
    return p;
}

// Allocation phase. A recycled slot if any is left, else a fresh one below capacity,
// else -1 (and the request is counted in *n_wanted).
__device__ __forceinline__ i64 slot_alloc(SlotPool& pool) {
    const u64 n_free = load_volatile(pool.n_free);
    if (load_volatile(pool.n_taken_free) < n_free) {
        const u64 k = atomicAdd(pool.n_taken_free, 1ull);
        if (k < n_free) return pool.free_slots[n_free - 1 - k];
    }
    const u64 fresh = atomicAdd(pool.high_water, 1ull);
    if (fresh < pool.capacity) return (i64)fresh;
    atomicAdd(pool.n_wanted, 1ull);
    return -1;
}

// Free phase. Gives `slot` back for recycling. Each slot must be freed at most once per
// allocation (the stack has room for every slot exactly once).
__device__ __forceinline__ void slot_free(SlotPool& pool, i64 slot) {
    const u64 at = atomicAdd(pool.n_free, 1ull);
    pool.free_slots[at] = slot;
}

// Between phases, by ONE thread (or the host): drops the taken slots from the free stack
// and clamps the counters. *n_wanted is left for the host to read; it clears it.
__device__ __forceinline__ void slot_pool_compact(SlotPool& pool) {
    const u64 n_free = *pool.n_free;
    const u64 taken = *pool.n_taken_free;
    *pool.n_free = taken < n_free ? n_free - taken : 0ull;
    *pool.n_taken_free = 0ull;
    if (*pool.high_water > pool.capacity) *pool.high_water = pool.capacity;
}

struct ChunkPool {
    int* data;              // n_chunks * chunk_size items
    i64* next_chunk;        // per chunk: the next chunk of the same list, -1 at the end
    u64* n_chunks_used;     // chunks handed out (may pass n_chunks when exhausted)
    u64 n_chunks;           // chunks that exist
    int chunk_size;         // items per chunk
    int* out_of_chunks;     // set to 1 when a request found the pool exhausted
};

// Any thread, any time: a fresh chunk (its next_chunk is reset to -1), or -1 with
// *out_of_chunks = 1 when the pool is exhausted.
__device__ __forceinline__ i64 chunk_alloc(ChunkPool& pool) {
    const u64 c = atomicAdd(pool.n_chunks_used, 1ull);
    if (c >= pool.n_chunks) {
        *pool.out_of_chunks = 1;
        return -1;
    }
    pool.next_chunk[c] = -1;
    return (i64)c;
}

// Link values while a list grows: -1 = no chunk yet (the appender that owns the chunk's
// first slot will allocate it), CHUNK_FAILED = that allocation failed.
constexpr i64 CHUNK_FAILED = -2;

// Appends `value` to node's list. head[] holds -1 for empty lists (the host initialises
// it); size[] counts the items appended (int, unsigned or u64). Many threads may append to
// the same node at once: each takes a position with one atomicAdd on size[node]; the one
// whose position starts a chunk allocates it and links it, and others that need that chunk
// wait for the link (safe on sm_70+, where threads of a warp progress independently).
// Returns false when the pool ran out: the item is not stored, *out_of_chunks is set,
// and size[node] counts it anyway. The host then grows the pool and redoes the round
// from the lists' previous state.
template <typename SizeT>
__device__ bool chunk_list_append(ChunkPool& pool, i64* head, SizeT* size, i64 node, int value) {
    const i64 position = (i64)atomicAdd(&size[node], (SizeT)1);
    const i64 chunk_number = position / pool.chunk_size;
    const int offset = (int)(position % pool.chunk_size);
    i64* link = &head[node];
    for (i64 k = 0;; ++k) {
        if (k == chunk_number && offset == 0) {
            // This thread owns the chunk's first slot, so it is the only one allocating it.
            const i64 fresh = chunk_alloc(pool);
            if (fresh < 0) {
                __threadfence();
                *(volatile i64*)link = CHUNK_FAILED;
                return false;
            }
            pool.data[fresh * pool.chunk_size] = value;
            // The reset next_chunk (and the item) are visible before the link.
            __threadfence();
            *(volatile i64*)link = fresh;
            return true;
        }
        i64 chunk;
        while ((chunk = load_volatile(link)) == -1) { }
        if (chunk == CHUNK_FAILED) return false;
        __threadfence();
        if (k == chunk_number) {
            pool.data[chunk * pool.chunk_size + offset] = value;
            return true;
        }
        link = &pool.next_chunk[chunk];
    }
}

// Item `index` of node's list (index < the node's size, after a barrier following the
// appends). Walks index / chunk_size links.
__device__ __forceinline__ int chunk_list_get(const ChunkPool& pool, const i64* head, i64 node,
                                              i64 index) {
    i64 chunk = head[node];
    for (i64 k = index / pool.chunk_size; k > 0; --k) chunk = pool.next_chunk[chunk];
    return pool.data[chunk * pool.chunk_size + index % pool.chunk_size];
}

}  // namespace mg
