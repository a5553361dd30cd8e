// Probabilistic 3-phase conflict resolution: race, prioritycheck, check (paper §7.3).
//
// Claimants (threads, bad triangles, cavities...) each want exclusive use of a
// neighbourhood ("hood"): a list of element indices into a `marks` array (one u64 per
// element, e.g. per triangle). In a round:
//
//   phase 1  conflict_race(marks, hood, n, mark)           plain stores of the mark
//   -------  grid barrier (mg::grid_sync) or kernel boundary
//   phase 2  conflict_prioritycheck(marks, hood, n, mark)  atomicMax of the mark
//   -------  grid barrier or kernel boundary
//   phase 3  conflict_check(marks, hood, n, mark)          read-only: do I own all of it?
//
// A claimant whose check returns true owns its whole hood for the rest of the round.
//
// Guarantees (for the claimants that run all three phases of one round with distinct
// marks; stale marks of earlier rounds do not matter because phase 1 overwrites every
// element that anyone claims this round):
// - Safety: winners' hoods are pairwise disjoint, since an element holds one mark after
//   phase 2 and a winner needs its own mark on every element of its hood.
// - Progress: the claimant with the highest mark among those whose hoods overlap
//   (transitively) always wins: atomicMax never meets a higher mark on its hood, so its
//   mark ends on all of it. So every round with a non-empty claim has a winner; this is
//   why phase 2 uses atomicMax, not the paper's read-compare-write (which, with three or
//   more overlapping hoods, can make every claimant back off).
// - Fairness: marks are (priority << 32) | claimant, with a per-round hashed priority
//   (claim_priority), so the same claimant does not lose round after round.
//
// Claimant ids must be below 2^32 and distinct within a round (they break ties, and a
// mark must identify one claimant). The hood index type is any integer type (i64 for the
// contract; int, vid_t or eid_t work as well). An empty hood always wins and touches
// nothing. Duplicated indices in one hood are harmless.
#pragma once
#include <morphgpu/common.cuh>
#include <morphgpu/hash.cuh>

namespace mg {

// A 32-bit mix of (round, claimant) (the lowbias32 finaliser on a combined key), so the
// order of claimants changes from round to round.
__device__ __host__ __forceinline__ unsigned claim_priority(u64 round, u64 claimant) {
    u64 x = round * 0x9E3779B97F4A7C15ull ^ (claimant + 0x632BE59BD9B4E019ull);
    x ^= x >> 32;
    return mix32((unsigned)x);
}

// The mark a claimant writes: higher priority wins, ties broken by the claimant id.
__device__ __host__ __forceinline__ u64 claim_mark(unsigned priority, unsigned claimant) {
    return ((u64)priority << 32) | (u64)claimant;
}

// The claimant id stored in a mark (e.g. to find who won an element).
__device__ __host__ __forceinline__ unsigned mark_claimant(u64 mark) { return (unsigned)mark; }

// Phase 1: write `mark` on every element of the hood (plain 64-bit stores; the last
// writer wins, which is fine: phase 2 settles it).
template <typename Index>
__device__ __forceinline__ void conflict_race(u64* marks, const Index* hood, int hood_size,
                                              u64 mark) {
    for (int i = 0; i < hood_size; ++i) marks[hood[i]] = mark;
}

// Phase 2: atomicMax of `mark` on every element of the hood. Returns false as soon as an
// element holds a higher mark (this claimant has lost; it stops early and may skip phase
// 3). True means "not lost yet": phase 3 decides.
template <typename Index>
__device__ __forceinline__ bool conflict_prioritycheck(u64* marks, const Index* hood,
                                                       int hood_size, u64 mark) {
    for (int i = 0; i < hood_size; ++i) {
        if (atomicMax(&marks[hood[i]], mark) > mark) return false;
    }
    return true;
}

// Phase 2 without the early exit: atomicMax on the whole hood. After the phase every
// claimed element holds the highest mark among ALL its claimants, so the winners are a
// deterministic function of the marks (no dependence on thread timing); morphgpu.conflict.claim
// uses it so that the GPU and the NumPy path agree exactly. Costs more atomics than
// conflict_prioritycheck when many claimants lose.
template <typename Index>
__device__ __forceinline__ void conflict_prioritymax(u64* marks, const Index* hood, int hood_size,
                                                     u64 mark) {
    for (int i = 0; i < hood_size; ++i) atomicMax(&marks[hood[i]], mark);
}

// Phase 3 (read-only): true iff every element of the hood still holds `mark`. The loads
// are volatile so that a value cached in L1 before the barrier is not used.
template <typename Index>
__device__ __forceinline__ bool conflict_check(const u64* marks, const Index* hood,
                                               int hood_size, u64 mark) {
    for (int i = 0; i < hood_size; ++i) {
        if (load_volatile(&marks[hood[i]]) != mark) return false;
    }
    return true;
}

}  // namespace mg
