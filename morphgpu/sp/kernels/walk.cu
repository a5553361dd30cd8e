// The local search, a hybrid in two kernels (morphgpu/sp/rules.py, HANDOVER_UNSAT, says why):
//
// ls_rounds: parallel probSAT as one persistent kernel: every unsatisfied clause flips one
// of its movable variables per round, chosen with weight table[min(break, 63)], where break
// counts the clauses that the variable alone satisfies. Each round has three phases
// separated by mg::grid_sync, so the whole phase is one launch (a round is ~3 barriers,
// ~12 µs, instead of three launches from Python):
//   state  true-literal count per clause; break counts; the round's unsat count (one
//          atomicAdd per block, after __syncthreads_count);
//   pick   (when some clause is unsatisfied) per unsatisfied clause, one weighted random
//          pick; marks it to flip (a mark, not a toggle: picked twice flips once);
//   flip   flips the marked variables, clears marks and break counts.
// After the state phase's barrier every thread reads the same unsat count and the same
// stuck flag, and keeps the same best count, so all threads leave the loop together (no
// thread is left at a barrier). The kernel leaves after a state phase when no clause is
// unsatisfied, when at most `handover` are, or when the best count has not improved for
// `stall_rounds` rounds; true_count then matches values, which is what ls_tail starts from.
// Unsat counts live in a ring of 3: round r counts into slot r%3 and, once every thread
// has read it, clears slot (r+1)%3, which nobody has read since round r-2.
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

__device__ void clause_state(
    i64 n_clauses, int width, const vid_t* lit_var, const signed char* lit_neg,
    const unsigned char* values, int* true_count, int* breaks, u64* n_unsat)
{
    // Uniform trip count per block so every thread reaches __syncthreads_count.
    for (i64 first = (i64)blockIdx.x * blockDim.x; first < n_clauses; first += mg::global_stride()) {
        const i64 a = first + threadIdx.x;
        int unsat = 0;
        if (a < n_clauses) {
            const i64 base = a * width;
            int count = 0;
            vid_t sole = -1;
            for (int j = 0; j < width; ++j) {
                const vid_t v = lit_var[base + j];
                if (v < 0) continue;
                if ((values[v] != 0) != (lit_neg[base + j] != 0)) { count += 1; sole = v; }
            }
            true_count[a] = count;
            if (count == 1) atomicAdd(breaks + sole, 1);
            unsat = count == 0;
        }
        const int block_unsat = __syncthreads_count(unsat);
        if (threadIdx.x == 0 && block_unsat) atomicAdd(n_unsat, (u64)block_unsat);
    }
}

__device__ void pick(
    i64 n_clauses, int width, const vid_t* lit_var, const int* true_count, const int* breaks,
    const unsigned char* frozen, const double* weight_table, u64 seed, u64 round,
    unsigned char* flip, int* stuck)
{
    for (i64 a = mg::global_tid(); a < n_clauses; a += mg::global_stride()) {
        if (true_count[a] != 0) continue;
        const i64 base = a * width;
        double total = 0.0;
        for (int j = 0; j < width; ++j) {
            const vid_t v = lit_var[base + j];
            if (v < 0 || frozen[v]) continue;
            total += weight_table[min(breaks[v], BREAK_TABLE_SIZE - 1)];
        }
        if (total <= 0.0) { *stuck = 1; continue; }
        double u = uniform_hash(seed, round, (u64)a) * total;
        vid_t chosen = -1;
        for (int j = 0; j < width; ++j) {
            const vid_t v = lit_var[base + j];
            if (v < 0 || frozen[v]) continue;
            chosen = v;
            u -= weight_table[min(breaks[v], BREAK_TABLE_SIZE - 1)];
            if (u < 0.0) break;
        }
        flip[chosen] = 1;
    }
}

// outcome[0]: 1 when a clause had no movable variable (the search cannot fix it);
// outcome[1]: rounds run; outcome[2]: 1 when a round found every clause satisfied.
extern "C" __global__ void ls_rounds(
    i64 n_clauses, i64 n_vars, int width, const vid_t* __restrict__ lit_var,
    const signed char* __restrict__ lit_neg, unsigned char* values, int* true_count,
    int* breaks, const unsigned char* __restrict__ frozen,
    const double* __restrict__ weight_table, u64 seed, u64 first_round, int max_rounds,
    u64 handover, int stall_rounds, unsigned char* flip, u64* unsat_ring, int* outcome,
    unsigned* barrier_state)
{
    mg::GridBarrier bar(barrier_state);
    const bool leader = mg::global_tid() == 0;
    u64 best = ~0ull;  // the same in every thread: all read the same counts
    int best_round = 0;
    // max_rounds rounds of flips, then one last look at the clauses (so 0 rounds still
    // reports an already satisfying assignment).
    for (int r = 0;; ++r) {
        u64* counter = unsat_ring + (r % 3);
        clause_state(n_clauses, width, lit_var, lit_neg, values, true_count, breaks, counter);
        mg::grid_sync(bar);
        const u64 n_unsat = mg::load_volatile(counter);
        if (n_unsat == 0) {
            if (leader) { outcome[1] = r; outcome[2] = 1; }
            return;
        }
        if (n_unsat < best) { best = n_unsat; best_round = r; }
        if (r >= max_rounds || n_unsat <= handover || r - best_round >= stall_rounds) {
            if (leader) outcome[1] = r;
            return;
        }
        if (leader) unsat_ring[(r + 1) % 3] = 0;
        pick(n_clauses, width, lit_var, true_count, breaks, frozen, weight_table, seed,
             first_round + (u64)r, flip, outcome);
        mg::grid_sync(bar);
        if (mg::load_volatile(outcome) != 0) {
            if (leader) outcome[1] = r;
            return;
        }
        for (i64 v = mg::global_tid(); v < n_vars; v += mg::global_stride()) {
            if (flip[v]) { values[v] ^= 1; flip[v] = 0; }
            breaks[v] = 0;
        }
        mg::grid_sync(bar);
    }
}

#define FULL_WARP 0xffffffffu

__device__ __forceinline__ int warp_sum(int x) {
    for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(FULL_WARP, x, offset);
    return x;
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
