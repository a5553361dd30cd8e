// Fixed-width rows (ELL) for graphs of small maximum degree (roads, meshes, grids): row v's
// neighbours sit at ell[v * K, v * K + K), padded with -1. A vertex's neighbours are then one
// memory round trip away from its id (one 16- or 32-byte load), where CSR needs two
// dependent trips (indptr, then indices). On deep graphs every level is a chain of such
// trips, so this is the level's latency, not its bandwidth. The host builds the array
// (morphgpu/bfs/gpu/workspace.py, Workspace.ell); K is a compile-time constant (4, 8 or 16).
#pragma once
#include <morphgpu/common.cuh>
#include <morphgpu/worklist.cuh>

namespace mg {
namespace traversal {

// Row u into registers with vector loads through the read-only path (the array never
// changes during a search). Rows are 16-byte aligned: K * sizeof(vid_t) is a multiple of 16
// and the allocation is.
template <int K>
__device__ __forceinline__ void load_ell_row(const vid_t* __restrict__ ell, vid_t u,
                                             vid_t (&row)[K]) {
    const vid_t* p = ell + (i64)u * K;
    if constexpr (sizeof(vid_t) == 4 && K % 4 == 0) {
#pragma unroll
        for (int q = 0; q < K / 4; ++q) {
            const int4 x = __ldg(reinterpret_cast<const int4*>(p) + q);
            row[4 * q] = (vid_t)x.x;
            row[4 * q + 1] = (vid_t)x.y;
            row[4 * q + 2] = (vid_t)x.z;
            row[4 * q + 3] = (vid_t)x.w;
        }
    } else if constexpr (sizeof(vid_t) == 8 && K % 2 == 0) {
#pragma unroll
        for (int q = 0; q < K / 2; ++q) {
            const longlong2 x = __ldg(reinterpret_cast<const longlong2*>(p) + q);
            row[2 * q] = (vid_t)x.x;
            row[2 * q + 1] = (vid_t)x.y;
        }
    } else {
#pragma unroll
        for (int k = 0; k < K; ++k) row[k] = __ldg(p + k);
    }
}

template <int K>
__device__ __forceinline__ void fill_ell_row(vid_t (&row)[K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) row[k] = (vid_t)-1;
}

// One grid-wide top-down level over an ELL graph: a thread per frontier vertex claims each
// neighbour with an atomicCAS straight away (no label pre-check: that would add a round
// trip, and a CAS on a labelled vertex writes nothing), and the warp reserves the output
// slots of its winners with one atomicAdd. Round trips per level: the frontier entry, the
// row, the claims. Must be called by whole warps (every lane, with or without a vertex).
// `spread` places consecutive warps of the frontier on different blocks, as the CSR grid
// levels of bfs/kernels/persistent.cu (expand_rows_warp_flat) do.
template <int K>
__device__ void expand_ell_claim(const vid_t* __restrict__ ell, const vid_t* in, i64 n_in,
                                 int* dist, vid_t* parent, int next_level, vid_t* out,
                                 u64* out_tail, bool spread = false) {
    const unsigned lane = lane_id();
    const i64 first = spread ? ((i64)warp_id() * gridDim.x + blockIdx.x) * 32
                             : global_tid() - lane;
    for (i64 base = first; base < n_in; base += global_stride()) {
        const i64 i = base + lane;
        const bool has = i < n_in;
        const vid_t v = has ? in[i] : (vid_t)0;
        vid_t row[K];
        if (has) load_ell_row<K>(ell, v, row);
        else fill_ell_row<K>(row);
        bool mine[K];
        int count = 0;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            mine[k] = row[k] >= 0 && atomicCAS(dist + row[k], -1, next_level) == -1;
            count += mine[k];
        }
        const int inclusive = warp_inclusive_sum(count);
        const int total = __shfl_sync(0xffffffffu, inclusive, 31);
        if (total == 0) continue;  // warp-uniform
        u64 start = 0;
        if (lane == 31) start = atomicAdd(out_tail, (u64)total);
        u64 slot = __shfl_sync(0xffffffffu, start, 31) + (u64)(inclusive - count);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (mine[k]) {
                if (parent) parent[row[k]] = v;
                out[slot++] = row[k];
            }
        }
    }
}

}  // namespace traversal
}  // namespace mg
