// The ELL form of a CSR graph (traversal/ell.cuh): row v's neighbours at ell[v * k,
// v * k + k), padded with -1; rows longer than k are the caller's error (it checks the
// largest degree first). One thread per vertex: a graph's first search builds this once,
// and one launch of our own module costs a new process less than the four CuPy kernels
// (binary search, range, fill, scatter) it replaces, each of which loads on first use.
#include <morphgpu/common.cuh>

using namespace mg;

extern "C" __global__ void bfs_ell_rows(const eid_t* __restrict__ indptr,
                                        const vid_t* __restrict__ indices, i64 n, int k,
                                        vid_t* ell) {
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        const eid_t b = indptr[v];
        const i64 degree = (i64)(indptr[v + 1] - b);
        vid_t* row = ell + v * (i64)k;
        for (int j = 0; j < k; ++j) row[j] = j < degree ? indices[b + j] : (vid_t)-1;
    }
}
