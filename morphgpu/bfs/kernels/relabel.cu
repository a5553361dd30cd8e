// The map back of a relabelled search (map_back.cuh) as a launch of its own: gpu.MAP_BACK =
// "launch". By default the search's own launch runs it after its last level (direction.cu,
// out_dist), 1.047x faster per call on the H200 (Kronecker 21).
#include <bfs/kernels/map_back.cuh>

extern "C" __global__ void bfs_unrelabel(const int* dist_new, const mg::vid_t* parent_new,
                                         const mg::vid_t* __restrict__ perm,
                                         const mg::vid_t* __restrict__ inverse, mg::i64 n,
                                         int* dist, mg::vid_t* parent) {
    bfs::map_back(dist_new, parent_new, perm, inverse, n, dist, parent);
}
