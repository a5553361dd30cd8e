// The local search, in two kernels: conflict-free parallel rounds, then (only when their
// budget runs out) a sequential tail.
//
// ls_state: per clause its true-literal count and the xor of (variable + 1) over its true
// literals (so a clause with one true literal names it), and the break counts (clauses a
// variable alone satisfies).
//
// ls_rounds: the NumPy twin is morphgpu/sp/walk.py (conflict_free_walk); one persistent
// kernel, two phases per round separated by mg::grid_sync, a group of LS_GROUP lanes per
// unsatisfied clause of the round's list (see ls_rounds):
//   propose  the group proposes one movable variable of its clause (a freebie, break 0,
//            when it has one, else a probSAT pick weighted by table[min(break, 63)]),
//            appends the clause to the next list (one atomic per block,
//            mg::block_reserve) and raises its mark on the variable's clauses with
//            atomicMax, each lane on its share (conflict.cuh's prioritycheck phase; the
//            race phase is not needed, see "Round-tagged marks");
//   flip     check (conflict.cuh phase 3); a winner flips its variable and updates the
//            counts of the variable's clauses, each lane its share. The group keeps its
//            proposal, its share of the hood and the variable's value in registers
//            across the barrier. Winners share no clause, so each clause has at most one
//            writer in the phase and plain stores suffice there; break counts of other
//            variables are atomicAdds, since many clauses may touch one variable.
// Round-tagged marks: a mark's priority holds the round (its low ROUND_TAG_BITS bits) in
// its top bits, so every mark of a round is above every mark left from earlier rounds
// and atomicMax alone leaves on each claimed clause the highest mark of this round's
// claimants: the race phase (plain stores that overwrite stale marks) and its grid
// barrier go. The winners are the same as with race + prioritycheck for the same
// priorities. When the tag wraps (every 2^ROUND_TAG_BITS rounds) the marks are cleared.
// After the propose phase's barrier every thread reads the same proposal count (= the
// unsatisfied clauses) and stuck flag, so all threads leave the loop together.
//
// ls_tail: sequential probSAT, one flip at a time, in ONE warp with a device-side loop
// over flips: a random clause from the list of unsatisfied ones, the break counts of its
// candidates (a group of lanes over each candidate's clause list, a group sum), a weighted pick, then
// the flip (lanes over the flipped variable's clauses update their true counts; lane 0
// keeps the unsatisfied list, swap-removing and appending, in ballot order).
//
// Randomness is a counter-based hash of (seed, round or flip, item): no RNG state to keep.
#include <morphgpu/common.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/conflict.cuh>
#include <morphgpu/worklist.cuh>

using mg::eid_t;
using mg::i64;
using mg::u64;
using mg::vid_t;

#define BREAK_TABLE_SIZE 64

__device__ __forceinline__ double uniform_hash(u64 seed, u64 round, u64 item) {
    u64 x = seed * 0x9E3779B97F4A7C15ull + round * 0xBF58476D1CE4E5B9ull + item;
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27; x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

#ifndef LS_BLOCK
#define LS_BLOCK 256
#endif
// A proposal's 32-bit claim priority: the round tag, then the freebie bit, then the top
// bits of the hashed (round, clause) priority (walk.py builds the same without the tag,
// which is the same for every claimant of a round).
#define ROUND_TAG_BITS 20
#define ROUND_TAG_MASK ((1u << ROUND_TAG_BITS) - 1u)
#define FREEBIE_BIT (1u << (31 - ROUND_TAG_BITS))
#define FULL_WARP 0xffffffffu
// Lanes per proposal in the claim and flip phases (a power of two, at most 32): a round is
// latency-bound (a few hundred proposals), so a hood (~13 clauses at K=3, ratio 4.2) is
// walked by several lanes at once rather than by one thread in sequence.
#ifndef LS_GROUP
#define LS_GROUP 8
#endif
#define GROUPS_PER_WARP (32 / LS_GROUP)

// LS_WIDTH, when the host defines it (clause widths up to 8), makes the clause width a
// constant in propose: its loops over the clause's literals unroll, so the loads of the
// literals and of their break counts are issued together instead of one chain per literal.
#ifdef LS_WIDTH
#define CLAUSE_WIDTH(w) LS_WIDTH
#else
#define CLAUSE_WIDTH(w) (w)
#endif

// Launch over the clauses with breaks zeroed.
extern "C" __global__ void ls_state(
    i64 n_clauses, int width, const vid_t* __restrict__ lit_var,
    const signed char* __restrict__ lit_neg, const unsigned char* __restrict__ values,
    int* true_count, vid_t* true_xor, int* breaks)
{
    for (i64 a = mg::global_tid(); a < n_clauses; a += mg::global_stride()) {
        const i64 base = a * width;
        int count = 0;
        vid_t tags = 0;
        for (int j = 0; j < width; ++j) {
            const vid_t v = lit_var[base + j];
            if (v < 0) continue;
            if ((values[v] != 0) != (lit_neg[base + j] != 0)) { count += 1; tags ^= v + 1; }
        }
        true_count[a] = count;
        true_xor[a] = tags;
        if (count == 1) atomicAdd(breaks + (tags - 1), 1);
    }
}

// Proposals whose state a group keeps in registers from the propose phase to the flip
// phase (its first LS_HELD clauses of a round; the rest go through prop_var / prop_mark),
// and hood entries per lane kept there (a lane's share of a hood beyond them is reloaded).
#ifndef LS_HELD
#define LS_HELD 2
#endif
#define HOOD_REGS 4

// The proposal of unsatisfied clause a, made by the LS_GROUP lanes of a group: lane q
// loads literals q, q + LS_GROUP, ... (and their frozen flags and break counts) at once,
// then every lane walks the literals in order through shuffles, so the sums and the pick
// are the sequential ones (walk.py's order): a freebie (uniformly among them) if a has
// one, else a pick weighted by break count. Every lane of the warp calls it (full-mask
// shuffles; `active` false for a group without an unsatisfied clause). Returns -1 when
// inactive or when no variable of a may move.
__device__ __forceinline__ vid_t propose_group(
    bool active, i64 a, int width, int share, int group_first, const vid_t* lit_var,
    const int* breaks, const unsigned char* frozen, const double* weight_table, u64 seed,
    u64 round, bool* freebie)
{
    width = CLAUSE_WIDTH(width);
    const i64 base = a * width;
    // Chunk 0's literal stays in registers for the second pass (the only chunk for K <= 8).
    vid_t v0 = -1;
    int b0 = 0;
    int n_freebies = 0;
    double total = 0.0;
    for (int j0 = 0; j0 < width; j0 += LS_GROUP) {
        const int j = j0 + share;
        vid_t v = -1;
        int b = 0;
        if (active && j < width) {
            v = lit_var[base + j];
            if (v >= 0 && frozen[v]) v = -1;
            if (v >= 0) b = breaks[v];
        }
        if (j0 == 0) { v0 = v; b0 = b; }
        const int span = min(LS_GROUP, width - j0);
        for (int t = 0; t < span; ++t) {
            const vid_t vt = __shfl_sync(FULL_WARP, v, group_first + t);
            const int bt = __shfl_sync(FULL_WARP, b, group_first + t);
            if (vt < 0) continue;
            n_freebies += bt == 0;
            total += weight_table[min(bt, BREAK_TABLE_SIZE - 1)];
        }
    }
    *freebie = n_freebies > 0;
    const bool go = active && total > 0.0;
    const double u = go ? uniform_hash(seed, round, (u64)a) : 0.0;
    int left = n_freebies > 0 ? min((int)(u * n_freebies), n_freebies - 1) : 0;
    double rest = u * total;
    vid_t chosen = -1;
    bool done = !go;
    for (int j0 = 0; j0 < width; j0 += LS_GROUP) {
        vid_t v = v0;
        int b = b0;
        if (j0 > 0) {
            const int j = j0 + share;
            v = -1;
            b = 0;
            if (go && j < width) {
                v = lit_var[base + j];
                if (v >= 0 && frozen[v]) v = -1;
                if (v >= 0) b = breaks[v];
            }
        }
        const int span = min(LS_GROUP, width - j0);
        for (int t = 0; t < span; ++t) {
            const vid_t vt = __shfl_sync(FULL_WARP, v, group_first + t);
            const int bt = __shfl_sync(FULL_WARP, b, group_first + t);
            if (done || vt < 0) continue;
            if (n_freebies > 0) {
                if (bt != 0) continue;
                chosen = vt;
                if (left-- == 0) done = true;
            } else {
                chosen = vt;
                rest -= weight_table[min(bt, BREAK_TABLE_SIZE - 1)];
                if (rest < 0.0) done = true;
            }
        }
    }
    return go ? chosen : -1;
}

// Lane q's contiguous share [*begin, *begin + *size) of a hood of d entries at off, when
// a group of LS_GROUP lanes works on it (so conflict.cuh's loops run on shares).
__device__ __forceinline__ void group_share(i64 off, i64 d, int q, i64* begin, int* size) {
    const i64 chunk = (d + LS_GROUP - 1) / LS_GROUP;
    const i64 first = min(off + q * chunk, off + d);
    *begin = first;
    *size = (int)(min(first + chunk, off + d) - first);
}

// Flipping a winner v to `now`, on one of its clauses c (where v occurs positively or
// not): no other winner shares c, and v occurs once in c, so c has one writer and plain
// stores suffice; break counts of other variables are atomicAdds; *own_change collects
// v's own break change; a clause made false is appended to next_list (at *next_count).
__device__ __forceinline__ void flip_clause(
    vid_t tag, bool now, eid_t c, bool positive, int* true_count, vid_t* true_xor,
    int* breaks, eid_t* next_list, u64* next_count, int* own_change)
{
    const int before = true_count[c];
    const vid_t tags = true_xor[c] ^ tag;  // the xor after the flip
    true_xor[c] = tags;
    if (positive == now) {  // its literal became true
        true_count[c] = before + 1;
        if (before == 0) *own_change += 1;  // v alone satisfies c now
        else if (before == 1) atomicAdd(breaks + ((tags ^ tag) - 1), -1);  // the former sole one
    } else {
        true_count[c] = before - 1;
        if (before == 1) {  // c is false now
            *own_change -= 1;
            next_list[atomicAdd(next_count, 1ull)] = c;
        } else if (before == 2) {
            atomicAdd(breaks + (tags - 1), 1);  // the other one is sole now
        }
    }
}

// One lane's share of flipping v to `now`, loaded from the hood arrays.
__device__ __forceinline__ void flip_share(
    vid_t v, bool now, i64 begin, int size, const eid_t* var_clauses,
    const unsigned char* var_positive, int* true_count, vid_t* true_xor, int* breaks,
    eid_t* next_list, u64* next_count)
{
    int own_change = 0;
    for (int i = 0; i < size; ++i) {
        const i64 k = begin + i;
        flip_clause(v + 1, now, var_clauses[k], var_positive[k] != 0, true_count, true_xor,
                    breaks, next_list, next_count, &own_change);
    }
    if (own_change != 0) atomicAdd(breaks + v, own_change);
}

// A proposal a group holds from its propose phase to its flip phase; each lane keeps its
// share of the hood (the first HOOD_REGS clauses and their signs) and v's value after a
// flip (read before the barrier: only v's winner writes it, in the flip phase).
struct HeldProposal {
    vid_t v;  // -1: none
    bool now;
    int size;
    i64 begin;
    u64 mark;
    unsigned positive;  // bit i: v occurs positively in hood[i]
    eid_t hood[HOOD_REGS];
};

// Group-wide claim of proposal (v, mark): each lane raises the mark on its share of v's
// clauses, keeping the first HOOD_REGS of them (and signs) for the flip phase.
__device__ __forceinline__ void claim_share(
    vid_t v, u64 mark, int share, const i64* var_offsets, const eid_t* var_clauses,
    const unsigned char* var_positive, u64* marks, HeldProposal* held)
{
    const i64 off = var_offsets[v];
    group_share(off, var_offsets[v + 1] - off, share, &held->begin, &held->size);
    held->positive = 0u;
#pragma unroll
    for (int i = 0; i < HOOD_REGS; ++i) {
        if (i < held->size) {
            held->hood[i] = var_clauses[held->begin + i];
            held->positive |= (var_positive[held->begin + i] != 0 ? 1u : 0u) << i;
        }
    }
#pragma unroll
    for (int i = 0; i < HOOD_REGS; ++i)
        if (i < held->size) atomicMax(&marks[held->hood[i]], mark);
    for (int i = HOOD_REGS; i < held->size; ++i)
        atomicMax(&marks[var_clauses[held->begin + i]], mark);
}

__device__ __forceinline__ void round_sync(mg::GridBarrier& bar, bool solo) {
    if (solo) __syncthreads(); else mg::grid_sync(bar);
}

// Round r looks only at the clauses of lists[r % 2] (list_count[r % 3] of them): the
// clauses unsatisfied at the start of round r-1 (its proposals) and those that round r-1
// made false, so a round costs in proportion to the unsatisfied clauses, not to the
// formula. A clause enters a list at most once per round (one winner touches it), so
// each list needs at most n_clauses slots. Round r writes list (r+1) % 2: its proposals
// first, then, in the flip phase, the clauses it breaks, all counted in
// list_count[(r+1) % 3]; slot (r+2) % 3, last read in round r-1, is cleared once every
// thread has passed round r's first barrier.
// Groups of LS_GROUP lanes take the round's clauses (a group its first LS_HELD clauses in
// registers, HeldProposal): the same group proposes, claims, checks and flips, so the
// flip phase starts from the marks' loads, not from a chain of prop_var -> var_offsets ->
// var_clauses loads. Proposals past a group's LS_HELD are spilled: prop_var / prop_mark at
// slots counted in list_count[3 + r % 2] (the other one cleared with slot (r+2) % 3), and
// flipped as before from those arrays.
// Rounds are numbered from r0 (a relaunch continues at the round it was handed back at).
// outcome[0]: 1 when an unsatisfied clause had no movable variable (the search cannot
// fix it); outcome[1]: the round it stopped at (= rounds run since round 0); outcome[2]: 1
// when every clause is satisfied; outcome[3]: 1 when a solo block handed back (relaunch);
// outcome[4]: the fewest proposals (unsatisfied clauses with a movable variable) a round
// has had, capped at 2^31 - 1; outcome[5]: the first round that had them; outcome[6]: the
// most rounds the search waited for a new fewest; outcome[7]: 1 when it stopped stalled.
// Stalled: with stall_floor > 0, no new fewest for max(stall_floor, outcome[5]) rounds,
// i.e. the search has waited as long as it took to get there (and at least the floor).
// outcome[4..6] carry over a relaunch (the host sets outcome[4] = 2^31 - 1 before round 0).
// flips_done (u64) receives the flips made. The host fills lists[0] with the clauses
// false at the start and list_count[0] with their number (list_count[1..4] = 0).
extern "C" __global__ void __launch_bounds__(LS_BLOCK) ls_rounds(
    i64 n_clauses, int width, const vid_t* __restrict__ lit_var,
    const i64* __restrict__ var_offsets, const eid_t* __restrict__ var_clauses,
    const unsigned char* __restrict__ var_positive, unsigned char* values, int* true_count,
    vid_t* true_xor, int* breaks, const unsigned char* __restrict__ frozen,
    const double* __restrict__ weight_table, u64 seed, u64 first_round, int r0, int max_rounds,
    eid_t* lists, u64* list_count, vid_t* prop_var, u64* prop_mark, u64* marks,
    u64* flips_done, int* outcome, int block_tail, int stall_floor, unsigned* barrier_state)
{
    mg::GridBarrier bar(barrier_state);
    const bool leader = mg::global_tid() == 0;
    const unsigned lane = mg::lane_id();
    const int share = (int)(lane % LS_GROUP);  // this lane's share of a proposal's hood
    const int group_first = (int)(lane / LS_GROUP * LS_GROUP);
    const unsigned group_mask = (LS_GROUP == 32 ? FULL_WARP : ((1u << LS_GROUP) - 1u))
                                << group_first;
    const i64 group_in_block = threadIdx.x / LS_GROUP;
    constexpr i64 groups_per_block = LS_BLOCK / LS_GROUP;
    // Solo: once a round has at most block_tail proposals (0: never), block 0 runs the
    // rest of the search alone, its barriers block-wide (__syncthreads orders its global
    // accesses too); the other blocks leave after that round's flips and barrier. The
    // long WalkSAT tail has a few dozen false clauses per round, where the grid barriers
    // (two per round, ~2 us each) are most of a round's time. Every thread reads the same
    // proposal count after the barrier, so all decide together; a solo block still handles
    // any count, only more slowly.
    bool solo = false;
    i64 tid = mg::global_tid();
    i64 stride = mg::global_stride();
    i64 warp = tid / 32;
    i64 n_warps = stride / 32;
    u64 my_flips = 0;
    // Every thread reads the same proposal counts after the same barriers, so each keeps
    // its own copy of these and all decide alike.
    i64 fewest = (i64)mg::load_volatile(outcome + 4);
    int fewest_round = mg::load_volatile(outcome + 5);
    int longest_wait = mg::load_volatile(outcome + 6);
    auto record = [&](int r, bool stalled) {
        outcome[1] = r;
        outcome[4] = (int)min(fewest, (i64)2147483647);  // INT_MAX (no <climits> in NVRTC)
        outcome[5] = fewest_round;
        outcome[6] = max(longest_wait, r - fewest_round);
        outcome[7] = stalled ? 1 : 0;
    };
    for (int r = r0;; ++r) {
        const u64 round = first_round + (u64)r;
        const eid_t* cur = lists + (r % 2) * n_clauses;
        eid_t* next = lists + ((r + 1) % 2) * n_clauses;
        u64* next_count = list_count + (r + 1) % 3;
        u64* spill_count = list_count + 3 + r % 2;
        const i64 n_cur = (i64)mg::load_volatile(list_count + r % 3);
        const unsigned tag = (unsigned)(round & ROUND_TAG_MASK);
        if (tag == 0 && round != 0) {
            // The tag wrapped: marks left from earlier rounds may be above this round's.
            for (i64 c = tid; c < n_clauses; c += stride) marks[c] = 0;
            round_sync(bar, solo);
        }
        // The proposal of the group's clause in the stretch at `at` (v -1: none), its slot
        // in the next list reserved; block-wide (block_reserve).
        auto propose_at = [&](i64 at, vid_t* v_out, u64* mark_out) -> int {
            const i64 i = at + group_in_block;
            i64 a = -1;
            bool active = false;
            if (i < n_cur) {
                a = (i64)cur[i];
                active = true_count[a] == 0;
            }
            bool freebie = false;
            const vid_t v = propose_group(active, a, width, share, group_first, lit_var,
                                          breaks, frozen, weight_table, seed, round, &freebie);
            if (active && v < 0 && share == 0) outcome[0] = 1;
            const int counted = (v >= 0 && share == 0) ? 1 : 0;
            const i64 slot = mg::block_reserve<LS_BLOCK>(next_count, counted);
            *v_out = v;
            *mark_out = 0;
            if (v >= 0) {
                const unsigned hashed = mg::claim_priority(round, (u64)a) >> (ROUND_TAG_BITS + 1);
                const unsigned priority = (tag << (32 - ROUND_TAG_BITS))
                                          | (freebie ? FREEBIE_BIT : 0u) | hashed;
                *mark_out = mg::claim_mark(priority, (unsigned)a);
                if (share == 0) next[slot] = (eid_t)a;
            }
            return counted;
        };
        // propose + claim, a group per clause: its first LS_HELD clauses held, the rest
        // spilled. Block-uniform trip counts (block_reserve is block-wide).
        HeldProposal held[LS_HELD];
        i64 first = solo ? 0 : (i64)blockIdx.x * groups_per_block;
        const i64 step = stride / LS_GROUP;
#pragma unroll
        for (int h = 0; h < LS_HELD; ++h) {
            held[h].v = -1;
            held[h].size = 0;
            if (first < n_cur) {
                vid_t v;
                u64 mark;
                propose_at(first, &v, &mark);
                first += step;
                if (v >= 0) {
                    held[h].v = v;
                    held[h].mark = mark;
                    held[h].now = values[v] == 0;
                    claim_share(v, mark, share, var_offsets, var_clauses, var_positive, marks,
                                &held[h]);
                }
            }
        }
        for (; first < n_cur; first += step) {
            vid_t v;
            u64 mark;
            const int counted = propose_at(first, &v, &mark);
            const i64 at = mg::block_reserve<LS_BLOCK>(spill_count, counted);
            if (v >= 0) {
                if (share == 0) { prop_var[at] = v; prop_mark[at] = mark; }
                HeldProposal scratch;
                claim_share(v, mark, share, var_offsets, var_clauses, var_positive, marks,
                            &scratch);
            }
        }
        round_sync(bar, solo);
        const i64 n_prop = (i64)mg::load_volatile(next_count);
        const bool stuck = mg::load_volatile(outcome) != 0;
        if (n_prop < fewest) {
            longest_wait = max(longest_wait, r - fewest_round);
            fewest = n_prop;
            fewest_round = r;
        }
        const bool stalled = stall_floor > 0 && r - fewest_round >= max(stall_floor, fewest_round);
        if (n_prop == 0 || stuck || r >= max_rounds || stalled) {
            if (leader) {
                record(r, stalled && n_prop != 0 && !stuck);
                outcome[2] = (n_prop == 0 && !stuck) ? 1 : 0;
            }
            break;
        }
        if (solo && n_prop > 8 * (i64)block_tail) {
            // Too many proposals for one block: hand back so the host relaunches the grid
            // at round r. Clearing this round's counts restores the state round r started
            // from (the clause lists are untouched; the re-run proposals, same hashes,
            // raise the same marks again, which changes nothing).
            if (threadIdx.x == 0) {
                list_count[(r + 1) % 3] = 0;
                list_count[3] = list_count[4] = 0;
                record(r, false);
                outcome[3] = 1;
            }
            break;
        }
        const bool go_solo = !solo && n_prop <= (i64)block_tail;
        const i64 n_spill = (i64)mg::load_volatile(spill_count);
        if (leader) { list_count[(r + 2) % 3] = 0; list_count[3 + (r + 1) % 2] = 0; }
        // check + flip of the held proposals: the group that claimed flips.
#pragma unroll
        for (int h = 0; h < LS_HELD; ++h) {
            const HeldProposal& p = held[h];
            bool ok = true;
            if (p.v >= 0) {
#pragma unroll
                for (int k = 0; k < HOOD_REGS; ++k)
                    if (k < p.size && mg::load_volatile(&marks[p.hood[k]]) != p.mark) ok = false;
                for (int k = HOOD_REGS; k < p.size; ++k)
                    if (mg::load_volatile(&marks[var_clauses[p.begin + k]]) != p.mark) ok = false;
            }
            const unsigned votes = __ballot_sync(FULL_WARP, ok);
            if (p.v >= 0 && (votes & group_mask) == group_mask) {
                if (share == 0) { values[p.v] = p.now ? 1 : 0; my_flips += 1; }
                int own_change = 0;
#pragma unroll
                for (int k = 0; k < HOOD_REGS; ++k)
                    if (k < p.size)
                        flip_clause(p.v + 1, p.now, p.hood[k], ((p.positive >> k) & 1u) != 0,
                                    true_count, true_xor, breaks, next, next_count,
                                    &own_change);
                for (int k = HOOD_REGS; k < p.size; ++k)
                    flip_clause(p.v + 1, p.now, var_clauses[p.begin + k],
                                var_positive[p.begin + k] != 0, true_count, true_xor, breaks,
                                next, next_count, &own_change);
                if (own_change != 0) atomicAdd(breaks + p.v, own_change);
            }
        }
        // check + flip of the spilled proposals, LS_GROUP lanes per proposal; whole warps
        // iterate together so the ballot below sees every lane.
        for (i64 f = warp * GROUPS_PER_WARP; f < n_spill; f += n_warps * GROUPS_PER_WARP) {
            const i64 p = f + (i64)(lane / LS_GROUP);
            vid_t v = -1;
            i64 begin = 0;
            int size = 0;
            bool share_ok = true;
            if (p < n_spill) {
                v = prop_var[p];
                const i64 off = var_offsets[v];
                group_share(off, var_offsets[v + 1] - off, share, &begin, &size);
                share_ok = mg::conflict_check(marks, var_clauses + begin, size, prop_mark[p]);
            }
            const unsigned votes = __ballot_sync(FULL_WARP, share_ok);
            const bool won = p < n_spill && (votes & group_mask) == group_mask;
            const bool now = won && values[v] == 0;  // v's value after the flip
            __syncwarp();  // the group has read the old value before its first lane writes
            if (won) {
                if (share == 0) { values[v] = now ? 1 : 0; my_flips += 1; }
                flip_share(v, now, begin, size, var_clauses, var_positive, true_count,
                           true_xor, breaks, next, next_count);
            }
        }
        round_sync(bar, solo);
        if (go_solo) {
            if (blockIdx.x != 0) break;
            solo = true;
            tid = threadIdx.x;
            stride = blockDim.x;
            warp = tid / 32;
            n_warps = stride / 32;
        }
    }
    if (my_flips) atomicAdd(flips_done, my_flips);
}

// Launch with exactly one block of 32 threads. unsat_list holds the n_unsat_start clauses
// with true_count 0 (room for every clause), unsat_pos their index there (-1 for others).
// outcome[0]: 1 when solved; outcome[1]: flips made; outcome[2]: 1 when a chosen
// unsatisfied clause had no movable variable (the search cannot fix it).
extern "C" __global__ void ls_tail(
    int width, const vid_t* __restrict__ lit_var, const signed char* __restrict__ lit_neg,
    const i64* __restrict__ var_offsets, const eid_t* __restrict__ var_edges,
    unsigned char* values, int* true_count, const unsigned char* __restrict__ frozen,
    const double* __restrict__ weight_table, u64 seed, i64 max_flips, i64* unsat_list,
    i64* unsat_pos, i64 n_unsat_start, i64* outcome)
{
    if (blockIdx.x != 0 || threadIdx.x >= 32) return;  // one warp does the walk
    const int lane = (int)threadIdx.x;
    // Lanes per candidate: a power of two, so a group's lanes sum with xor shuffles.
    const int group = width <= 2 ? 16 : width <= 4 ? 8 : width <= 8 ? 4 : width <= 16 ? 2 : 1;
    const int n_groups = 32 / group;
    i64 n_unsat = n_unsat_start;  // the same in every lane: all apply the same events
    for (i64 step = 0;; ++step) {
        // Lane 0's list updates and every lane's true_count writes of the last flip
        // become visible to the whole warp here.
        __syncwarp();
        if (n_unsat == 0) {
            if (lane == 0) { outcome[0] = 1; outcome[1] = step; }
            return;
        }
        if (step >= max_flips) {
            if (lane == 0) outcome[1] = step;
            return;
        }
        const i64 pick_at = min((i64)(uniform_hash(seed, (u64)step, 0) * (double)n_unsat),
                                n_unsat - 1);
        const i64 clause = unsat_list[pick_at];
        // Lanes in groups of `group`, one group per candidate, sum each candidate's breaks;
        // then one pass of weighted reservoir sampling over the candidates in order:
        // candidate j replaces the choice with probability w_j / (w_1 + ... + w_j).
        double total = 0.0;
        vid_t chosen = -1;
        for (int j0 = 0; j0 < width; j0 += n_groups) {
            const int j = j0 + lane / group;
            vid_t v = -1;
            int breaks = 0;
            if (j < width) {
                v = lit_var[clause * width + j];
                if (v >= 0 && frozen[v]) v = -1;
            }
            if (v >= 0) {
                const bool value = values[v] != 0;
                for (i64 k = var_offsets[v] + lane % group; k < var_offsets[v + 1]; k += group) {
                    const i64 e = (i64)var_edges[k];
                    const bool lit_true = value != (lit_neg[e] != 0);
                    if (lit_true && true_count[e / width] == 1) breaks += 1;
                }
            }
            for (int offset = group / 2; offset > 0; offset >>= 1)
                breaks += __shfl_xor_sync(FULL_WARP, breaks, offset);
            for (int g = 0; g < n_groups && j0 + g < width; ++g) {
                const vid_t vg = __shfl_sync(FULL_WARP, v, g * group);
                const int bg = __shfl_sync(FULL_WARP, breaks, g * group);
                if (vg < 0) continue;
                const double weight = weight_table[min(bg, BREAK_TABLE_SIZE - 1)];
                total += weight;
                if (chosen < 0 || uniform_hash(seed, (u64)step, (u64)(j0 + g) + 1) * total < weight)
                    chosen = vg;
            }
        }
        if (chosen < 0) {
            if (lane == 0) { outcome[1] = step; outcome[2] = 1; }
            return;
        }
        const bool now = values[chosen] == 0;  // its value after the flip
        __syncwarp();  // every lane has read the old value before lane 0 writes the new one
        if (lane == 0) values[chosen] = now ? 1 : 0;
        const i64 first = var_offsets[chosen];
        const i64 last = var_offsets[chosen + 1];
        // Uniform trip count, so the whole warp meets every ballot and shuffle.
        for (i64 base = first; base < last; base += 32) {
            const i64 k = base + lane;
            i64 cl = -1;
            int event = 0;  // +1: the clause became satisfied, -1: it became unsatisfied
            if (k < last) {
                const i64 e = (i64)var_edges[k];
                cl = e / width;
                // A variable occurs at most once per clause (factor.build merges duplicate
                // literals), so the lanes' clauses are distinct: plain updates suffice.
                if (now != (lit_neg[e] != 0)) {
                    if (++true_count[cl] == 1) event = 1;
                } else {
                    if (--true_count[cl] == 0) event = -1;
                }
            }
            unsigned pending = __ballot_sync(FULL_WARP, event != 0);
            while (pending) {
                const int src = __ffs(pending) - 1;
                pending &= pending - 1;
                const i64 c = __shfl_sync(FULL_WARP, cl, src);
                const int ev = __shfl_sync(FULL_WARP, event, src);
                if (ev > 0) {
                    if (lane == 0) {
                        const i64 at = unsat_pos[c];
                        const i64 moved = unsat_list[n_unsat - 1];
                        unsat_list[at] = moved;
                        unsat_pos[moved] = at;
                        unsat_pos[c] = -1;
                    }
                    n_unsat -= 1;
                } else {
                    if (lane == 0) { unsat_list[n_unsat] = c; unsat_pos[c] = n_unsat; }
                    n_unsat += 1;
                }
            }
        }
    }
}
