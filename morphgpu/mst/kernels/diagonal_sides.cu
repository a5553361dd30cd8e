// How many CSR entries lie above the diagonal (u < v) and how many below (u > v), into
// out[0] and out[1] (zeroed by the caller). A graph declared symmetric must hold as many
// of each: the rounds kernel then reads only the entries above it, so a false claim gave
// the forest of the upper triangle alone (of a lower-triangular matrix, no forest at all).
// One pass over the entries, a warp per row (a hub's row spread over the lanes), a warp
// sum and one atomicAdd per warp and side.
#include <morphgpu/common.cuh>

using namespace mg;

extern "C" __global__ void mst_diagonal_sides(const eid_t* __restrict__ indptr,
                                              const vid_t* __restrict__ indices, i64 n,
                                              u64* out) {
    const i64 warps = global_stride() >> 5;
    u64 above = 0, below = 0;
    for (i64 u = global_tid() >> 5; u < n; u += warps) {
        const i64 end = (i64)indptr[u + 1];
        for (i64 j = (i64)indptr[u] + lane_id(); j < end; j += 32) {
            const i64 v = (i64)__ldg(indices + j);
            above += v > u;
            below += v < u;
        }
    }
    above = warp_sum(above);
    below = warp_sum(below);
    if (lane_id() == 0) {
        if (above) atomicAdd(out, above);
        if (below) atomicAdd(out + 1, below);
    }
}
