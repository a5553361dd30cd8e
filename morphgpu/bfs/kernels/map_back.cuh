// Results of a search on the degree-relabelled graph (gpu/workspace.py, Workspace.degree_relabelled)
// back in the caller's vertex ids: new vertex i is old vertex perm[i], inverse[v] is old
// v's new id. Grid-stride over the caller's ids, gathering from the new ones. (Walking the
// new ids instead, streaming reads and scattering writes, was slower on the H200: 299.7
// against 259.2 us per Kronecker 21 call.) A parent is read only for a reached vertex, so
// the search's parents need no initialisation. __ldcg: when the search's own launch runs
// this after its last grid barrier, this SM's L1 may hold lines of the labels read before
// other blocks wrote them.
//
// One vertex at a time, a thread waited on four dependent gathers per vertex (inverse, the
// label, the parent, perm of the parent): ~16 such chains per thread on Kronecker 21 were
// ~40 us after the last level (H100). Here a thread takes MAP_BACK_BATCH vertices at once,
// each load issued for all of them before any is used, and the label and the parent are
// loaded together (the parent slot of an unreached vertex is read but not used: it holds
// whatever the search left there), so a batch costs three round trips, not four per vertex.
// reach_end: no new id at or past it has an in-neighbour (Workspace.bottom_up_end), so
// such a vertex is reached only if it is the source: its labels are not read at all (~40 %
// of a Kronecker graph's vertices are isolated, and relabelling puts them last).
#pragma once
#include <morphgpu/common.cuh>

#ifndef MG_BFS_MAP_BACK_BATCH
#define MG_BFS_MAP_BACK_BATCH 4
#endif

namespace bfs {

__device__ __forceinline__ void map_back(const int* dist_new, const mg::vid_t* parent_new,
                                         const mg::vid_t* __restrict__ perm,
                                         const mg::vid_t* __restrict__ inverse, mg::i64 n,
                                         mg::i64 reach_end, mg::vid_t source,
                                         int* dist, mg::vid_t* parent) {
    using mg::i64;
    using mg::vid_t;
    constexpr int BATCH = MG_BFS_MAP_BACK_BATCH;
    const i64 stride = mg::global_stride();
    for (i64 base = mg::global_tid(); base < n; base += BATCH * stride) {
        vid_t w[BATCH];
#pragma unroll
        for (int t = 0; t < BATCH; ++t) {
            const i64 v = base + t * stride;
            w[t] = v < n ? inverse[v] : (vid_t)-1;
        }
        int d[BATCH];
        vid_t p[BATCH];
#pragma unroll
        for (int t = 0; t < BATCH; ++t) {
            const bool may_reach = w[t] >= 0 && ((i64)w[t] < reach_end || w[t] == source);
            d[t] = may_reach ? __ldcg(dist_new + w[t]) : -1;
            p[t] = may_reach && parent ? __ldcg(parent_new + w[t]) : (vid_t)0;
        }
#pragma unroll
        for (int t = 0; t < BATCH; ++t) p[t] = d[t] >= 0 && parent ? perm[p[t]] : (vid_t)-1;
#pragma unroll
        for (int t = 0; t < BATCH; ++t) {
            const i64 v = base + t * stride;
            if (v >= n) continue;
            dist[v] = d[t];
            if (parent) parent[v] = p[t];
        }
    }
}

// Every new id may have been reached (relabel_back.cu's form, after a search whose copy
// has no trimmed tail).
__device__ __forceinline__ void map_back(const int* dist_new, const mg::vid_t* parent_new,
                                         const mg::vid_t* __restrict__ perm,
                                         const mg::vid_t* __restrict__ inverse, mg::i64 n,
                                         int* dist, mg::vid_t* parent) {
    map_back(dist_new, parent_new, perm, inverse, n, n, (mg::vid_t)-1, dist, parent);
}

}  // namespace bfs
