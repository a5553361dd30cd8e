// Kernels of morphgpu/dynamic_graph_gpu.py: a DynamicGraph's batches of insertions and
// deletions.
//
// The row lookup every batch needs (dyn_lookup_batch): for each batch entry (u, v), is v in
// u's row, and where? Rows are unsorted sets, so instead of scanning a row once per batch
// entry, each stored neighbour w of a touched row looks itself up in the row's (sorted)
// segment of the batch by binary search: the work is the touched rows' length plus a
// logarithm, whatever the batch's shape, and a hub touched by a thousand entries is read
// once. One warp per page of the touched rows, one lane per slot: a page is PAGE
// consecutive ids, so the warp's loads are coalesced. Each entry matches at most one
// stored neighbour (a row holds an edge once), so hit[] has at most one writer per element.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>

using namespace mg;

// ---------------------------------------------------------------------------------------
// The batch pipeline on the GPU (morphgpu/dynamic_graph_gpu.py): a batch of n_in edges
// becomes M = n_in (directed) or 2 n_in (both directions) int64 keys u * n + v, sorted by
// the caller. Entries are never compacted: `keep` marks the last entry of each key (the
// one whose weight wins), `rowfirst` the first entry of each row. A row's segment is
// [seg_start[t], seg_start[t + 1]) of the sorted keys. Counts that size the next launch
// stay on the device (T = rowid[M - 1], page totals in cumulative arrays), so the host
// reads one block of totals per batch.

// totals[] slots (the host reads them once, between the plan and the commit).
enum {
    T_BAD_SRC = 0, T_BAD_DST = 1, T_BAD_WEIGHT = 2,  // first bad index, or INT64_MAX
    T_APPLIED = 3, T_REQUESTED = 4, T_STORED = 5,    // edges inserted/deleted, asked, entries
    T_PAGES = 6, T_TABLE = 7, T_TABLE_LEFT = 8,      // pages to take/free, table entries
    N_TOTALS = 9
};

__device__ __forceinline__ i64 page_slot(const page_t* table, i64 k) {
    return ((i64)table[k >> PAGE_SHIFT] << PAGE_SHIFT) | (k & (PAGE - 1));
}

__device__ __forceinline__ i64 pages_for(i64 degree) {
    return (degree + PAGE - 1) >> PAGE_SHIFT;
}

// Keys of the batch (both directions interleaved for undirected graphs, so the sorted
// order keeps the batch's order between equal keys); ids outside [0, n) are recorded and
// clamped so that the kernels that follow stay in bounds (the host raises before any
// commit). weights_in/out: the weights, doubled for undirected graphs; non-finite recorded.
extern "C" __global__ void dyn_keys(const i64* __restrict__ src, const i64* __restrict__ dst,
                                    i64 n_in, i64 n, int both, const double* weights_in,
                                    i64* keys, double* weights_out, i64* totals) {
    for (i64 i = global_tid(); i < n_in; i += global_stride()) {
        i64 u = src[i], v = dst[i];
        if (u < 0 || u >= n) { atomicMin((long long*)&totals[T_BAD_SRC], (long long)i); u = 0; }
        if (v < 0 || v >= n) { atomicMin((long long*)&totals[T_BAD_DST], (long long)i); v = 0; }
        double w = 0.0;
        if (weights_in) {
            w = weights_in[i];
            if (!isfinite(w)) atomicMin((long long*)&totals[T_BAD_WEIGHT], (long long)i);
        }
        if (both) {
            keys[2 * i] = u * n + v;
            keys[2 * i + 1] = v * n + u;
            if (weights_out) weights_out[2 * i] = weights_out[2 * i + 1] = w;
        } else {
            keys[i] = u * n + v;
            if (weights_out) weights_out[i] = w;
        }
    }
}

// keep[j]: the last entry of its key; rowfirst[j]: the first entry of its row; hit = -1.
extern "C" __global__ void dyn_mark(const i64* __restrict__ keys, i64 m, i64 n,
                                    unsigned char* keep, i64* rowfirst, i64* hit) {
    for (i64 j = global_tid(); j < m; j += global_stride()) {
        const i64 key = keys[j];
        keep[j] = j == m - 1 || keys[j + 1] != key;
        rowfirst[j] = j == 0 || keys[j - 1] / n != key / n;
        hit[j] = -1;
    }
}

// For each row head: the row's slot in the touched list (rowid is rowfirst's inclusive
// sum), its segment start and its page count; seg_start[T] = m.
extern "C" __global__ void dyn_rows(const i64* __restrict__ keys, i64 m, i64 n,
                                    const i64* __restrict__ rowfirst,
                                    const i64* __restrict__ rowid, const i64* __restrict__ bounds,
                                    i64* touched, i64* seg_start, i64* rowpages) {
    for (i64 j = global_tid(); j < m; j += global_stride()) {
        if (j == m - 1) seg_start[rowid[m - 1]] = m;
        if (!rowfirst[j]) continue;
        const i64 t = rowid[j] - 1;
        const i64 u = keys[j] / n;
        touched[t] = u;
        seg_start[t] = j;
        rowpages[t] = pages_for(bounds[2 * u + 1] - bounds[2 * u]);
    }
}

// dyn_lookup over the pipeline's arrays: one warp per page of the touched rows (pages_incl:
// inclusive sum of rowpages; T and the page total read on the device). hit[j] of the
// key's kept entry = the position where its destination is stored.
extern "C" __global__ void dyn_lookup_batch(const i64* __restrict__ bounds,
                                            const page_t* __restrict__ table,
                                            const vid_t* __restrict__ pages,
                                            const i64* __restrict__ touched,
                                            const i64* __restrict__ pages_incl,
                                            const i64* __restrict__ rowid,
                                            const i64* __restrict__ seg_start,
                                            const i64* __restrict__ keys, i64 m, i64 n, i64* hit) {
    if (m == 0) return;
    const i64 n_touched = rowid[m - 1];
    const i64 total = n_touched ? pages_incl[n_touched - 1] : 0;
    const i64 warps = global_stride() / 32;
    for (i64 p = global_tid() / 32; p < total; p += warps) {
        i64 lo = 0, hi = n_touched - 1;  // the first row whose inclusive count passes p
        while (lo < hi) {
            const i64 mid = (lo + hi) >> 1;
            if (pages_incl[mid] > p) hi = mid; else lo = mid + 1;
        }
        const i64 u = touched[lo];
        const i64 before = lo ? pages_incl[lo - 1] : 0;
        const i64 begin = bounds[2 * u], end = bounds[2 * u + 1];
        const i64 first = begin + ((p - before) << PAGE_SHIFT);
        const i64 s0 = seg_start[lo], s1 = seg_start[lo + 1];
        const i64 row_key = u * n;
        for (int slot = (int)lane_id(); slot < PAGE; slot += 32) {
            const i64 k = first + slot;
            if (k >= end) break;
            const i64 want = row_key + (i64)pages[page_slot(table, k)];
            i64 a = s0, b = s1;
            while (a < b) {
                const i64 mid = (a + b) >> 1;
                if (keys[mid] < want) a = mid + 1; else b = mid;
            }
            if (a < s1 && keys[a] == want) {
                while (a + 1 < s1 && keys[a + 1] == want) ++a;  // the kept (last) entry
                hit[a] = k;
            }
        }
    }
}

// Sums of a warp, added to totals[slot] by lane 0 (every lane calls it).
__device__ __forceinline__ void warp_add(i64* totals, int slot, i64 value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    if (lane_id() == 0 && value) atomicAdd((unsigned long long*)&totals[slot], (u64)value);
}

// Insert: new[j] = kept entries not stored yet; present_slot[j] = where a kept entry's edge
// is stored (its weight is updated), else -1. Counts edges (undirected: the entry with
// u <= v) applied and requested.
extern "C" __global__ void dyn_insert_new(const i64* __restrict__ keys, i64 m, i64 n,
                                          int directed, const unsigned char* __restrict__ keep,
                                          const i64* __restrict__ hit,
                                          const page_t* __restrict__ table, i64* fresh,
                                          i64* present_slot, i64* totals) {
    for (i64 base = global_tid() - lane_id(); base < m; base += global_stride()) {
        const i64 j = base + lane_id();
        i64 applied = 0, requested = 0;
        if (j < m) {
            const bool kept = keep[j];
            const i64 h = hit[j];
            const i64 u = keys[j] / n, v = keys[j] - u * n;
            const bool counted = kept && (directed || u <= v);
            fresh[j] = kept && h < 0;
            present_slot[j] = kept && h >= 0 ? page_slot(table, h) : -1;
            applied = counted && h < 0;
            requested = counted;
        }
        warp_add(totals, T_APPLIED, applied);
        warp_add(totals, T_REQUESTED, requested);
    }
}

// Insert, per touched row: new entries c, degree, pages before, pages to take, and the
// table capacity it moves to (0: stays). Totals: pages, table entries, entries stored.
extern "C" __global__ void dyn_insert_plan(const i64* __restrict__ touched,
                                           const i64* __restrict__ rowid, i64 m,
                                           const i64* __restrict__ seg_start,
                                           const i64* __restrict__ fresh_incl,
                                           const i64* __restrict__ bounds,
                                           const i64* __restrict__ table_cap, i64* c_out,
                                           i64* deg_out, i64* before_out, i64* need_out,
                                           i64* newcap_out, i64* totals) {
    const i64 n_touched = m ? rowid[m - 1] : 0;
    for (i64 base = global_tid() - lane_id(); base < n_touched; base += global_stride()) {
        const i64 t = base + lane_id();
        i64 need = 0, newcap = 0, left = 0, c = 0;
        if (t < n_touched) {
            const i64 u = touched[t];
            const i64 s0 = seg_start[t], s1 = seg_start[t + 1];
            c = fresh_incl[s1 - 1] - (s0 ? fresh_incl[s0 - 1] : 0);
            const i64 deg = bounds[2 * u + 1] - bounds[2 * u];
            const i64 before = pages_for(deg), after = pages_for(deg + c);
            need = after - before;
            const i64 cap = table_cap[u];
            if (after > cap) {
                newcap = 1;
                while (newcap < after) newcap <<= 1;
                left = cap;
            }
            c_out[t] = c;
            deg_out[t] = deg;
            before_out[t] = before;
            need_out[t] = need;
            newcap_out[t] = newcap;
        }
        warp_add(totals, T_PAGES, need);
        warp_add(totals, T_TABLE, newcap);
        warp_add(totals, T_TABLE_LEFT, left);
        warp_add(totals, T_STORED, c);
    }
}

// Insert commit, one warp per touched row: move the row's table entries to fresh table
// space when it outgrew it, take its new pages (recycled ones first: rank r of the batch's
// page requests gets free_pages[n_free - 1 - r], then never-used ids from high_water on),
// and set its bounds.
extern "C" __global__ void dyn_insert_rows(const i64* __restrict__ touched,
                                           const i64* __restrict__ rowid, i64 m,
                                           const i64* __restrict__ c, const i64* __restrict__ deg,
                                           const i64* __restrict__ before,
                                           const i64* __restrict__ need,
                                           const i64* __restrict__ need_incl,
                                           const i64* __restrict__ newcap,
                                           const i64* __restrict__ newcap_incl, i64 table_used,
                                           page_t* table, i64* table_cap, i64* bounds,
                                           const page_t* __restrict__ free_pages, i64 n_free,
                                           i64 high_water) {
    const i64 n_touched = m ? rowid[m - 1] : 0;
    const i64 warps = global_stride() / 32;
    for (i64 t = global_tid() / 32; t < n_touched; t += warps) {
        const i64 u = touched[t];
        i64 start = bounds[2 * u] >> PAGE_SHIFT;
        if (newcap[t]) {
            const i64 fresh = table_used + newcap_incl[t] - newcap[t];
            for (i64 i = lane_id(); i < before[t]; i += 32) table[fresh + i] = table[start + i];
            start = fresh;
            if (lane_id() == 0) table_cap[u] = newcap[t];
        }
        const i64 r0 = need_incl[t] - need[t];
        for (i64 i = lane_id(); i < need[t]; i += 32) {
            const i64 r = r0 + i;
            table[start + before[t] + i] =
                r < n_free ? free_pages[n_free - 1 - r] : (page_t)(high_water + r - n_free);
        }
        if (lane_id() == 0) {
            bounds[2 * u] = start << PAGE_SHIFT;
            bounds[2 * u + 1] = (start << PAGE_SHIFT) + deg[t] + c[t];
        }
    }
}

// Insert commit, per entry: a new entry goes after its row's old entries, at its rank
// among the row's new entries; a present edge's weight is overwritten.
extern "C" __global__ void dyn_insert_entries(const i64* __restrict__ keys, i64 m, i64 n,
                                              const i64* __restrict__ fresh,
                                              const i64* __restrict__ fresh_incl,
                                              const i64* __restrict__ rowid,
                                              const i64* __restrict__ seg_start,
                                              const i64* __restrict__ deg,
                                              const i64* __restrict__ bounds,
                                              const page_t* __restrict__ table, vid_t* pages,
                                              double* weights, const double* __restrict__ w,
                                              const i64* __restrict__ present_slot) {
    for (i64 j = global_tid(); j < m; j += global_stride()) {
        if (fresh[j]) {
            const i64 t = rowid[j] - 1;
            const i64 s0 = seg_start[t];
            const i64 rank = fresh_incl[j] - 1 - (s0 ? fresh_incl[s0 - 1] : 0);
            const i64 u = keys[j] / n;
            const i64 slot = page_slot(table, bounds[2 * u] + deg[t] + rank);
            pages[slot] = (vid_t)(keys[j] - u * n);
            if (weights) weights[slot] = w[j];
        } else if (weights && present_slot[j] >= 0) {
            weights[present_slot[j]] = w[j];
        }
    }
}

// Delete, one warp per touched row: entries found (k), edges applied and requested, pages
// the row will free.
extern "C" __global__ void dyn_delete_plan(const i64* __restrict__ touched,
                                           const i64* __restrict__ rowid, i64 m, i64 n,
                                           int directed, const i64* __restrict__ seg_start,
                                           const i64* __restrict__ keys,
                                           const unsigned char* __restrict__ keep,
                                           const i64* __restrict__ hit,
                                           const i64* __restrict__ bounds, i64* k_out,
                                           i64* freed_out, i64* totals) {
    const i64 n_touched = m ? rowid[m - 1] : 0;
    const i64 warps = global_stride() / 32;
    for (i64 t = global_tid() / 32; t < n_touched; t += warps) {
        const i64 s0 = seg_start[t], s1 = seg_start[t + 1];
        i64 k = 0, applied = 0, requested = 0;
        for (i64 j = s0 + lane_id(); j < s1; j += 32) {
            if (!keep[j]) continue;
            const i64 u = keys[j] / n, v = keys[j] - u * n;
            const bool found = hit[j] >= 0;
            const bool counted = directed || u <= v;
            k += found;
            applied += counted && found;
            requested += counted;
        }
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1) {
            k += __shfl_down_sync(0xffffffffu, k, offset);
            applied += __shfl_down_sync(0xffffffffu, applied, offset);
            requested += __shfl_down_sync(0xffffffffu, requested, offset);
        }
        if (lane_id() == 0) {
            const i64 u = touched[t];
            const i64 deg = bounds[2 * u + 1] - bounds[2 * u];
            const i64 freed = pages_for(deg) - pages_for(deg - k);
            k_out[t] = k;
            freed_out[t] = freed;
            atomicAdd((unsigned long long*)&totals[T_STORED], (u64)k);
            atomicAdd((unsigned long long*)&totals[T_APPLIED], (u64)applied);
            atomicAdd((unsigned long long*)&totals[T_REQUESTED], (u64)requested);
            atomicAdd((unsigned long long*)&totals[T_PAGES], (u64)freed);
        }
    }
}

// Rank of this lane among the lanes with `flag` set, and their count (full warp).
__device__ __forceinline__ int warp_rank(bool flag, int* count) {
    const unsigned mask = __ballot_sync(0xffffffffu, flag);
    *count = __popc(mask);
    return __popc(mask & ((1u << lane_id()) - 1u));
}

// Delete commit, one warp per touched row with deletions: the deleted entries are marked
// (-1), the survivors among the row's last k positions are listed (scratch, at the row's
// offset k_incl - k), and the deleted entries below the new end take them in rank order;
// the pages past the new end go on the free stack (at n_free + the row's offset), and the
// row's end moves down by k.
extern "C" __global__ void dyn_delete_rows(const i64* __restrict__ touched,
                                           const i64* __restrict__ rowid, i64 m,
                                           const i64* __restrict__ seg_start,
                                           const unsigned char* __restrict__ keep,
                                           const i64* __restrict__ hit,
                                           const i64* __restrict__ k_per_row,
                                           const i64* __restrict__ k_incl,
                                           const i64* __restrict__ freed,
                                           const i64* __restrict__ freed_incl, i64* bounds,
                                           const page_t* __restrict__ table, vid_t* pages,
                                           double* weights, i64* scratch, page_t* free_pages,
                                           i64 n_free) {
    const i64 n_touched = m ? rowid[m - 1] : 0;
    const i64 warps = global_stride() / 32;
    for (i64 t = global_tid() / 32; t < n_touched; t += warps) {
        const i64 k = k_per_row[t];
        if (k == 0) continue;  // warp-uniform
        const i64 u = touched[t];
        const i64 s0 = seg_start[t], s1 = seg_start[t + 1];
        const i64 begin = bounds[2 * u], end = bounds[2 * u + 1];
        const i64 new_end = end - k;
        for (i64 j = s0 + lane_id(); j < s1; j += 32)
            if (keep[j] && hit[j] >= 0) pages[page_slot(table, hit[j])] = (vid_t)-1;
        __syncwarp();
        // Survivors among the last k positions, in order, into scratch.
        i64* survivors = scratch + (k_incl[t] - k);
        i64 listed = 0;
        for (i64 base = new_end; base < end; base += 32) {  // warp-uniform trip count
            const i64 p = base + lane_id();
            const bool alive = p < end && pages[page_slot(table, p)] != (vid_t)-1;
            int count;
            const int r = warp_rank(alive, &count);
            if (alive) survivors[listed + r] = p;
            listed += count;
        }
        __syncwarp();
        // Holes below the new end, in segment order, take the survivors.
        i64 filled = 0;
        for (i64 base = s0; base < s1; base += 32) {
            const i64 j = base + lane_id();
            const bool hole = j < s1 && keep[j] && hit[j] >= 0 && hit[j] < new_end;
            int count;
            const int r = warp_rank(hole, &count);
            if (hole) {
                const i64 to = page_slot(table, hit[j]);
                const i64 from = page_slot(table, survivors[filled + r]);
                pages[to] = pages[from];
                if (weights) weights[to] = weights[from];
            }
            filled += count;
        }
        const i64 kept_pages = pages_for(new_end - begin);
        const i64 f0 = freed_incl[t] - freed[t];
        for (i64 i = lane_id(); i < freed[t]; i += 32)
            free_pages[n_free + f0 + i] = table[(begin >> PAGE_SHIFT) + kept_pages + i];
        if (lane_id() == 0) bounds[2 * u + 1] = new_end;
    }
}
