// Whole-graph figures of a search and of a graph, each in one launch and one read (the
// dynamic graph's searches run after every batch, and a handful of CuPy reductions over
// all n vertices measured ~0.45 ms on an H100 against ~0.4 ms for the search itself).
//
// bfs_result_figures: out[0] += out-degrees of the reached vertices (the TEPS numerator),
//   out[1] = the largest label (levels - 1); out must hold {0, 0} (labels are >= 0 where
//   reached, so a max over unsigned words of -1 would mislead: unreached are skipped).
// degree_figures: out[0] += vertices of degree > hub_degree, out[1] = largest degree,
//   out[2] = one past the last vertex with an edge; out must hold {0, 0, 0}.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>

using namespace mg;

__device__ __forceinline__ u64 warp_max(u64 v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const u64 other = __shfl_down_sync(0xffffffffu, v, o);
        v = other > v ? other : v;
    }
    return v;
}

extern "C" __global__ void bfs_result_figures(MG_ADJ_PARAMS(graph), const int* dist, i64 n,
                                              u64* out) {
    const Adjacency adj = MG_ADJ(graph);
    u64 edges = 0, top = 0;
    for (i64 base = global_tid() - lane_id(); base < n; base += global_stride()) {
        const i64 v = base + lane_id();
        if (v < n) {
            const int d = dist[v];
            if (d >= 0) {
                edges += (u64)adj.degree(v);
                top = (u64)d > top ? (u64)d : top;
            }
        }
    }
    edges = warp_sum(edges);
    top = warp_max(top);
    if (lane_id() == 0) {
        if (edges) atomicAdd(&out[0], edges);
        atomicMax(&out[1], top);
    }
}

extern "C" __global__ void degree_figures(MG_ADJ_PARAMS(graph), i64 n, i64 hub_degree,
                                          u64* out) {
    const Adjacency adj = MG_ADJ(graph);
    u64 hubs = 0, top = 0, end = 0;
    for (i64 base = global_tid() - lane_id(); base < n; base += global_stride()) {
        const i64 v = base + lane_id();
        if (v < n) {
            const i64 d = adj.degree(v);
            hubs += d > hub_degree;
            top = (u64)d > top ? (u64)d : top;
            if (d > 0) end = (u64)v + 1;
        }
    }
    hubs = warp_sum(hubs);
    top = warp_max(top);
    end = warp_max(end);
    if (lane_id() == 0) {
        if (hubs) atomicAdd(&out[0], hubs);
        atomicMax(&out[1], top);
        atomicMax(&out[2], end);
    }
}
