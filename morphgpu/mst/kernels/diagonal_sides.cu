// How many CSR entries lie above the diagonal (u < v) and how many below (u > v), into
// out[0] and out[1] (zeroed by the caller). A graph declared symmetric must hold as many
// of each: the rounds kernel then reads only the entries above it, so a false claim gave
// the forest of the upper triangle alone (of a lower-triangular matrix, no forest at all).
//
// One pass over the entries. A warp takes 32 rows at a time, a lane each: a lane walks its
// own row when it is short (most rows of road, mesh and random graphs), and the warp walks
// each long row together, a lane per entry (a Kronecker hub of 10^5 entries would keep
// one lane busy for the whole pass). A warp for every row left most lanes idle on rows of
// a few entries. H100, best of 30 (benchmarks/RESULTS.md, session 22), warp per row ->
// this: uniform 2^22 degree 16 0.47 -> 0.16 ms, grid 2000^2 0.43 -> 0.09, Kronecker 18
// 0.092 -> 0.073, but Kronecker 21 0.39 -> 0.50 (its long rows lie together, and a
// warp walks the long rows of its 32 one after another).
#include <morphgpu/common.cuh>

using namespace mg;

// Rows longer than this are walked by the whole warp (16 and 8 measured: equal on grids
// and Kronecker graphs, slower on uniform degree-16 graphs, 0.28 and 0.40 ms).
#define MST_SHORT_ROW 32

extern "C" __global__ void mst_diagonal_sides(const eid_t* __restrict__ indptr,
                                              const vid_t* __restrict__ indices, i64 n,
                                              u64* out) {
    const i64 warps = global_stride() >> 5;
    u64 above = 0, below = 0;
    for (i64 base = (global_tid() >> 5) << 5; base < n; base += warps << 5) {
        const i64 u = base + lane_id();
        i64 begin = 0, end = 0;
        if (u < n) {
            begin = (i64)indptr[u];
            end = (i64)indptr[u + 1];
        }
        const bool long_row = end - begin > MST_SHORT_ROW;
        if (!long_row) {
            // Four loads in flight before any is used: a lane's row is a chain of loads
            // otherwise, one latency each.
            for (i64 j = begin; j < end; j += 4) {
                i64 v[4];
#pragma unroll
                for (int k = 0; k < 4; ++k) v[k] = j + k < end ? (i64)__ldg(indices + j + k) : u;
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    above += v[k] > u;
                    below += v[k] < u;
                }
            }
        }
        unsigned longs = __ballot_sync(0xffffffffu, long_row);
        while (longs) {
            const int src = __ffs(longs) - 1;
            longs &= longs - 1;
            const i64 row = base + src;
            const i64 row_end = __shfl_sync(0xffffffffu, end, src);
            for (i64 j = __shfl_sync(0xffffffffu, begin, src) + lane_id(); j < row_end; j += 32) {
                const i64 v = (i64)__ldg(indices + j);
                above += v > row;
                below += v < row;
            }
        }
    }
    above = warp_sum(above);
    below = warp_sum(below);
    if (lane_id() == 0) {
        if (above) atomicAdd(out, above);
        if (below) atomicAdd(out + 1, below);
    }
}
