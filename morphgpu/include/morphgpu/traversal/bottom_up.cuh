// Bottom-up step (Beamer; Enterprise §4.3): an unvisited vertex looks through its
// in-neighbours for one on the current frontier and stops at the first.
//
// The hub cache: a small table in shared memory holding ids of high-degree vertices of the
// current frontier (filled by the caller at the start of the level); a neighbour found in
// it is adopted without reading its label from global memory. Bottom-up levels are
// dominated by hits on hubs, which is why a few KB of ids save most label reads.
#pragma once
#include <morphgpu/common.cuh>

namespace mg {
namespace traversal {

template <int SLOTS>
struct HubCache {
    vid_t slot[SLOTS];

    __device__ static __forceinline__ unsigned hash(vid_t v) {
        return ((unsigned)v * 2654435761u) % (unsigned)SLOTS;
    }
    // Block-wide fill from the frontier's hubs (ids in hubs[0, n_hubs)), later ids win.
    __device__ void fill(const vid_t* hubs, i64 n_hubs) {
        for (int i = threadIdx.x; i < SLOTS; i += blockDim.x) slot[i] = (vid_t)-1;
        __syncthreads();
        for (i64 i = threadIdx.x; i < n_hubs; i += blockDim.x) slot[hash(hubs[i])] = hubs[i];
        __syncthreads();
    }
    __device__ __forceinline__ bool holds(vid_t v) const { return slot[hash(v)] == v; }
};

// Returns true (and labels v) when v has an in-neighbour at `level`. Neighbours are
// inspected four at a time, their ids and then their labels loaded together, so a row
// costs one memory round trip per four edges rather than per edge; the first hit in row
// order wins, as in the one-at-a-time scan.
template <typename Cache>
__device__ __forceinline__ bool adopt_parent(const eid_t* rev_indptr, const vid_t* rev_indices,
                                             int* dist, vid_t* parent, vid_t v, int level,
                                             const Cache* cache) {
    constexpr int STEP = 4;
    const eid_t end = rev_indptr[(i64)v + 1];
    eid_t k = rev_indptr[v];
    for (; k + STEP <= end; k += STEP) {
        vid_t u[STEP];
        bool hit[STEP];
#pragma unroll
        for (int t = 0; t < STEP; ++t) u[t] = rev_indices[k + t];
#pragma unroll
        for (int t = 0; t < STEP; ++t) hit[t] = cache && cache->holds(u[t]);
#pragma unroll
        for (int t = 0; t < STEP; ++t) hit[t] = hit[t] || dist[u[t]] == level;
#pragma unroll
        for (int t = 0; t < STEP; ++t) {
            if (hit[t]) {
                dist[v] = level + 1;
                if (parent) parent[v] = u[t];
                return true;
            }
        }
    }
    for (; k < end; ++k) {
        const vid_t u = rev_indices[k];
        if ((cache && cache->holds(u)) || dist[u] == level) {
            dist[v] = level + 1;
            if (parent) parent[v] = u;
            return true;
        }
    }
    return false;
}

}  // namespace traversal
}  // namespace mg
