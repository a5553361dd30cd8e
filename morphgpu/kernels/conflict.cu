// Array-level conflict resolution (morphgpu.conflict.claim) and a persistent probe that runs
// the three phases round after round until every claim is served (tests, sanitizer).
//
// Claimant i claims elements[offsets[i] : offsets[i+1]] (CSR neighbourhoods, i64 indices).
#include <morphgpu/barrier.cuh>
#include <morphgpu/conflict.cuh>

namespace {

__device__ __forceinline__ mg::u64 mark_of(mg::i64 claimant, const unsigned* priorities,
                                           int use_priorities, mg::i64 round) {
    const unsigned priority =
        use_priorities ? priorities[claimant] : mg::claim_priority((mg::u64)round, (mg::u64)claimant);
    return mg::claim_mark(priority, (unsigned)claimant);
}

}  // namespace

// One kernel per phase: the kernel boundary is the barrier between phases.
extern "C" __global__ void claim_race(const mg::i64* offsets, const mg::i64* elements,
                                      const unsigned* priorities, int use_priorities,
                                      mg::i64 n_claimants, mg::i64 round, mg::u64* marks) {
    for (mg::i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
        const mg::i64 begin = offsets[i];
        mg::conflict_race(marks, elements + begin, (int)(offsets[i + 1] - begin),
                          mark_of(i, priorities, use_priorities, round));
    }
}

extern "C" __global__ void claim_prioritymax(const mg::i64* offsets, const mg::i64* elements,
                                             const unsigned* priorities, int use_priorities,
                                             mg::i64 n_claimants, mg::i64 round, mg::u64* marks) {
    for (mg::i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
        const mg::i64 begin = offsets[i];
        mg::conflict_prioritymax(marks, elements + begin, (int)(offsets[i + 1] - begin),
                                 mark_of(i, priorities, use_priorities, round));
    }
}

extern "C" __global__ void claim_check(const mg::i64* offsets, const mg::i64* elements,
                                       const unsigned* priorities, int use_priorities,
                                       mg::i64 n_claimants, mg::i64 round, const mg::u64* marks,
                                       bool* winners) {
    for (mg::i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
        const mg::i64 begin = offsets[i];
        winners[i] = mg::conflict_check(marks, elements + begin, (int)(offsets[i + 1] - begin),
                                        mark_of(i, priorities, use_priorities, round));
    }
}

// Persistent probe: every unserved claimant races for its hood each round (the early-exit
// prioritycheck of the contract); winners record the round in served_round[i] (initially
// -1). Rounds continue until no claimant is left or max_rounds pass; *rounds_used gets the
// count. One claimant per thread slot, grid-stride.
extern "C" __global__ void claim_until_served(const mg::i64* offsets, const mg::i64* elements,
                                              mg::i64 n_claimants, int max_rounds, mg::u64* marks,
                                              int* served_round, unsigned long long* unserved,
                                              int* rounds_used, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    // unserved[r % 3] counts claimants left after round r. Round r clears the word of round
    // r + 1, which was last read at the end of round r - 2: two barriers ago.
    int round = 0;
    for (; round < max_rounds; ++round) {
        if (mg::global_tid() == 0) unserved[(round + 1) % 3] = 0ull;
        for (mg::i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
            if (served_round[i] >= 0) continue;
            const mg::i64 begin = offsets[i];
            const mg::u64 mark = mg::claim_mark(mg::claim_priority(round, i), (unsigned)i);
            mg::conflict_race(marks, elements + begin, (int)(offsets[i + 1] - begin), mark);
        }
        mg::grid_sync(bar);
        for (mg::i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
            if (served_round[i] >= 0) continue;
            const mg::i64 begin = offsets[i];
            const mg::u64 mark = mg::claim_mark(mg::claim_priority(round, i), (unsigned)i);
            mg::conflict_prioritycheck(marks, elements + begin, (int)(offsets[i + 1] - begin), mark);
        }
        mg::grid_sync(bar);
        unsigned long long left = 0;
        for (mg::i64 i = mg::global_tid(); i < n_claimants; i += mg::global_stride()) {
            if (served_round[i] >= 0) continue;
            const mg::i64 begin = offsets[i];
            const mg::u64 mark = mg::claim_mark(mg::claim_priority(round, i), (unsigned)i);
            if (mg::conflict_check(marks, elements + begin, (int)(offsets[i + 1] - begin), mark)) {
                served_round[i] = round;
            } else {
                ++left;
            }
        }
        if (left) atomicAdd(&unserved[round % 3], left);
        mg::grid_sync(bar);
        if (mg::load_volatile(&unserved[round % 3]) == 0ull) {
            ++round;
            break;
        }
    }
    if (mg::global_tid() == 0) *rounds_used = round;
}
