// The solver's last word on a SAT answer: count the clauses an assignment leaves false,
// read from the CNF's own CSR arrays (offsets, DIMACS literals) as the file gave them,
// not from the factor graph the solver built, so a mistake in that build cannot hide.
//
// One thread per clause: random k-SAT clauses hold 3 to 7 literals, so a warp per clause
// would leave most lanes idle; a very long clause only makes its one thread slow, and every
// literal is still read at most once. A clause is true at its first true literal; an empty
// clause has none and is false, as in cnf.unsatisfied_clauses.
//
// out[0]: false clauses (one atomicAdd per block, after a block-wide sum);
// out[1]: 0, or the first problem met (1: a literal 0 or past n_vars, 2: offsets outside
//         the literals or decreasing): the count is then meaningless and the host raises.
//         These guards keep every read inside the arrays for a CNF built around the
//         validating constructors; they are no full validation (a bad literal after a
//         clause's first true one is not read, hence not seen);
// out[2]: the lowest clause with that kind of problem (atomicMin; the host sets it to ~0).
#include <morphgpu/common.cuh>

using mg::i64;
using mg::u64;
using mg::vid_t;  // the literals' type (int or long long, picked by the loader)

#define VERIFY_BLOCK 256

extern "C" __global__ void __launch_bounds__(VERIFY_BLOCK) count_false_clauses(
    i64 n_clauses, const i64* __restrict__ offsets, const vid_t* __restrict__ literals,
    i64 n_literals, i64 n_vars, const unsigned char* __restrict__ values, u64* out)
{
    u64 n_false = 0;
    for (i64 a = mg::global_tid(); a < n_clauses; a += mg::global_stride()) {
        const i64 begin = offsets[a];
        const i64 end = offsets[a + 1];
        if (begin < 0 || end > n_literals || end < begin) {
            // Never read outside the literals; the host refuses the whole count.
            atomicCAS(out + 1, 0ull, 2ull);
            atomicMin(out + 2, (u64)a);
            continue;
        }
        bool is_true = false;
        for (i64 j = begin; j < end; ++j) {
            const i64 lit = (i64)literals[j];
            // Compared, never negated: -(-2^63) would overflow.
            if (lit == 0 || lit > n_vars || lit < -n_vars) {
                atomicCAS(out + 1, 0ull, 1ull);
                atomicMin(out + 2, (u64)a);
                break;
            }
            const bool value = values[lit > 0 ? lit - 1 : -lit - 1] != 0;
            if (value == (lit > 0)) { is_true = true; break; }
        }
        n_false += !is_true;
    }
    // Block-wide sum, then one atomic per block rather than one per false clause (an
    // assignment that fails badly leaves millions false). Every thread gets here: the
    // loop above has no early return, and the block is whole warps.
    __shared__ u64 warp_totals[VERIFY_BLOCK / 32];
    n_false = mg::warp_sum(n_false);
    if (mg::lane_id() == 0) warp_totals[mg::warp_id()] = n_false;
    __syncthreads();
    if (threadIdx.x < 32) {
        u64 total = threadIdx.x < blockDim.x / 32 ? warp_totals[threadIdx.x] : 0;
        total = mg::warp_sum(total);
        if (threadIdx.x == 0 && total) atomicAdd(out, total);
    }
}
