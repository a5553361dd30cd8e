// Results of a search on the locality-relabelled copy of a graph (gpu/workspace.py,
// Workspace.locality_relabelled) back in the caller's ids, one launch after the search
// (persistent.py). The gather itself is map_back.cuh's, shared with
// direction.cu, which runs it in its own launch's tail.
#include <morphgpu/common.cuh>
#include <bfs/kernels/map_back.cuh>

using namespace mg;

extern "C" __global__ void bfs_relabel_back(const int* dist_new, const vid_t* parent_new,
                                            const vid_t* __restrict__ perm,
                                            const vid_t* __restrict__ inverse, i64 n,
                                            int* dist, vid_t* parent) {
    bfs::map_back(dist_new, parent_new, perm, inverse, n, dist, parent);
}
