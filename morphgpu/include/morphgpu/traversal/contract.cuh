// Contract (filter) with Merrill et al.'s duplicate culling (§5.4), as options in front of
// the exact label check + atomicCAS claim of visit.cuh:
//
// - CULL_WARP: a neighbour that another converged lane of the same warp holds at the same
//   moment is dropped by all but the lowest such lane. Merrill hashes into a per-warp
//   shared table (Fermi had no match instruction); __match_any_sync finds the same peers
//   exactly, without shared memory or racing stores.
// - CULL_HISTORY: a per-block table of recently inspected ids in shared memory (direct
//   mapped); an id found there was inspected by a thread of this block that went on to
//   the claim (or found it visited), so it is dropped. Each inspection swaps its id into
//   the slot with a shared-memory atomicExch (cheap on the SM, and no racing plain stores
//   between threads of the block).
// - CULL_BITMASK: Merrill's best-effort visited bitmask, one bit per vertex, checked
//   before the 4-byte label. Bits are set with plain (volatile) read-modify-writes, not
//   atomics: two writers of one word may lose a bit, which only makes the bitmask miss a
//   visited vertex, and the label check behind it catches that. A set bit is never wrong.
//
// Every culled neighbour is one that some thread claims or has claimed; the claim itself
// stays an atomicCAS on the label, so culling removes work (label reads, atomics, queue
// duplicates in the edge-queue variants), never correctness.
#pragma once
#include <morphgpu/bitmap.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/queue.cuh>
#include <morphgpu/traversal/visit.cuh>

namespace mg {
namespace traversal {

enum : int { CULL_BITMASK = 1, CULL_WARP = 2, CULL_HISTORY = 4 };

template <typename T>
__device__ __forceinline__ void store_volatile(T* p, T value) {
    *(volatile T*)p = value;
}

// Per-block history of inspected ids; declare it __shared__ and call clear() (block-wide)
// before the first contract of the launch.
template <int SLOTS>
struct CullHistory {
    static_assert((SLOTS & (SLOTS - 1)) == 0, "SLOTS must be a power of two");
    vid_t slot[SLOTS];

    __device__ void clear() {
        for (int i = threadIdx.x; i < SLOTS; i += blockDim.x) slot[i] = (vid_t)-1;
        __syncthreads();
    }
    __device__ static __forceinline__ unsigned hash(vid_t v) {
        return ((unsigned)(u64)v * 2654435761u) >> (32 - log2_slots());
    }
    __device__ static constexpr int log2_slots() { return ceil_log2(SLOTS); }
    // Records v; true when its slot already held v (cull it).
    __device__ __forceinline__ bool seen_or_record(vid_t v) {
        vid_t* s = slot + hash(v);
        if constexpr (sizeof(vid_t) == sizeof(unsigned long long)) {
            return (vid_t)atomicExch((unsigned long long*)s, (unsigned long long)v) == v;
        } else {
            return (vid_t)atomicExch((unsigned*)s, (unsigned)v) == v;
        }
    }
};

// Best effort, see the header: a concurrent writer of the same word may undo this bit.
__device__ __forceinline__ void set_bit_best_effort(unsigned* bits, vid_t v) {
    unsigned* word = bits + ((i64)v >> 5);
    store_volatile(word, load_volatile(word) | (1u << ((unsigned)v & 31u)));
}

// The filter in front of the claim: false when v can be dropped without a label read.
// Lanes call it converged (warp culling matches among __activemask()).
template <int SLOTS>
__device__ __forceinline__ bool survives_culling(vid_t v, int cull, CullHistory<SLOTS>* history,
                                                 const unsigned* visited_bits) {
    bool keep = true;
    if (cull & CULL_WARP) {
        const unsigned peers = __match_any_sync(__activemask(), v);
        keep = (int)lane_id() == __ffs(peers) - 1;
    }
    if (keep && (cull & CULL_HISTORY) && history) keep = !history->seen_or_record(v);
    if (keep && (cull & CULL_BITMASK) && visited_bits) keep = !test_bit_volatile(visited_bits, (i64)v);
    return keep;
}

// Label check + atomicCAS claim behind the culling; a vertex found visited, or claimed,
// gets its bit in the bitmask.
template <int SLOTS>
__device__ __forceinline__ bool cull_and_claim(int* dist, vid_t v, int next_level, int cull,
                                               CullHistory<SLOTS>* history,
                                               unsigned* visited_bits) {
    if (!survives_culling(v, cull, history, visited_bits)) return false;
    bool mine = false;
    if (load_volatile(dist + v) == -1) mine = atomicCAS(dist + v, -1, next_level) == -1;
    if ((cull & CULL_BITMASK) && visited_bits) set_bit_best_effort(visited_bits, v);
    return mine;
}

// ClaimVisit with the culling options in front (expand-contract's visitor).
template <int SLOTS>
struct CullingClaimVisit {
    int* dist;
    vid_t* parent;  // may be null
    int next_level;
    vid_t* out_queue;
    u64* out_tail;
    int cull;
    CullHistory<SLOTS>* history;  // shared; may be null
    unsigned* visited_bits;       // may be null

    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const bool mine = cull_and_claim(dist, dst, next_level, cull, history, visited_bits);
        if (mine && parent) parent[dst] = src;
        warp_enqueue(out_queue, out_tail, mine, dst);
    }
};

}  // namespace traversal
}  // namespace mg
