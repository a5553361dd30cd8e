// Parallel probSAT as one persistent kernel: every unsatisfied clause flips one of its
// movable variables per round, chosen with weight table[min(break, 63)], where break counts
// the clauses that the variable alone satisfies. Each round has three phases separated by
// mg::grid_sync, so the whole search is one launch (a round is ~3 barriers, ~12 µs, instead
// of three launches from Python):
//   state  true-literal count per clause; break counts; the round's unsat count (one
//          atomicAdd per block, after __syncthreads_count);
//   pick   (when some clause is unsatisfied) per unsatisfied clause, one weighted random
//          pick; marks it to flip (a mark, not a toggle: picked twice flips once);
//   flip   flips the marked variables, clears marks and break counts.
// After the state phase's barrier every thread reads the same unsat count and the same
// stuck flag, so all threads leave the loop together (no thread is left at a barrier).
// Unsat counts live in a ring of 3: round r counts into slot r%3 and, once every thread
// has read it, clears slot (r+1)%3, which nobody has read since round r-2.
// Randomness is a counter-based hash of (seed, round, clause): no RNG state to keep.
#include <morphgpu/common.cuh>
#include <morphgpu/barrier.cuh>

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
    unsigned char* flip, u64* unsat_ring, int* outcome, unsigned* barrier_state)
{
    mg::GridBarrier bar(barrier_state);
    const bool leader = mg::global_tid() == 0;
    // max_rounds rounds of flips, then one last look at the clauses (so 0 rounds still
    // reports an already satisfying assignment).
    for (int r = 0;; ++r) {
        u64* counter = unsat_ring + (r % 3);
        clause_state(n_clauses, width, lit_var, lit_neg, values, true_count, breaks, counter);
        mg::grid_sync(bar);
        if (mg::load_volatile(counter) == 0) {
            if (leader) { outcome[1] = r; outcome[2] = 1; }
            return;
        }
        if (r >= max_rounds) {
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
