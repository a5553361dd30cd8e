// Results of a search on the degree-relabelled graph (gpu/workspace.py, Workspace.degree_relabelled)
// back in the caller's vertex ids: new vertex i is old vertex perm[i], inverse[v] is old
// v's new id. Grid-stride over the caller's ids, gathering from the new ones. (Walking the
// new ids instead, streaming reads and scattering writes, was slower on the H200: 299.7
// against 259.2 us per Kronecker 21 call.) A parent is read only for a reached vertex, so
// the search's parents need no initialisation. __ldcg: when the search's own launch runs
// this after its last grid barrier, this SM's L1 may hold lines of the labels read before
// other blocks wrote them.
//
// The label and the parent are loaded together (the parent slot of an unreached vertex is
// read but not used: it holds whatever the search left there). reach_end: no new id at or
// past it has an in-neighbour (Workspace.bottom_up_end), so such a vertex is reached only
// if it is the source: its labels are not read at all (~40 % of a Kronecker graph's
// vertices are isolated, and relabelling puts them last). Taking 4 vertices per thread,
// every load issued for all four before any is used, measured equal (H100, 32 roots:
// 1.02x / 1.00x / 1.00x on Kronecker 21 / 22 / uniform 2^22) and was removed.
#pragma once
#include <morphgpu/common.cuh>

namespace bfs {

__device__ __forceinline__ void map_back(const int* dist_new, const mg::vid_t* parent_new,
                                         const mg::vid_t* __restrict__ perm,
                                         const mg::vid_t* __restrict__ inverse, mg::i64 n,
                                         mg::i64 reach_end, mg::vid_t source,
                                         int* dist, mg::vid_t* parent) {
    using mg::i64;
    using mg::vid_t;
    for (i64 v = mg::global_tid(); v < n; v += mg::global_stride()) {
        const vid_t w = inverse[v];
        const bool may_reach = (i64)w < reach_end || w == source;
        const int d = may_reach ? __ldcg(dist_new + w) : -1;
        const vid_t p = may_reach && parent ? __ldcg(parent_new + w) : (vid_t)0;
        dist[v] = d;
        if (parent) parent[v] = d >= 0 ? perm[p] : (vid_t)-1;
    }
}

// Every new id may have been reached (relabel_back.cu's form, after a search whose copy
// has no trimmed tail). No bound at all: a copy may have more ids than the caller's graph
// (the tiled copy's padded ids, gpu/tiled.py), so n is no bound on a new id. (A bound of
// n made every vertex whose padded id passed n read as unreached: the tiled variant's
// wrong answers of the 2026-11-26 H100 run.)
__device__ __forceinline__ void map_back(const int* dist_new, const mg::vid_t* parent_new,
                                         const mg::vid_t* __restrict__ perm,
                                         const mg::vid_t* __restrict__ inverse, mg::i64 n,
                                         int* dist, mg::vid_t* parent) {
    constexpr mg::i64 NO_BOUND = 0x7fffffffffffffffll;
    map_back(dist_new, parent_new, perm, inverse, n, NO_BOUND, (mg::vid_t)-1, dist, parent);
}

}  // namespace bfs
