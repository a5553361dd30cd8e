// Bottom-up step (Beamer; Enterprise §4.3): an unvisited vertex looks through its
// in-neighbours for one on the current frontier and stops at the first.
//
// Measured and removed (session 36): a hub cache, the frontier's hubs hashed into a table
// in shared memory and checked before a neighbour's label. It lost on every graph measured
// (H200, one process, 32-64 roots, direction.cu without it against with it, graphs as
// given: Kronecker 16-22 1.08-1.21x, uniform 2^16-2^24 1.05-1.11x); the hubs' labels stay
// in L1/L2 anyway, and the table's lookups sat in front of every probe.
#pragma once
#include <morphgpu/adjacency.cuh>
#include <morphgpu/bitmap.cuh>
#include <morphgpu/common.cuh>

namespace mg {
namespace traversal {

// Whether u is on the frontier (label == level): from the frontier bitmap when there is
// one (1 bit per vertex instead of 4 bytes, so the structure every bottom-up probe hits is
// 32 times smaller and stays in L1/L2), else from the labels. The bitmap is read with
// plain loads, never __ldg: it is rewritten every level within the same launch, and the
// grid barrier's acquire makes plain loads see the new words.
__device__ __forceinline__ bool on_frontier(const int* dist, const unsigned* frontier_bits,
                                            vid_t u, int level) {
    if (frontier_bits) return test_bit(frontier_bits, (i64)u);
    return dist[u] == level;
}

// The bottom-up step for BATCH vertices of one thread at once: v0 + t * stride for the
// bits t of `open` (the caller's unvisited vertices: it loads their labels beforehand, as
// many at a time as it likes; only v's own thread labels v in a bottom-up step, so a label
// read early is still current). One vertex at a time, a thread waits on dependent loads
// per vertex (its row bounds, its first in-neighbours, their labels); here each of those
// loads is issued for all BATCH vertices before any is used, so a thread has BATCH
// requests in flight instead of one. The first PROBE in-neighbours of each row are
// probed so; the rows without a hit among them are then scanned side by side, SCAN
// in-neighbours of each per round (ids, then their labels). The result has
// bit t set when vertex v0 + t * stride was labelled. Same labels as the rows one
// after another: a vertex labelled in this step gets level + 1, which no probe
// (looking for `level`) can mistake, whichever order the probes and stores take.
template <int BATCH, int PROBE, typename Adj>
__device__ __forceinline__ unsigned adopt_parents_batch(const Adj& rev,
                                                        int* dist, vid_t* parent, i64 v0,
                                                        i64 stride, unsigned open, int level,
                                                        const unsigned* frontier_bits) {
    static_assert(BATCH * PROBE <= 32, "hits are one bit each in a 32-bit word");
    if (open == 0u) return 0u;
    eid_t first[BATCH], last[BATCH];
#pragma unroll
    for (int t = 0; t < BATCH; ++t) {
        first[t] = last[t] = 0;
        if ((open >> t) & 1u) {
            const i64 v = v0 + t * stride;
            first[t] = rev.begin(v);
            last[t] = rev.end(v);
        }
    }
    vid_t u[BATCH][PROBE];
#pragma unroll
    for (int t = 0; t < BATCH; ++t)
#pragma unroll
        for (int p = 0; p < PROBE; ++p)
            u[t][p] = first[t] + p < last[t] ? rev.at(first[t] + p) : (vid_t)-1;
    unsigned hits = 0u;
#pragma unroll
    for (int t = 0; t < BATCH; ++t)
#pragma unroll
        for (int p = 0; p < PROBE; ++p)
            if (u[t][p] >= 0 && on_frontier(dist, frontier_bits, u[t][p], level))
                hits |= 1u << (t * PROBE + p);
    unsigned labelled = 0u;
    unsigned pending = 0u;  // rows without a hit among their probes, with edges left
#pragma unroll
    for (int t = 0; t < BATCH; ++t) {
        if (!((open >> t) & 1u)) continue;
        const vid_t v = (vid_t)(v0 + t * stride);
        const unsigned mine = (hits >> (t * PROBE)) & ((1u << PROBE) - 1u);
        if (mine) {
            dist[v] = level + 1;
            if (parent) {
                vid_t found = u[t][0];
#pragma unroll
                for (int p = PROBE - 1; p >= 0; --p)
                    if ((mine >> p) & 1u) found = u[t][p];  // the lowest hit, last, wins
                parent[v] = found;
            }
            labelled |= 1u << t;
        } else if (first[t] + PROBE < last[t]) {
            pending |= 1u << t;
            first[t] += PROBE;
        }
    }
    // The rows left, scanned side by side: each round loads SCAN ids of every pending row,
    // then their labels, so a lane waits on its longest row, not on the sum of its rows.
    // (Finishing each row alone with scan_in_row, one after another, made a warp wait on
    // the sum: the scans ran with ~7 of 32 lanes active, ncu on uniform 2^22 deg 16.
    // H200, one process, 32 / 16 roots, side by side against one after another: Kronecker
    // 21 / 22 / 20 ef32 / 23 1.016x / 1.003x / 1.033x / 1.016x, uniform 2^22 deg 16 /
    // 2^23 deg 8 / 2^21 deg 32 1.032x / 1.041x / 0.993x.)
    constexpr int SCAN = 4;
    while (pending) {
        vid_t w[BATCH][SCAN];
#pragma unroll
        for (int t = 0; t < BATCH; ++t)
#pragma unroll
            for (int p = 0; p < SCAN; ++p)
                w[t][p] = ((pending >> t) & 1u) && first[t] + p < last[t]
                              ? rev.at(first[t] + p) : (vid_t)-1;
        bool hit[BATCH][SCAN];
#pragma unroll
        for (int t = 0; t < BATCH; ++t)
#pragma unroll
            for (int p = 0; p < SCAN; ++p)
                hit[t][p] = w[t][p] >= 0 && on_frontier(dist, frontier_bits, w[t][p], level);
#pragma unroll
        for (int t = 0; t < BATCH; ++t) {
            if (!((pending >> t) & 1u)) continue;
            int found = -1;
#pragma unroll
            for (int p = SCAN - 1; p >= 0; --p)
                if (hit[t][p]) found = p;
            if (found >= 0) {
                const vid_t v = (vid_t)(v0 + t * stride);
                dist[v] = level + 1;
                if (parent) {
                    vid_t q = w[t][0];
#pragma unroll
                    for (int p = 1; p < SCAN; ++p)
                        if (found == p) q = w[t][p];
                    parent[v] = q;
                }
                labelled |= 1u << t;
                pending &= ~(1u << t);
            } else {
                first[t] += SCAN;
                if (first[t] >= last[t]) pending &= ~(1u << t);
            }
        }
    }
    return labelled;
}

// One vertex: returns true (and labels v) when v has an in-neighbour at `level`, the first
// in row order; the batch step for one row (four in-neighbours per memory round trip).
template <typename Adj>
__device__ __forceinline__ bool adopt_parent(const Adj& rev, int* dist, vid_t* parent, vid_t v,
                                             int level, const unsigned* frontier_bits = nullptr) {
    return adopt_parents_batch<1, 4>(rev, dist, parent, (i64)v, 0, 1u, level,
                                     frontier_bits) != 0u;
}

}  // namespace traversal
}  // namespace mg
