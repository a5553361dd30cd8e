// Parallel probSAT: every unsatisfied clause flips one of its movable variables per round,
// chosen with weight table[min(break, 63)], where break counts the clauses that the
// variable alone satisfies. A round is three launches, back to back:
//   ls_clause_state  true-literal count per clause; break counts; the unsat count
//                    (one atomicAdd per block, after __syncthreads_count);
//   ls_pick          per unsatisfied clause: one weighted random pick; marks it to flip
//                    (a mark, not a toggle, so a variable picked twice flips once);
//   ls_flip          flips the marked variables, clears marks and break counts.
// Randomness is a counter-based hash of (seed, round, clause): no RNG state to keep.
// The host reads the unsat counts only every few rounds; once a round starts with none,
// nothing is picked, so the assignment stays as it was.
#include <morphgpu/common.cuh>

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

extern "C" __global__ void ls_clause_state(
    i64 n_clauses, int width, const vid_t* __restrict__ lit_var,
    const signed char* __restrict__ lit_neg, const unsigned char* __restrict__ values,
    int* true_count, int* breaks, unsigned long long* n_unsat)
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
        if (threadIdx.x == 0 && block_unsat) atomicAdd(n_unsat, (unsigned long long)block_unsat);
    }
}

extern "C" __global__ void ls_pick(
    i64 n_clauses, int width, const vid_t* __restrict__ lit_var,
    const int* __restrict__ true_count, const int* __restrict__ breaks,
    const unsigned char* __restrict__ frozen, const double* __restrict__ weight_table,
    unsigned long long seed, unsigned long long round, unsigned char* flip, int* stuck)
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

extern "C" __global__ void ls_flip(i64 n_vars, unsigned char* values, unsigned char* flip, int* breaks)
{
    for (i64 v = mg::global_tid(); v < n_vars; v += mg::global_stride()) {
        if (flip[v]) { values[v] ^= 1; flip[v] = 0; }
        breaks[v] = 0;
    }
}
