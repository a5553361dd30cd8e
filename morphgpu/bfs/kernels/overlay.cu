// Overlay BFS (variant "overlay"; design, exactness and measurements in
// morphgpu/bfs/gpu/overlay.py): the customizable-route-planning overlay taken to unit
// weights, over the tiled copy's tiles (contiguous id ranges of T = 2^MG_OVERLAY_SHIFT
// compact vertices). Per graph, once (overlay_rows): per tile its boundary vertices (an
// edge to or from another tile) and D, the in-tile distance between every pair of them
// (uint16, NO_PATH where none; rows padded to 8 entries). Per search, one persistent
// launch (bfs_overlay):
// 1. block 0: a BFS inside the source's tile gives its boundary labels;
// 2. rounds over the tiles whose boundary labels fell, separated by the grid barrier: a
//    tile applies its lowered labels through D (a min-plus product: the tile crossed in
//    one parallel step instead of one dependent level per hop), then sends its lowered
//    labels over its cut edges (+1), queueing the tiles they lower for the next round.
//    delta > 0: round r applies only labels below r * delta, and a tile holding one past
//    it comes back next round (delta-stepping: tiles are visited nearer their final
//    labels);
// 3. every tile reached: one multi-source BFS inside it from its exact boundary labels
//    (and the source), labels in the copy's ids;
// 4. label_output.cuh: -1 for unreached vertices, parents when asked.
// Exact: a shortest path is in-tile segments between boundary vertices joined by cut
// edges, and D holds each segment's shortest in-tile length, so the rounds' fixed point
// is the boundary vertices' distances; a vertex's distance is then the least boundary
// label of its tile plus its in-tile distance, or its in-tile distance from the source.
// The rounds reach the fixed point: every lowered boundary label is applied and sent by a
// later visit of its tile (a lowering queues the tile; a visit applies every label below
// the label last applied, `applied`, and sends every label below the one last sent,
// `sent`), and labels only fall.
#include <morphgpu/barrier.cuh>
#include <bfs/kernels/label_output.cuh>

#ifndef MG_OVERLAY_SHIFT
#define MG_OVERLAY_SHIFT 10
#endif
#ifndef MG_OVERLAY_BLOCK
#define MG_OVERLAY_BLOCK 256
#endif

using namespace mg;

namespace {

constexpr int SHIFT = MG_OVERLAY_SHIFT;
constexpr int T = 1 << SHIFT;
constexpr int BLOCK = MG_OVERLAY_BLOCK;
constexpr int PER_THREAD = (T + BLOCK - 1) / BLOCK;  // boundary columns a thread keeps
constexpr int INF = 0x3fffffff;
constexpr int UNREACHED = 0x7fffffff;  // label_output.cuh's
constexpr unsigned NO_PATH = 0xffffu;
constexpr int D_CHUNK = 8192;  // D entries staged in shared memory at once (16 KB)
// ctrl words (u64)
constexpr int C_ERROR = 0;
constexpr int C_ROUNDS = 1;
constexpr int C_VISITS = 2;
constexpr int C_SOURCES = 3;

// A tile's in-tile edges: offsets in shared memory, column ids (16-bit local) in shared
// memory where they fit edge_cap, else read from global memory.
struct TileEdges {
    const int* off;
    const unsigned short* idx;
};

__device__ TileEdges load_tile(const eid_t* __restrict__ lptr,
                               const unsigned short* __restrict__ lidx, i64 t, int edge_cap,
                               int* s_off, unsigned short* s_idx) {
    const i64 first = t << SHIFT;
    const eid_t base = lptr[first];
    const int count = (int)(lptr[first + T] - base);
    for (int v = threadIdx.x; v <= T; v += blockDim.x) s_off[v] = (int)(lptr[first + v] - base);
    const bool fits = count <= edge_cap;
    if (fits)
        for (int k = threadIdx.x; k < count; k += blockDim.x) s_idx[k] = lidx[base + k];
    __syncthreads();
    return TileEdges{s_off, fits ? s_idx : lidx + base};
}

__device__ void clear_labels(int* lab, int* flag) {
    for (int v = threadIdx.x; v < T; v += blockDim.x) lab[v] = INF;
    if (threadIdx.x < 3) flag[threadIdx.x] = 0;
    __syncthreads();
}

// Multi-source BFS inside the loaded tile over lab[] (shared; INF unreached; the seeds
// set): levels from `first` until one lowers nothing, never before max_seed. flag: three
// shared words, zero: level l sets flag[l % 3] and clears flag[(l + 1) % 3], which every
// thread read two barriers before.
__device__ void tile_bfs(TileEdges e, int* lab, int first, int max_seed, int* flag) {
    for (int level = first;; ++level) {
        if (threadIdx.x == 0) flag[(level + 1) % 3] = 0;
        for (int v = threadIdx.x; v < T; v += blockDim.x) {
            if (lab[v] != level) continue;
            for (int k = e.off[v]; k < e.off[v + 1]; ++k)
                if (atomicMin(lab + e.idx[k], level + 1) > level + 1) flag[level % 3] = 1;
        }
        __syncthreads();
        if (!flag[level % 3] && level >= max_seed) break;
    }
}

// The shared memory of a tile BFS, carved from the dynamic buffer (16-byte aligned).
struct TileSpace {
    int* lab;
    int* off;
    unsigned short* idx;
};

__device__ TileSpace tile_space(unsigned char* smem) {
    int* lab = reinterpret_cast<int*>(smem);
    int* off = lab + T;
    return TileSpace{lab, off, reinterpret_cast<unsigned short*>(off + T + 1)};
}

}  // namespace

// One block per boundary vertex b: row b - bstart[t] of its tile t's D.
extern "C" __global__ void __launch_bounds__(MG_OVERLAY_BLOCK)
overlay_rows(const eid_t* __restrict__ lptr, const unsigned short* __restrict__ lidx,
             const vid_t* __restrict__ bverts, const int* __restrict__ bstart,
             const i64* __restrict__ dofs, unsigned short* D, int edge_cap) {
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int flag[3];
    const TileSpace sp = tile_space(smem);
    const int b = blockIdx.x;
    const i64 gv = (i64)bverts[b];
    const i64 t = gv >> SHIFT;
    const TileEdges e = load_tile(lptr, lidx, t, edge_cap, sp.off, sp.idx);
    clear_labels(sp.lab, flag);
    if (threadIdx.x == 0) sp.lab[gv & (T - 1)] = 0;
    __syncthreads();
    tile_bfs(e, sp.lab, 0, 0, flag);
    const int base = bstart[t], nb = bstart[t + 1] - base, i = b - base;
    unsigned short* row = D + dofs[t] + (i64)i * ((nb + 7) & ~7);
    for (int j = threadIdx.x; j < nb; j += blockDim.x) {
        const int l = sp.lab[(i64)bverts[base + j] & (T - 1)];
        row[j] = l >= (int)NO_PATH ? (unsigned short)NO_PATH : (unsigned short)l;
    }
}

// One launch per search (cooperative; overlay.py sizes the grid and the dynamic shared
// memory: the larger of the rounds' D chunk and sources and a tile BFS's arrays).
// label: n words, the output in the copy's ids; L / applied / sent: n_ov words; mark:
// n_tiles words; lists: 2 n_tiles; counts: 3; ctrl: u64 words (C_*).
extern "C" __global__ void __launch_bounds__(MG_OVERLAY_BLOCK)
bfs_overlay(const eid_t* __restrict__ lptr, const unsigned short* __restrict__ lidx,
            const vid_t* __restrict__ bverts, const int* __restrict__ bstart,
            const i64* __restrict__ dofs, const unsigned short* __restrict__ D,
            const i64* __restrict__ cut_ptr, const int* __restrict__ cut_dst,
            const int* __restrict__ cut_tile, const eid_t* __restrict__ rev_indptr,
            const vid_t* __restrict__ rev_indices, int* L, int* applied, int* sent, int* mark,
            int* lists, int* counts, int* label, vid_t* parent, u64* ctrl, i64 n, int n_tiles,
            int n_ov, int max_nb, int edge_cap, vid_t source, int delta,
            unsigned* barrier_state) {
    const CsrAdjacency radj{rev_indptr, rev_indices};
    GridBarrier bar(barrier_state);
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int flag[3];
    __shared__ int s_count, s_defer, lo, hi;
    const TileSpace sp = tile_space(smem);
    const int source_tile = (int)((i64)source >> SHIFT);

    for (i64 i = global_tid(); i < n_ov; i += global_stride()) {
        L[i] = INF;
        applied[i] = INF;
        sent[i] = INF;
    }
    for (i64 t = global_tid(); t < n_tiles; t += global_stride()) mark[t] = 0;
    for (i64 v = global_tid(); v < n; v += global_stride()) label[v] = UNREACHED;
    if (global_tid() == 0) {
        ctrl[C_ERROR] = 0ull;
        ctrl[C_SOURCES] = 0ull;
        counts[0] = 0;
        counts[1] = 1;  // round 1 reads lists[n_tiles...]: the source's tile
        counts[2] = 0;
        lists[n_tiles] = source_tile;
        mark[source_tile] = 1;
    }
    grid_sync(bar);

    // 1. The source's tile: its boundary labels.
    if (blockIdx.x == 0) {
        const TileEdges e = load_tile(lptr, lidx, source_tile, edge_cap, sp.off, sp.idx);
        clear_labels(sp.lab, flag);
        if (threadIdx.x == 0) sp.lab[(i64)source & (T - 1)] = 0;
        __syncthreads();
        tile_bfs(e, sp.lab, 0, 0, flag);
        const int base = bstart[source_tile], nb = bstart[source_tile + 1] - base;
        for (int j = threadIdx.x; j < nb; j += blockDim.x)
            L[base + j] = sp.lab[(i64)bverts[base + j] & (T - 1)];
    }
    grid_sync(bar);

    // 2. Rounds. The dynamic buffer holds the D chunk first, then the sources.
    uint4* chunk4 = reinterpret_cast<uint4*>(smem);
    const unsigned short* chunk = reinterpret_cast<const unsigned short*>(smem);
    int* s_idx = reinterpret_cast<int*>(smem + 2 * D_CHUNK);
    int* s_lab = s_idx + max_nb;
    u64 visits = 0, sources = 0;
    int r = 1;
    for (;; ++r) {
        const int n_act = __ldcg(counts + r % 3);
        if (n_act == 0) break;
        visits += n_act;
        const int* list = lists + (r & 1) * n_tiles;
        const int threshold = delta > 0 ? r * delta : INF;
        for (int k = blockIdx.x; k < n_act; k += gridDim.x) {
            const int t = __ldcg(list + k);
            const int base = bstart[t], nb = bstart[t + 1] - base;
            if (threadIdx.x == 0) {
                s_count = 0;
                s_defer = 0;
            }
            __syncthreads();
            // The sources: labels below the ones last applied (and below the threshold).
            for (int i = threadIdx.x; i < nb; i += blockDim.x) {
                const int li = __ldcg(L + base + i);
                if (li < __ldcg(applied + base + i)) {
                    if (li >= threshold) {
                        s_defer = 1;
                        continue;
                    }
                    applied[base + i] = li;
                    const int slot = atomicAdd(&s_count, 1);
                    s_idx[slot] = i;
                    s_lab[slot] = li;
                }
            }
            __syncthreads();
            const int ns = s_count;
            if (threadIdx.x == 0) {
                sources += ns;
                if (s_defer && atomicExch(mark + t, r + 1) != r + 1)
                    lists[((r + 1) & 1) * n_tiles + atomicAdd(counts + (r + 1) % 3, 1)] = t;
            }
            // Min-plus: rows of the sources, a chunk at a time, all its loads in flight.
            const unsigned short* Dt = D + dofs[t];
            const int stride = (nb + 7) & ~7;
            const int vecs = stride >> 3;
            int best[PER_THREAD];
#pragma unroll
            for (int q = 0; q < PER_THREAD; ++q) best[q] = INF;
            const int rows = nb > 0 ? max(1, D_CHUNK / stride) : 1;
            for (int k0 = 0; k0 < ns; k0 += rows) {
                const int kn = min(rows, ns - k0);
                const int total = kn * vecs;
#pragma unroll 4
                for (int x = threadIdx.x; x < total; x += blockDim.x) {
                    const int kk = x / vecs, p = x - kk * vecs;
                    chunk4[x] = reinterpret_cast<const uint4*>(
                        Dt + (i64)s_idx[k0 + kk] * stride)[p];
                }
                __syncthreads();
                // Sources inner and unrolled: the shared loads of eight in flight (a min
                // chain over one source at a time waited on each load: H200, session 38).
#pragma unroll
                for (int q = 0; q < PER_THREAD; ++q) {
                    const int j = threadIdx.x + q * BLOCK;
                    if (j >= nb) break;
                    int b = best[q];
#pragma unroll 8
                    for (int kk = 0; kk < kn; ++kk) {
                        const unsigned d = chunk[kk * stride + j];
                        b = min(b, d == NO_PATH ? INF : s_lab[k0 + kk] + (int)d);
                    }
                    best[q] = b;
                }
                __syncthreads();
            }
#pragma unroll
            for (int q = 0; q < PER_THREAD; ++q) {
                const int j = threadIdx.x + q * BLOCK;
                if (j < nb && best[q] < INF) {
                    atomicMin(L + base + j, best[q]);
                    // j's own row adds nothing past what its sources gave (D's triangle
                    // inequality): recorded as applied
                    if (best[q] < __ldcg(applied + base + j)) applied[base + j] = best[q];
                }
            }
            __syncthreads();
            // The cut edges of labels below the ones last sent.
            for (int j = threadIdx.x; j < nb; j += blockDim.x) {
                const int lj = __ldcg(L + base + j);
                if (lj >= __ldcg(sent + base + j)) continue;
                sent[base + j] = lj;
                const int nl = lj + 1;
                const i64 end = cut_ptr[base + j + 1];
                for (i64 c = cut_ptr[base + j]; c < end; ++c) {
                    if (atomicMin(L + cut_dst[c], nl) <= nl) continue;
                    const int tw = cut_tile[c];
                    if (atomicExch(mark + tw, r + 1) != r + 1)
                        lists[((r + 1) & 1) * n_tiles + atomicAdd(counts + (r + 1) % 3, 1)] =
                            tw;
                }
            }
            __syncthreads();
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) counts[(r + 2) % 3] = 0;
        grid_sync(bar);
    }
    if (threadIdx.x == 0) {
        atomicAdd(ctrl + C_SOURCES, sources);
        if (blockIdx.x == 0) {
            ctrl[C_ROUNDS] = (u64)(r - 1);
            ctrl[C_VISITS] = visits;
        }
    }

    // 3. Every tile reached: its labels from its boundary labels (and the source).
    for (int t = blockIdx.x; t < n_tiles; t += gridDim.x) {
        const int base = bstart[t], nb = bstart[t + 1] - base;
        clear_labels(sp.lab, flag);
        if (threadIdx.x == 0) {
            lo = INF;
            hi = -1;
        }
        __syncthreads();
        for (int i = threadIdx.x; i < nb; i += blockDim.x) {
            const int l = __ldcg(L + base + i);
            if (l < INF) {
                atomicMin(sp.lab + ((i64)bverts[base + i] & (T - 1)), l);
                atomicMin(&lo, l);
                atomicMax(&hi, l);
            }
        }
        if (threadIdx.x == 0 && t == source_tile) {
            atomicMin(sp.lab + ((i64)source & (T - 1)), 0);
            atomicMin(&lo, 0);
            atomicMax(&hi, 0);
        }
        __syncthreads();
        if (hi < 0) continue;  // block-uniform: nothing of this tile is reached
        const TileEdges e = load_tile(lptr, lidx, t, edge_cap, sp.off, sp.idx);
        tile_bfs(e, sp.lab, lo, hi, flag);
        const i64 first = (i64)t << SHIFT;
        for (int v = threadIdx.x; v < T && first + v < n; v += blockDim.x)
            if (sp.lab[v] < INF) label[first + v] = sp.lab[v];
        __syncthreads();
    }
    grid_sync(bar);

    // 4. Output, in the copy's ids.
    bfs::labels_to_output(radj, label, parent, ctrl + C_ERROR, n, source);
}
