// Expand (advance): hand every out-edge of a set of frontier vertices to a visitor, with
// Merrill et al.'s scan + warp + CTA neighbour gathering (§5.3) as the load balance:
//
// - CTA: while some thread of the block holds a row of >= BLOCK edges, the block elects
//   one such thread and all BLOCK threads stride over that row together;
// - warp: while some lane of a warp holds a row of >= 32 edges, the warp does the same;
// - scan: the remaining short rows are laid end to end by a block-wide prefix sum, and
//   each thread takes every BLOCK-th edge of the concatenation, finding its row by binary
//   search over the block's offsets, so a block with one row of 31 and 255 empty rows
//   still uses all its threads.
//
// expand_thread is the unbalanced policy (each thread walks its own row): cheapest when
// every row is a handful of edges (meshes, roads).
#pragma once
#include <morphgpu/common.cuh>
#include <morphgpu/worklist.cuh>

namespace mg {
namespace traversal {

template <int BLOCK>
struct GatherScratch {
    i64 offset[BLOCK];  // exclusive prefix sum of the short rows' lengths
    eid_t begin[BLOCK];
    vid_t src[BLOCK];
    eid_t cta_begin, cta_end;
    vid_t cta_src;
    int cta_owner;
    eid_t warp_begin[BLOCK / 32];
    eid_t warp_end[BLOCK / 32];
    vid_t warp_src[BLOCK / 32];
    int warp_owner[BLOCK / 32];
};

// Block-wide: every thread of the block calls it (has = false for a thread without a
// vertex). Ends with a __syncthreads, so it may be called again right away.
template <int BLOCK, typename Visit>
__device__ void expand_gather(GatherScratch<BLOCK>& s, const eid_t* indptr,
                              const vid_t* indices, bool has, vid_t v, const Visit& visit) {
    eid_t b = 0, e = 0;
    if (has) {
        b = indptr[v];
        e = indptr[(i64)v + 1];
    }
    // CTA-wide rows.
    while (__syncthreads_or(e - b >= (eid_t)BLOCK)) {
        if (e - b >= (eid_t)BLOCK) s.cta_owner = threadIdx.x;
        __syncthreads();
        if (s.cta_owner == (int)threadIdx.x) {
            s.cta_begin = b;
            s.cta_end = e;
            s.cta_src = v;
            b = e;
        }
        __syncthreads();
        const eid_t row_end = s.cta_end;
        const vid_t row_src = s.cta_src;
        for (eid_t k = s.cta_begin + (eid_t)threadIdx.x; k < row_end; k += BLOCK)
            visit(row_src, indices[k]);
        __syncthreads();
    }
    // Warp-wide rows.
    const unsigned w = warp_id(), lane = lane_id();
    while (__any_sync(0xffffffffu, e - b >= 32)) {
        if (e - b >= 32) s.warp_owner[w] = (int)lane;
        __syncwarp();
        if (s.warp_owner[w] == (int)lane) {
            s.warp_begin[w] = b;
            s.warp_end[w] = e;
            s.warp_src[w] = v;
            b = e;
        }
        __syncwarp();
        const eid_t row_end = s.warp_end[w];
        const vid_t row_src = s.warp_src[w];
        for (eid_t k = s.warp_begin[w] + (eid_t)lane; k < row_end; k += 32)
            visit(row_src, indices[k]);
        __syncwarp();
    }
    // Short rows, fine-grained through a block-wide scan.
    i64 total;
    const i64 offset = block_exclusive_sum<BLOCK, i64>((i64)(e - b), &total);
    s.offset[threadIdx.x] = offset;
    s.begin[threadIdx.x] = b;
    s.src[threadIdx.x] = v;
    __syncthreads();
    for (i64 base = 0; base < total; base += BLOCK) {
        const i64 k = base + threadIdx.x;
        if (k < total) {
            // The last thread whose offset is <= k owns edge k (empty rows share the
            // offset of the next row, so the search skips past them).
            int lo = 0, hi = BLOCK - 1;
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (s.offset[mid] <= k) lo = mid; else hi = mid - 1;
            }
            visit(s.src[lo], indices[s.begin[lo] + (eid_t)(k - s.offset[lo])]);
        }
    }
    __syncthreads();
}

// Per-thread: no synchronisation, no shared memory.
template <typename Visit>
__device__ __forceinline__ void expand_thread(const eid_t* indptr, const vid_t* indices,
                                              vid_t v, const Visit& visit) {
    const eid_t end = indptr[(i64)v + 1];
    for (eid_t k = indptr[v]; k < end; ++k) visit(v, indices[k]);
}

}  // namespace traversal
}  // namespace mg
