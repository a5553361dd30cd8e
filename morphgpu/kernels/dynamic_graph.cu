// Kernels of morphgpu/dynamic_graph.py: the row lookup every batch starts with.
//
// dyn_lookup: a batch of entries (u, v), sorted by u then v, is split into one segment per
// touched row u (seg_start, seg_count). For each entry, find the position of v in u's row
// (hit[j] = that position) or leave -1. Rows are unsorted sets, so instead of scanning a
// row once per batch entry, each stored neighbour w of a touched row looks itself up in
// the row's (sorted) segment of the batch by binary search: the work is the touched rows'
// length plus a logarithm, whatever the batch's shape, and a hub touched by a thousand
// entries is read once. One warp per page of the touched rows (page_start: exclusive
// prefix sum of the rows' page counts), one lane per slot: a page is PAGE consecutive ids,
// so the warp's loads are coalesced. Each entry matches at most one stored neighbour (a
// row holds an edge once), so hit[] has at most one writer per element.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>

using namespace mg;

extern "C" __global__ void dyn_lookup(const i64* __restrict__ bounds, const page_t* __restrict__ table,
                                      const vid_t* __restrict__ pages, const i64* __restrict__ touched,
                                      const i64* __restrict__ page_start, i64 n_touched,
                                      i64 total_pages, const i64* __restrict__ seg_start,
                                      const i64* __restrict__ seg_count,
                                      const i64* __restrict__ batch_dst, i64* hit) {
    const i64 warps = global_stride() / 32;
    for (i64 p = global_tid() / 32; p < total_pages; p += warps) {
        // The touched row that owns page p: the last t with page_start[t] <= p.
        i64 lo = 0, hi = n_touched - 1;
        while (lo < hi) {
            const i64 mid = (lo + hi + 1) >> 1;
            if (page_start[mid] <= p) lo = mid; else hi = mid - 1;
        }
        const i64 u = touched[lo];
        const i64 begin = bounds[2 * u], end = bounds[2 * u + 1];
        const i64 first = begin + ((p - page_start[lo]) << PAGE_SHIFT);
        const i64 s0 = seg_start[lo], s1 = s0 + seg_count[lo];
        for (int slot = (int)lane_id(); slot < PAGE; slot += 32) {
            const i64 k = first + slot;
            if (k >= end) break;
            const i64 w = (i64)pages[((i64)table[k >> PAGE_SHIFT] << PAGE_SHIFT) |
                                     (k & (PAGE - 1))];
            i64 a = s0, b = s1;  // the first batch entry of the segment with dst >= w
            while (a < b) {
                const i64 mid = (a + b) >> 1;
                if (batch_dst[mid] < w) a = mid + 1; else b = mid;
            }
            if (a < s1 && batch_dst[a] == w) hit[a] = k;
        }
    }
}
