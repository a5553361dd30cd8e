// Merge-path work redistribution (the load-balanced BFS paper, §3-4): the frontier's rows
// are flattened into one sequence of items (item k = edge k of the level) by merging the
// rows' inclusive degree scan `ends` with the item indices 0..total-1. Two tilings of that
// merge give the paper's couplings of redistribution and gathering:
//
// - diagonal tiles (balanced redistribution): tile t covers merge steps [t*TILE,
//   (t+1)*TILE), i.e. a fixed amount of rows + items; the items it yields (0..TILE) are
//   gathered at once, so gathering is imbalanced where rows are long relative to TILE;
// - item tiles (imbalanced redistribution): tile t covers items [t*TILE, (t+1)*TILE), so
//   gathering is perfectly balanced, but the rows a tile must stage vary (many short or
//   empty rows make a tile's redistribution long).
//
// A tile's rows are staged in shared memory (their end, source vertex and the shift from
// item index to edge position), then every thread finds the row of each of its items by
// binary search over the staged ends and hands (source, edge position) to a callback.
// An item tile that spans more rows than fit is not staged: its items search the global
// ends between the tile's first and last row instead.
//
// Also here: the frontier's inclusive degree scan on the device with the frontier length
// read from device memory (two launches, fixed grid), so no level needs a host read to
// size it.
#pragma once
#include <morphgpu/common.cuh>
#include <morphgpu/worklist.cuh>

namespace mg {
namespace traversal {

// The first r in [lo, lo + count) with ends[r] > k (the row that owns item k), or
// lo + count when there is none.
__device__ __forceinline__ i64 owning_row(const i64* ends, i64 lo, i64 count, i64 k) {
    i64 hi = lo + count;
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (ends[mid] > k) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// Warp-wide (every lane of a full warp): the first i in [lo, hi) where pred(i) is false,
// or hi, for a predicate that is true up to some index and false from there on. A 32-way
// search: each round the lanes probe 32 evenly spaced indices and keep the gap where the
// predicate turns false, so a range of 2^24 takes 5 dependent loads instead of 24, which
// is what a tile's setup waits on. Every lane returns the same index.
template <typename Pred>
__device__ i64 warp_first_false(i64 lo, i64 hi, const Pred& pred) {
    const unsigned lane = lane_id();
    while (hi - lo > 32) {  // warp-uniform
        const i64 step = (hi - lo + 31) / 32;
        const i64 probe = lo + (i64)lane * step;
        const bool holds = probe < hi && pred(probe);
        const int below = __popc(__ballot_sync(0xffffffffu, holds));  // probes 0..below-1 hold
        if (below == 0) return lo;
        const i64 next_hi = lo + (i64)below * step;
        lo = lo + (i64)(below - 1) * step + 1;
        hi = next_hi < hi ? next_hi : hi;
    }
    const bool holds = lo + (i64)lane < hi && pred(lo + (i64)lane);
    return lo + __popc(__ballot_sync(0xffffffffu, holds));
}

struct RowEndsAtMost {  // owning_row's predicate: row r ends at or before item k
    const i64* ends;
    i64 k;
    __device__ __forceinline__ bool operator()(i64 r) const { return ends[r] <= k; }
};

struct PathTakesRow {  // warp_merge_path_rows's predicate at diagonal d
    const i64* ends;
    i64 d;
    __device__ __forceinline__ bool operator()(i64 mid) const { return ends[mid] <= d - 1 - mid; }
};

template <int TILE>
struct MergeTile {
    i64 end[TILE + 1];    // inclusive item end of each staged row
    i64 shift[TILE + 1];  // edge position of item k in that row = k + shift
    vid_t src[TILE + 1];
    i64 first_row, n_rows;  // the tile's rows [first_row, first_row + n_rows)
    i64 first_item, end_item;
    int staged;
};

// Block-wide: loads rows [first_row, first_row + n_rows) into the tile (when they fit)
// and ends with a __syncthreads.
template <int TILE>
__device__ void stage_rows(MergeTile<TILE>& s, const i64* ends, const vid_t* queue,
                           const eid_t* indptr) {
    const bool fits = s.n_rows <= TILE + 1;  // uniform: read after a barrier
    if (fits) {
        for (i64 x = threadIdx.x; x < s.n_rows; x += blockDim.x) {
            const i64 r = s.first_row + x;
            const vid_t v = queue[r];
            const eid_t b = indptr[v];
            const i64 degree = (i64)(indptr[(i64)v + 1] - b);
            s.end[x] = ends[r];
            s.shift[x] = (i64)b - (ends[r] - degree);
            s.src[x] = v;
        }
    }
    if (threadIdx.x == 0) s.staged = fits;
    __syncthreads();
}

// Warp-wide: rows consumed on the merge path at diagonal d (0 <= d <= n_rows + total):
// merging the rows' inclusive ends with the items 0..total-1, a row end is consumed before
// an item of equal value (item ends[r] belongs to row r + 1). The split is (rows, d - rows).
__device__ __forceinline__ i64 warp_merge_path_rows(const i64* ends, i64 n_rows, i64 total,
                                                    i64 d) {
    const i64 lo = d - total > 0 ? d - total : 0;
    const i64 hi = d < n_rows ? d : n_rows;
    return warp_first_false(lo, hi, PathTakesRow{ends, d});
}

// Block-wide (blockDim.x >= 64). Diagonal tile t of the merge path (balanced
// redistribution); warps 0 and 1 search the tile's two ends at once.
template <int TILE>
__device__ void balanced_tile(MergeTile<TILE>& s, const i64* ends, const vid_t* queue,
                              const eid_t* indptr, i64 n_rows, i64 total, i64 t) {
    __shared__ i64 split[2];
    const i64 d0 = t * TILE;
    const i64 d1 = d0 + TILE < n_rows + total ? d0 + TILE : n_rows + total;
    if (warp_id() < 2) {
        const i64 r = warp_merge_path_rows(ends, n_rows, total, warp_id() == 0 ? d0 : d1);
        if (lane_id() == 0) split[warp_id()] = r;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const i64 r0 = split[0], r1 = split[1];
        // Items [d0 - r0, d1 - r1) lie in rows r0 .. min(r1, n_rows - 1).
        const i64 last = r1 < n_rows ? r1 : n_rows - 1;
        s.first_row = r0;
        s.n_rows = last >= r0 ? last - r0 + 1 : 0;
        s.first_item = d0 - r0;
        s.end_item = d1 - r1;
    }
    __syncthreads();
    stage_rows(s, ends, queue, indptr);
}

// Block-wide (blockDim.x >= 64). Item tile t (imbalanced redistribution, balanced
// gathering): items [t*TILE, min((t+1)*TILE, total)), total > t*TILE; warps 0 and 1 find
// the rows of its first and last item at once.
template <int TILE>
__device__ void item_tile(MergeTile<TILE>& s, const i64* ends, const vid_t* queue,
                          const eid_t* indptr, i64 n_rows, i64 total, i64 t) {
    __shared__ i64 split[2];
    const i64 k0 = t * TILE;
    const i64 k1 = k0 + TILE < total ? k0 + TILE : total;
    if (warp_id() < 2) {
        const i64 k = warp_id() == 0 ? k0 : k1 - 1;
        const i64 r = warp_first_false(0, n_rows, RowEndsAtMost{ends, k});
        if (lane_id() == 0) split[warp_id()] = r;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        s.first_row = split[0];
        s.n_rows = split[1] - split[0] + 1;
        s.first_item = k0;
        s.end_item = k1;
    }
    __syncthreads();
    stage_rows(s, ends, queue, indptr);
}

// Every thread takes the tile's items threadIdx.x, + blockDim.x, ... and calls
// visit(src, edge_position) for each. Not block-wide (no barrier inside); the caller puts
// a __syncthreads between this and the next tile's setup.
template <int TILE, typename Visit>
__device__ __forceinline__ void visit_tile_items(const MergeTile<TILE>& s, const i64* ends,
                                                 const vid_t* queue, const eid_t* indptr,
                                                 const Visit& visit) {
    const i64 end_item = s.end_item;
    for (i64 k = s.first_item + threadIdx.x; k < end_item; k += blockDim.x) {
        if (s.staged) {
            const i64 x = owning_row(s.end, 0, s.n_rows, k);
            visit(s.src[x], (eid_t)(k + s.shift[x]));
        } else {
            const i64 r = owning_row(ends, s.first_row, s.n_rows, k);
            const vid_t v = queue[r];
            const eid_t b = indptr[v];
            const i64 degree = (i64)(indptr[(i64)v + 1] - b);
            visit(v, (eid_t)(k - (ends[r] - degree) + (i64)b));
        }
    }
}

// Frontier degree scan, part 1 (block-wide, grid of any size): block b sums the degrees of
// its chunk of the queue (chunks of ceil(n / gridDim.x)) into block_sums[b].
template <int BLOCK>
__device__ void degree_scan_chunks(const eid_t* indptr, const vid_t* queue, i64 n,
                                   i64* block_sums) {
    const i64 chunk = (n + gridDim.x - 1) / gridDim.x;
    const i64 begin = (i64)blockIdx.x * chunk;
    const i64 end = begin + chunk < n ? begin + chunk : n;
    i64 mine = 0;
    for (i64 i = begin + threadIdx.x; i < end; i += BLOCK) {
        const vid_t v = queue[i];
        mine += (i64)(indptr[(i64)v + 1] - indptr[v]);
    }
    i64 total;
    block_exclusive_sum<BLOCK, i64>(mine, &total);
    if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

// Part 2 (block-wide, the same grid as part 1): block b adds up the sums of the blocks
// before it, then writes the inclusive scan of its chunk's degrees into ends.
template <int BLOCK>
__device__ void degree_scan_write(const eid_t* indptr, const vid_t* queue, i64 n,
                                  const i64* block_sums, i64* ends) {
    i64 before = 0;
    for (i64 b = threadIdx.x; b < (i64)blockIdx.x; b += BLOCK) before += block_sums[b];
    i64 carry;
    block_exclusive_sum<BLOCK, i64>(before, &carry);
    const i64 chunk = (n + gridDim.x - 1) / gridDim.x;
    const i64 begin = (i64)blockIdx.x * chunk;
    const i64 end = begin + chunk < n ? begin + chunk : n;
    for (i64 base = begin; base < end; base += BLOCK) {  // block-uniform trip count
        const i64 i = base + threadIdx.x;
        i64 degree = 0;
        if (i < end) {
            const vid_t v = queue[i];
            degree = (i64)(indptr[(i64)v + 1] - indptr[v]);
        }
        i64 step;
        const i64 offset = block_exclusive_sum<BLOCK, i64>(degree, &step);
        if (i < end) ends[i] = carry + offset + degree;
        carry += step;
    }
}

}  // namespace traversal
}  // namespace mg
