// Kernels of morphgpu/dynamic_graph_gpu.py: a DynamicGraph's batches of insertions and
// deletions.
//
// The row lookup every batch needs: for each batch entry (u, v), is v in u's row, and
// where? Rows are unsorted sets, so instead of scanning a row once per batch entry, each
// stored neighbour w of a touched row looks itself up in the row's (sorted) segment of the
// batch by binary search: the work is the touched rows' length plus a logarithm, whatever
// the batch's shape, and a hub touched by a thousand entries is read once. Each entry
// matches at most one stored neighbour (a row holds an edge once), so hit[] has at most
// one writer per element.
//
// Light and heavy rows: most touched rows are short (a road's, a uniform graph's, most of
// a Kronecker graph's), and one thread per row finishes them in a few waves of the whole
// GPU; a warp or block per row would leave each waiting on its own chain of loads (a
// batch touching two million rows is ~300 waves of resident warps). Rows past LIGHT
// entries go to a list that a second kernel serves with a block (lookup) or a warp
// (commits) per row. Counters that order the batch's allocations (page ranks, table
// space, scratch, free-stack slots) are taken with atomicAdd per row: which row gets which
// page does not matter, only that no two get the same.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/worklist.cuh>

using namespace mg;

// ---------------------------------------------------------------------------------------
// The batch pipeline on the GPU (morphgpu/dynamic_graph_gpu.py): a batch of n_in edges
// becomes M = n_in (directed) or 2 n_in (both directions) int64 keys u * n + v, sorted by
// the caller. Entries are never compacted: `keep` marks the last entry of each key (the
// one whose weight wins), `rowfirst` the first entry of each row. A row's segment is
// [seg_start[t], seg_start[t + 1]) of the sorted keys, and T = rowid[M - 1] rows are
// touched; sizes stay on the device, so the host reads one block of totals per batch.

constexpr int LIGHT = 32;  // rows (and segments) a single thread serves

// totals[] slots: the first nine are read by the host between the plan and the commit.
enum {
    T_BAD_SRC = 0, T_BAD_DST = 1, T_BAD_WEIGHT = 2,  // first bad index, or INT64_MAX
    T_APPLIED = 3, T_REQUESTED = 4, T_STORED = 5,    // edges inserted/deleted, asked, entries
    T_PAGES = 6, T_TABLE = 7, T_TABLE_LEFT = 8,      // pages to take/free, table entries
    T_PAGE_RANK = 9, T_TABLE_RANK = 10, T_SCRATCH = 11,  // allocation counters (commit)
    T_HEAVY_LOOKUP = 12, T_HEAVY_ROWS = 13,          // lengths of the heavy-row lists
    N_TOTALS = 14
};

__device__ __forceinline__ i64 page_slot(const page_t* table, i64 k) {
    return ((i64)table[k >> PAGE_SHIFT] << PAGE_SHIFT) | (k & (PAGE - 1));
}

__device__ __forceinline__ i64 pages_for(i64 degree) {
    return (degree + PAGE - 1) >> PAGE_SHIFT;
}

__device__ __forceinline__ i64 touched_rows(const i64* rowid, i64 m) {
    return m ? rowid[m - 1] : 0;
}

__device__ __forceinline__ void add_total(i64* totals, int slot, i64 value) {
    if (value) atomicAdd((unsigned long long*)&totals[slot], (u64)value);
}

__device__ __forceinline__ i64 take(i64* totals, int slot, i64 count) {
    return count ? (i64)atomicAdd((unsigned long long*)&totals[slot], (u64)count) : 0;
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
// sum) and its segment start; seg_start[T] = m.
extern "C" __global__ void dyn_rows(const i64* __restrict__ keys, i64 m, i64 n,
                                    const i64* __restrict__ rowfirst,
                                    const i64* __restrict__ rowid, i64* touched,
                                    i64* seg_start) {
    for (i64 j = global_tid(); j < m; j += global_stride()) {
        if (j == m - 1) seg_start[rowid[m - 1]] = m;
        if (!rowfirst[j]) continue;
        const i64 t = rowid[j] - 1;
        touched[t] = keys[j] / n;
        seg_start[t] = j;
    }
}

// Entry k of row u (at row key u * n) looked up in the row's segment [s0, s1).
__device__ __forceinline__ void lookup_entry(const page_t* table, const vid_t* pages,
                                             const i64* keys, i64 row_key, i64 s0, i64 s1,
                                             i64 k, i64* hit) {
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

// Lookups of light rows, one thread each; heavy rows are listed for dyn_lookup_heavy with
// their page counts (heavy_pages, zero past the list; the caller sums it).
extern "C" __global__ void dyn_lookup_light(const i64* __restrict__ bounds,
                                            const page_t* __restrict__ table,
                                            const vid_t* __restrict__ pages,
                                            const i64* __restrict__ touched,
                                            const i64* __restrict__ rowid,
                                            const i64* __restrict__ seg_start,
                                            const i64* __restrict__ keys, i64 m, i64 n, i64* hit,
                                            i64* heavy, i64* heavy_pages, i64* totals) {
    const i64 n_touched = touched_rows(rowid, m);
    for (i64 t = global_tid(); t < n_touched; t += global_stride()) {
        const i64 u = touched[t];
        const i64 begin = bounds[2 * u], end = bounds[2 * u + 1];
        if (end - begin > LIGHT) {
            const i64 h = take(totals, T_HEAVY_LOOKUP, 1);
            heavy[h] = t;
            heavy_pages[h] = pages_for(end - begin);
            continue;
        }
        const i64 s0 = seg_start[t], s1 = seg_start[t + 1];
        for (i64 k = begin; k < end; ++k) lookup_entry(table, pages, keys, u * n, s0, s1, k, hit);
    }
}

// Lookups of the heavy rows: one warp per page of them (heavy_incl: the inclusive sum of
// their page counts), so a hub's thousands of pages spread over the GPU; a lane per slot,
// so the warp's loads are coalesced.
extern "C" __global__ void dyn_lookup_heavy(const i64* __restrict__ bounds,
                                            const page_t* __restrict__ table,
                                            const vid_t* __restrict__ pages,
                                            const i64* __restrict__ touched,
                                            const i64* __restrict__ seg_start,
                                            const i64* __restrict__ keys, i64 n, i64* hit,
                                            const i64* __restrict__ heavy,
                                            const i64* __restrict__ heavy_incl,
                                            const i64* __restrict__ totals) {
    const i64 n_heavy = totals[T_HEAVY_LOOKUP];
    const i64 total = n_heavy ? heavy_incl[n_heavy - 1] : 0;
    const i64 warps = global_stride() / 32;
    for (i64 p = global_tid() / 32; p < total; p += warps) {
        i64 lo = 0, hi = n_heavy - 1;  // the first heavy row whose inclusive count passes p
        while (lo < hi) {
            const i64 mid = (lo + hi) >> 1;
            if (heavy_incl[mid] > p) hi = mid; else lo = mid + 1;
        }
        const i64 t = heavy[lo];
        const i64 u = touched[t];
        const i64 begin = bounds[2 * u], end = bounds[2 * u + 1];
        const i64 first = begin + ((p - (lo ? heavy_incl[lo - 1] : 0)) << PAGE_SHIFT);
        const i64 s0 = seg_start[t], s1 = seg_start[t + 1];
        for (int slot = (int)lane_id(); slot < PAGE; slot += 32) {
            const i64 k = first + slot;
            if (k >= end) break;
            lookup_entry(table, pages, keys, u * n, s0, s1, k, hit);
        }
    }
}

// Sums of a warp, added to totals[slot] by lane 0 (every lane calls it).
__device__ __forceinline__ void warp_add(i64* totals, int slot, i64 value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        value += __shfl_down_sync(0xffffffffu, value, offset);
    if (lane_id() == 0) add_total(totals, slot, value);
}

// Per entry: found[j] = a kept entry whose edge is stored (hit), fresh[j] = a kept entry
// not stored; present_slot[j] = where a found entry's edge is stored (insert: its weight
// is updated). Counts edges (undirected: the entry with u <= v) applied and requested.
// Either flag array may be null.
extern "C" __global__ void dyn_classify(const i64* __restrict__ keys, i64 m, i64 n,
                                        int directed, const unsigned char* __restrict__ keep,
                                        const i64* __restrict__ hit,
                                        const page_t* __restrict__ table, i64* fresh,
                                        i64* found, i64* present_slot, i64* totals) {
    for (i64 base = global_tid() - lane_id(); base < m; base += global_stride()) {
        const i64 j = base + lane_id();
        i64 applied = 0, requested = 0;
        if (j < m) {
            const bool kept = keep[j];
            const i64 h = hit[j];
            const i64 u = keys[j] / n, v = keys[j] - u * n;
            const bool counted = kept && (directed || u <= v);
            if (fresh) fresh[j] = kept && h < 0;
            if (found) found[j] = kept && h >= 0;
            if (present_slot) present_slot[j] = kept && h >= 0 ? page_slot(table, h) : -1;
            applied = counted && (fresh ? h < 0 : h >= 0);
            requested = counted;
        }
        warp_add(totals, T_APPLIED, applied);
        warp_add(totals, T_REQUESTED, requested);
    }
}

// Per touched row: its count of flagged entries (the inclusive sum's difference at the
// segment's ends), its degree, and its pages before and after. Insert (grow = 1): pages to
// take and the table capacity it moves to when it outgrows its entries (0: stays). Delete
// (grow = 0): pages it frees. Totals: pages, table entries, entries stored or removed.
extern "C" __global__ void dyn_plan(const i64* __restrict__ touched,
                                    const i64* __restrict__ rowid, i64 m,
                                    const i64* __restrict__ seg_start,
                                    const i64* __restrict__ flag_incl,
                                    const i64* __restrict__ bounds,
                                    const i64* __restrict__ table_cap, int grow, i64* c_out,
                                    i64* deg_out, i64* before_out, i64* pages_out,
                                    i64* newcap_out, i64* totals) {
    const i64 n_touched = touched_rows(rowid, m);
    for (i64 base = global_tid() - lane_id(); base < n_touched; base += global_stride()) {
        const i64 t = base + lane_id();
        i64 pages = 0, newcap = 0, left = 0, c = 0;
        if (t < n_touched) {
            const i64 u = touched[t];
            const i64 s0 = seg_start[t], s1 = seg_start[t + 1];
            c = flag_incl[s1 - 1] - (s0 ? flag_incl[s0 - 1] : 0);
            const i64 deg = bounds[2 * u + 1] - bounds[2 * u];
            const i64 before = pages_for(deg), after = pages_for(grow ? deg + c : deg - c);
            pages = grow ? after - before : before - after;
            if (grow) {
                const i64 cap = table_cap[u];
                if (after > cap) {
                    newcap = 1;
                    while (newcap < after) newcap <<= 1;
                    left = cap;
                }
                newcap_out[t] = newcap;
            }
            c_out[t] = c;
            deg_out[t] = deg;
            before_out[t] = before;
            pages_out[t] = pages;
        }
        warp_add(totals, T_PAGES, pages);
        warp_add(totals, T_TABLE, newcap);
        warp_add(totals, T_TABLE_LEFT, left);
        warp_add(totals, T_STORED, c);
    }
}

// The page id of the batch's r-th page request: recycled ones first (free_pages[n_free - 1
// - r]), then ids never used (from high_water on).
__device__ __forceinline__ page_t page_of_rank(const page_t* free_pages, i64 n_free,
                                               i64 high_water, i64 r) {
    return r < n_free ? free_pages[n_free - 1 - r] : (page_t)(high_water + r - n_free);
}

// Insert commit of one row by `lanes` threads (1, or a warp): move its table entries to
// fresh table space when it outgrew them, take its new pages, set its bounds.
__device__ __forceinline__ void insert_row(i64 t, int lane, int lanes, const i64* touched,
                                           const i64* c, const i64* deg, const i64* before,
                                           const i64* need, const i64* newcap, i64 table_used,
                                           page_t* table, i64* table_cap, i64* bounds,
                                           const page_t* free_pages, i64 n_free,
                                           i64 high_water, i64* totals) {
    const i64 u = touched[t];
    i64 start = bounds[2 * u] >> PAGE_SHIFT;
    i64 fresh = 0, r0 = 0;
    if (lane == 0) {
        fresh = newcap[t] ? table_used + take(totals, T_TABLE_RANK, newcap[t]) : -1;
        r0 = take(totals, T_PAGE_RANK, need[t]);
    }
    if (lanes > 1) {
        fresh = __shfl_sync(0xffffffffu, fresh, 0);
        r0 = __shfl_sync(0xffffffffu, r0, 0);
    }
    if (newcap[t]) {
        for (i64 i = lane; i < before[t]; i += lanes) table[fresh + i] = table[start + i];
        start = fresh;
        if (lane == 0) table_cap[u] = newcap[t];
    }
    for (i64 i = lane; i < need[t]; i += lanes)
        table[start + before[t] + i] = page_of_rank(free_pages, n_free, high_water, r0 + i);
    if (lane == 0) {
        bounds[2 * u] = start << PAGE_SHIFT;
        bounds[2 * u + 1] = (start << PAGE_SHIFT) + deg[t] + c[t];
    }
}

extern "C" __global__ void dyn_insert_rows(const i64* __restrict__ touched,
                                           const i64* __restrict__ rowid, i64 m,
                                           const i64* __restrict__ c, const i64* __restrict__ deg,
                                           const i64* __restrict__ before,
                                           const i64* __restrict__ need,
                                           const i64* __restrict__ newcap, i64 table_used,
                                           page_t* table, i64* table_cap, i64* bounds,
                                           const page_t* __restrict__ free_pages, i64 n_free,
                                           i64 high_water, i64* heavy, i64* totals) {
    const i64 n_touched = touched_rows(rowid, m);
    for (i64 t = global_tid(); t < n_touched; t += global_stride()) {
        if ((newcap[t] && before[t] > LIGHT) || need[t] > LIGHT) {
            heavy[take(totals, T_HEAVY_ROWS, 1)] = t;
            continue;
        }
        insert_row(t, 0, 1, touched, c, deg, before, need, newcap, table_used, table, table_cap,
                   bounds, free_pages, n_free, high_water, totals);
    }
}

extern "C" __global__ void dyn_insert_rows_heavy(const i64* __restrict__ touched,
                                                 const i64* __restrict__ c,
                                                 const i64* __restrict__ deg,
                                                 const i64* __restrict__ before,
                                                 const i64* __restrict__ need,
                                                 const i64* __restrict__ newcap, i64 table_used,
                                                 page_t* table, i64* table_cap, i64* bounds,
                                                 const page_t* __restrict__ free_pages,
                                                 i64 n_free, i64 high_water,
                                                 const i64* __restrict__ heavy, i64* totals) {
    const i64 n_heavy = load_volatile(&totals[T_HEAVY_ROWS]);
    const i64 warps = global_stride() / 32;
    for (i64 h = global_tid() / 32; h < n_heavy; h += warps)
        insert_row(heavy[h], (int)lane_id(), 32, touched, c, deg, before, need, newcap,
                   table_used, table, table_cap, bounds, free_pages, n_free, high_water,
                   totals);
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

// Rank of this lane among the lanes with `flag` set, and their count (full warp).
__device__ __forceinline__ int warp_rank(bool flag, int* count) {
    const unsigned mask = __ballot_sync(0xffffffffu, flag);
    *count = __popc(mask);
    return __popc(mask & ((1u << lane_id()) - 1u));
}

// Delete commit of one row by `lanes` threads (1, or a full warp). The deleted entries are
// marked (-1); the survivors among the row's last k positions are listed (in `survivors`)
// and the deleted entries below the new end take them in rank order; the pages past the
// new end go on the free stack (at n_free + the row's reserved slots), and the row's end
// moves down by k.
__device__ __forceinline__ void delete_row(i64 t, int lanes, const i64* touched,
                                           const i64* seg_start, const unsigned char* keep,
                                           const i64* hit, const i64* k_per_row,
                                           const i64* freed, i64* bounds, const page_t* table,
                                           vid_t* pages, double* weights, i64* survivors,
                                           page_t* free_pages, i64 n_free, i64* totals) {
    const int lane = lanes > 1 ? (int)lane_id() : 0;
    const i64 k = k_per_row[t];
    const i64 u = touched[t];
    const i64 s0 = seg_start[t], s1 = seg_start[t + 1];
    const i64 begin = bounds[2 * u], end = bounds[2 * u + 1];
    const i64 new_end = end - k;
    for (i64 j = s0 + lane; j < s1; j += lanes)
        if (keep[j] && hit[j] >= 0) pages[page_slot(table, hit[j])] = (vid_t)-1;
    if (lanes > 1) __syncwarp();
    i64 listed = 0;
    for (i64 base = new_end; base < end; base += lanes) {  // uniform trip count
        const i64 p = base + lane;
        const bool alive = p < end && pages[page_slot(table, p)] != (vid_t)-1;
        int count = alive, r = 0;
        if (lanes > 1) r = warp_rank(alive, &count);
        if (alive) survivors[listed + r] = p;
        listed += count;
    }
    if (lanes > 1) __syncwarp();
    i64 filled = 0;
    for (i64 base = s0; base < s1; base += lanes) {
        const i64 j = base + lane;
        const bool hole = j < s1 && keep[j] && hit[j] >= 0 && hit[j] < new_end;
        int count = hole, r = 0;
        if (lanes > 1) r = warp_rank(hole, &count);
        if (hole) {
            const i64 to = page_slot(table, hit[j]);
            const i64 from = page_slot(table, survivors[filled + r]);
            pages[to] = pages[from];
            if (weights) weights[to] = weights[from];
        }
        filled += count;
    }
    const i64 kept_pages = pages_for(new_end - begin);
    i64 f0 = 0;
    if (lane == 0) f0 = take(totals, T_PAGE_RANK, freed[t]);
    if (lanes > 1) f0 = __shfl_sync(0xffffffffu, f0, 0);
    for (i64 i = lane; i < freed[t]; i += lanes)
        free_pages[n_free + f0 + i] = table[(begin >> PAGE_SHIFT) + kept_pages + i];
    if (lane == 0) bounds[2 * u + 1] = new_end;
}

extern "C" __global__ void dyn_delete_rows(const i64* __restrict__ touched,
                                           const i64* __restrict__ rowid, i64 m,
                                           const i64* __restrict__ seg_start,
                                           const unsigned char* __restrict__ keep,
                                           const i64* __restrict__ hit,
                                           const i64* __restrict__ k_per_row,
                                           const i64* __restrict__ freed, i64* bounds,
                                           const page_t* __restrict__ table, vid_t* pages,
                                           double* weights, page_t* free_pages, i64 n_free,
                                           i64* heavy, i64* totals) {
    const i64 n_touched = touched_rows(rowid, m);
    for (i64 t = global_tid(); t < n_touched; t += global_stride()) {
        if (k_per_row[t] == 0) continue;
        if (seg_start[t + 1] - seg_start[t] > LIGHT) {
            heavy[take(totals, T_HEAVY_ROWS, 1)] = t;
            continue;
        }
        i64 survivors[LIGHT];  // k <= the segment's length <= LIGHT
        delete_row(t, 1, touched, seg_start, keep, hit, k_per_row, freed, bounds, table, pages,
                   weights, survivors, free_pages, n_free, totals);
    }
}

// scratch: room for the survivors of every heavy row (the batch's removed entries bound
// them), handed out per row by T_SCRATCH.
extern "C" __global__ void dyn_delete_rows_heavy(const i64* __restrict__ touched,
                                                 const i64* __restrict__ seg_start,
                                                 const unsigned char* __restrict__ keep,
                                                 const i64* __restrict__ hit,
                                                 const i64* __restrict__ k_per_row,
                                                 const i64* __restrict__ freed, i64* bounds,
                                                 const page_t* __restrict__ table,
                                                 vid_t* pages, double* weights, i64* scratch,
                                                 page_t* free_pages, i64 n_free,
                                                 const i64* __restrict__ heavy, i64* totals) {
    const i64 n_heavy = load_volatile(&totals[T_HEAVY_ROWS]);
    const i64 warps = global_stride() / 32;
    for (i64 h = global_tid() / 32; h < n_heavy; h += warps) {
        const i64 t = heavy[h];
        i64 at = 0;
        if (lane_id() == 0) at = take(totals, T_SCRATCH, k_per_row[t]);
        at = __shfl_sync(0xffffffffu, at, 0);
        delete_row(t, 32, touched, seg_start, keep, hit, k_per_row, freed, bounds, table,
                   pages, weights, scratch + at, free_pages, n_free, totals);
    }
}

// Inclusive prefix sum of at most SCAN_SMALL entries by one block of 1024 threads: a
// small batch's three scans cost one launch each instead of CuPy's scan launches and
// their host-side calls (the host cost is what small batches pay).
constexpr int SCAN_ITEMS = 4;
extern "C" __global__ void __launch_bounds__(1024) dyn_scan_small(const i64* __restrict__ in,
                                                                  i64 n, i64* out) {
    i64 v[SCAN_ITEMS];
    i64 mine = 0;
#pragma unroll
    for (int t = 0; t < SCAN_ITEMS; ++t) {
        const i64 i = (i64)threadIdx.x * SCAN_ITEMS + t;
        v[t] = i < n ? in[i] : 0;
        mine += v[t];
    }
    i64 total;
    i64 running = block_exclusive_sum<1024, i64>(mine, &total);
#pragma unroll
    for (int t = 0; t < SCAN_ITEMS; ++t) {
        const i64 i = (i64)threadIdx.x * SCAN_ITEMS + t;
        running += v[t];
        if (i < n) out[i] = running;
    }
}
