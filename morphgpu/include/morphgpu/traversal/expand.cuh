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
#include <morphgpu/adjacency.cuh>
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
};

// Block-wide: every thread of the block calls it (has = false for a thread without a
// vertex). Ends with a __syncthreads, so it may be called again right away.
// Adj: an adjacency layout (adjacency.cuh); the CSR overload below keeps the old form.
template <int BLOCK, typename Adj, typename Visit>
__device__ void expand_gather(GatherScratch<BLOCK>& s, const Adj& adj, bool has, vid_t v,
                              const Visit& visit) {
    eid_t b = 0, e = 0;
    if (has) {
        b = adj.begin(v);
        e = adj.end(v);
    }
    // CTA-wide rows: the highest-numbered thread holding one wins the election (a shared
    // atomicMax, so there is no racing plain store), gives its row to the block, and the
    // block strides over it together.
    if (threadIdx.x == 0) s.cta_owner = -1;
    while (__syncthreads_or(e - b >= (eid_t)BLOCK)) {
        if (e - b >= (eid_t)BLOCK) atomicMax(&s.cta_owner, (int)threadIdx.x);
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
        const eid_t row_begin = s.cta_begin;
        __syncthreads();
        if (threadIdx.x == 0) s.cta_owner = -1;
        for (eid_t k = row_begin + (eid_t)threadIdx.x; k < row_end; k += BLOCK)
            visit(row_src, adj.at(k));
    }
    // Warp-wide rows: the lowest lane holding one (a ballot, no shared election).
    const unsigned w = warp_id(), lane = lane_id();
    while (true) {
        const unsigned big = __ballot_sync(0xffffffffu, e - b >= 32);
        if (big == 0u) break;
        const int owner = __ffs(big) - 1;
        if ((int)lane == owner) {
            s.warp_begin[w] = b;
            s.warp_end[w] = e;
            s.warp_src[w] = v;
            b = e;
        }
        __syncwarp();
        const eid_t row_end = s.warp_end[w];
        const vid_t row_src = s.warp_src[w];
        for (eid_t k = s.warp_begin[w] + (eid_t)lane; k < row_end; k += 32)
            visit(row_src, adj.at(k));
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
            visit(s.src[lo], adj.at(s.begin[lo] + (eid_t)(k - s.offset[lo])));
        }
    }
    __syncthreads();
}

template <int BLOCK, typename Visit>
__device__ __forceinline__ void expand_gather(GatherScratch<BLOCK>& s, const eid_t* indptr,
                                              const vid_t* indices, bool has, vid_t v,
                                              const Visit& visit) {
    expand_gather<BLOCK>(s, CsrAdjacency{indptr, indices}, has, v, visit);
}

// Grid-wide expansion of a short list of long rows (the frontier's hubs), as ONE flat
// edge array: every block builds the same prefix sum of the rows' lengths in shared
// memory, then each thread of the grid takes every global_stride()-th edge and finds its
// row by binary search. expand_gather hands a hub to the one block that holds it (its CTA
// phase), so a row of 100,000 edges took 200 steps of one block while the rest of the
// grid waited at the next barrier; here it takes one step of the whole grid.
// Block-wide (every thread of every block calls it); n_rows <= CAP; ends with a
// __syncthreads, so the scratch can be reused right away. The visitor must not use warp
// collectives (the grid-stride loop diverges): StatusVisit.
template <int CAP>
struct FlatRows {
    i64 offset[CAP];  // exclusive prefix sum of the rows' lengths
    eid_t begin[CAP];
    vid_t src[CAP];
};

template <int BLOCK, int CAP, typename Adj, typename Visit>
__device__ void expand_rows_grid(FlatRows<CAP>& s, const Adj& adj, const vid_t* rows,
                                 i64 n_rows, const Visit& visit) {
    static_assert(CAP % BLOCK == 0, "CAP must be a multiple of BLOCK");
    constexpr int PER = CAP / BLOCK;  // consecutive rows per thread
    vid_t v[PER];
    eid_t b[PER];
    i64 length[PER];
    i64 mine = 0;
#pragma unroll
    for (int r = 0; r < PER; ++r) {
        const i64 idx = (i64)threadIdx.x * PER + r;
        v[r] = 0;
        b[r] = 0;
        length[r] = 0;
        if (idx < n_rows) {
            v[r] = rows[idx];
            b[r] = adj.begin(v[r]);
            length[r] = (i64)(adj.end(v[r]) - b[r]);
            mine += length[r];
        }
    }
    i64 total;
    i64 offset = block_exclusive_sum<BLOCK, i64>(mine, &total);
#pragma unroll
    for (int r = 0; r < PER; ++r) {
        const i64 idx = (i64)threadIdx.x * PER + r;
        if (idx < n_rows) {
            s.offset[idx] = offset;
            s.begin[idx] = b[r];
            s.src[idx] = v[r];
            offset += length[r];
        }
    }
    __syncthreads();
    for (i64 k = global_tid(); k < total; k += global_stride()) {
        // The last row whose offset is <= k owns edge k (an empty row shares the offset of
        // the next one, so the search passes it).
        int lo = 0, hi = (int)n_rows - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (s.offset[mid] <= k) lo = mid; else hi = mid - 1;
        }
        visit(s.src[lo], adj.at(s.begin[lo] + (eid_t)(k - s.offset[lo])));
    }
    __syncthreads();
}

template <int BLOCK, int CAP, typename Visit>
__device__ __forceinline__ void expand_rows_grid(FlatRows<CAP>& s, const eid_t* indptr,
                                                 const vid_t* indices, const vid_t* rows,
                                                 i64 n_rows, const Visit& visit) {
    expand_rows_grid<BLOCK, CAP>(s, CsrAdjacency{indptr, indices}, rows, n_rows, visit);
}

// Per-thread: no synchronisation, no shared memory.
template <typename Adj, typename Visit>
__device__ __forceinline__ void expand_thread(const Adj& adj, vid_t v, const Visit& visit) {
    const eid_t end = adj.end(v);
    for (eid_t k = adj.begin(v); k < end; ++k) visit(v, adj.at(k));
}

template <typename Visit>
__device__ __forceinline__ void expand_thread(const eid_t* indptr, const vid_t* indices,
                                              vid_t v, const Visit& visit) {
    expand_thread(CsrAdjacency{indptr, indices}, v, visit);
}

}  // namespace traversal
}  // namespace mg
