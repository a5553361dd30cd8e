// The rows of one part of a partitioned graph, built on the part's own GPU from edge
// chunks drawn (or copied) there (morphgpu/bfs/gpu/part_build.py): the whole CSR is never
// on one device. Two passes over the same chunks: part_count_rows counts the entries of
// each row in [lo, hi) (the degree pass uses lo = 0, hi = n), part_fill_rows places each
// entry at its row's cursor. Rows come out in no particular order inside: a search does not
// mind, and a per-row cursor taken by atomicAdd needs no sort of the chunk.
//
// ``both``: every edge also counts reversed (an undirected graph from one direction each).
// Edge ids are int64 as the generators draw them; the stored column ids are vid_t.
#include <morphgpu/common.cuh>

using namespace mg;

extern "C" __global__ void part_count_rows(const i64* __restrict__ src,
                                           const i64* __restrict__ dst, i64 n_edges, i64 lo,
                                           i64 hi, int both, u64* counts) {
    for (i64 i = global_tid(); i < n_edges; i += global_stride()) {
        const i64 s = src[i], d = dst[i];
        if (s >= lo && s < hi) atomicAdd(counts + (s - lo), 1ull);
        if (both && d >= lo && d < hi) atomicAdd(counts + (d - lo), 1ull);
    }
}

extern "C" __global__ void part_fill_rows(const i64* __restrict__ src,
                                          const i64* __restrict__ dst, i64 n_edges, i64 lo,
                                          i64 hi, int both, u64* cursor, vid_t* indices) {
    for (i64 i = global_tid(); i < n_edges; i += global_stride()) {
        const i64 s = src[i], d = dst[i];
        if (s >= lo && s < hi) indices[atomicAdd(cursor + (s - lo), 1ull)] = (vid_t)d;
        if (both && d >= lo && d < hi) indices[atomicAdd(cursor + (d - lo), 1ull)] = (vid_t)s;
    }
}
