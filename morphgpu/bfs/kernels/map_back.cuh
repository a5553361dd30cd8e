// Results of a search on the degree-relabelled graph (gpu/workspace.py, Workspace.degree_relabelled)
// back in the caller's vertex ids: new vertex i is old vertex perm[i], inverse[v] is old
// v's new id. Grid-stride over the caller's ids, gathering from the new ones. (Walking the
// new ids instead, streaming reads and scattering writes, was slower on the H200: 299.7
// against 259.2 us per Kronecker 21 call.) A parent is read only for a reached vertex, so
// the search's parents need no initialisation. __ldcg: when the search's own launch runs
// this after its last grid barrier, this SM's L1 may hold lines of the labels read before
// other blocks wrote them.
#pragma once
#include <morphgpu/common.cuh>

namespace bfs {

__device__ __forceinline__ void map_back(const int* dist_new, const mg::vid_t* parent_new,
                                         const mg::vid_t* __restrict__ perm,
                                         const mg::vid_t* __restrict__ inverse, mg::i64 n,
                                         int* dist, mg::vid_t* parent) {
    for (mg::i64 v = mg::global_tid(); v < n; v += mg::global_stride()) {
        const mg::vid_t w = inverse[v];
        const int d = __ldcg(dist_new + w);
        dist[v] = d;
        if (parent) parent[v] = d >= 0 ? perm[__ldcg(parent_new + w)] : (mg::vid_t)-1;
    }
}

}  // namespace bfs
