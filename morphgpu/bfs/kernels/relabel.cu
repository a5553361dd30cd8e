// Results of a search on the degree-relabelled graph (gpu.py, Workspace.degree_relabelled)
// back in the caller's vertex ids: new vertex i is old vertex perm[i], inverse[v] is old
// v's new id. One pass, so a search pays one launch for the relabelling, not a chain of
// CuPy gathers. This is gpu.MAP_BACK = "launch"; by default the search's own launch does
// the same pass after its last level (direction.cu, out_dist), 1.047x faster per call.
// (Walking the new ids instead, streaming reads and scattering writes, was slower on the
// H200: 299.7 against 259.2 us per Kronecker 21 call.)
#include <morphgpu/common.cuh>

using namespace mg;

extern "C" __global__ void bfs_unrelabel(const int* __restrict__ dist_new,
                                         const vid_t* __restrict__ parent_new,
                                         const vid_t* __restrict__ perm,
                                         const vid_t* __restrict__ inverse, i64 n, int* dist,
                                         vid_t* parent) {
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        const vid_t w = inverse[v];
        dist[v] = dist_new[w];
        if (parent) {
            const vid_t p = parent_new[w];
            parent[v] = p >= 0 ? perm[p] : (vid_t)-1;
        }
    }
}

