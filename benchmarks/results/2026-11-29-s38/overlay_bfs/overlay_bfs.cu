// Session 38 prototype (not part of the package): BFS over a tile overlay, the
// customizable-route-planning idea applied to unit weights. The graph is the tiled copy
// (bfs/gpu/tiled.py: tiles of T = 4096 compact, connected vertices). Per graph, once: the
// boundary vertices of each tile (an edge to or from another tile) and, per tile, the
// in-tile distance between every pair of them (D, uint16). Per search:
// 1. source_tile: a block BFS inside the source's tile gives its boundary labels;
// 2. overlay_rounds (cooperative): label-correcting rounds over the tiles whose boundary
//    labels fell: a tile applies its lowered labels through D (min-plus, the whole tile's
//    interior crossed in one parallel step instead of ~25 dependent local levels) and
//    sends lowered labels over its cut edges (+1), activating the tiles they lower;
// 3. final_labels: every tile, seeded with its exact boundary labels (and the source),
//    runs one multi-source BFS inside itself and writes its labels in the caller's ids.
// Exact: a shortest path is in-tile segments between boundary vertices joined by cut
// edges; D gives each segment's shortest in-tile length, so the overlay's fixed point is
// the boundary vertices' distances, and a vertex's distance is the least boundary label
// of its tile plus its in-tile distance (or its in-tile distance from the source).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#ifndef T_SHIFT
#define T_SHIFT 12
#endif
#define T (1 << T_SHIFT)
#ifndef BLOCK
#define BLOCK 256
#endif
#define PER_THREAD (T / BLOCK)
#define INF 0x3fffffff
#define NO_PATH 0xffffu
#define CHUNK 8192  // D entries staged in shared memory at once (16 KB)

typedef long long i64;

// The tile's in-tile edges into shared memory: s_off[0..T] relative offsets, s_idx local
// ids (lptr / lidx: the graph's in-tile edges alone, per vertex, 16-bit local ids).
__device__ void load_tile(const int* __restrict__ lptr, const unsigned short* __restrict__ lidx,
                          int t, int* s_off, unsigned short* s_idx) {
    const i64 first = (i64)t << T_SHIFT;
    const int base = lptr[first];
    const int count = lptr[first + T] - base;
    for (int v = threadIdx.x; v <= T; v += blockDim.x) s_off[v] = lptr[first + v] - base;
    for (int k = threadIdx.x; k < count; k += blockDim.x) s_idx[k] = lidx[base + k];
    __syncthreads();
}

// Multi-source bucket BFS inside the loaded tile over lab[] (shared, INF = unreached):
// levels from first to the last lowered one, never before max_seed. flag: 3 shared words,
// zero.
__device__ void tile_bfs(const int* s_off, const unsigned short* s_idx, int* lab, int first,
                         int max_seed, int* flag) {
    for (int level = first;; ++level) {
        if (threadIdx.x == 0) flag[(level + 1) % 3] = 0;
        for (int v = threadIdx.x; v < T; v += blockDim.x) {
            if (lab[v] != level) continue;
            for (int k = s_off[v]; k < s_off[v + 1]; ++k) {
                if (atomicMin(lab + s_idx[k], level + 1) > level + 1) flag[level % 3] = 1;
            }
        }
        __syncthreads();
        const int more = flag[level % 3];
        if (!more && level >= max_seed) break;
        // every thread read flag[level % 3] before thread 0 clears it two levels on
    }
}

__device__ void clear_tile(int* lab, int* flag) {
    for (int v = threadIdx.x; v < T; v += blockDim.x) lab[v] = INF;
    if (threadIdx.x < 3) flag[threadIdx.x] = 0;
    __syncthreads();
}

// One block per boundary vertex b: row i = b - bstart[t] of tile t's D.
extern "C" __global__ void __launch_bounds__(BLOCK)
overlay_rows(const int* __restrict__ lptr, const unsigned short* __restrict__ lidx,
             const int* __restrict__ bverts, const int* __restrict__ bstart,
             const i64* __restrict__ dofs, unsigned short* D) {
    __shared__ int lab[T];
    __shared__ int flag[3];
    __shared__ int s_off[T + 1];
    extern __shared__ unsigned short s_idx[];  // the tile's in-tile edges
    const int b = blockIdx.x;
    const int gv = bverts[b];
    const int t = gv >> T_SHIFT;
    load_tile(lptr, lidx, t, s_off, s_idx);
    clear_tile(lab, flag);
    if (threadIdx.x == 0) lab[gv & (T - 1)] = 0;
    __syncthreads();
    tile_bfs(s_off, s_idx, lab, 0, 0, flag);
    const int base = bstart[t], nb = bstart[t + 1] - base, i = b - base;
    unsigned short* row = D + dofs[t] + (i64)i * ((nb + 7) & ~7);
    for (int j = threadIdx.x; j < nb; j += blockDim.x) {
        const int l = lab[bverts[base + j] & (T - 1)];
        row[j] = l >= (int)NO_PATH ? (unsigned short)NO_PATH : (unsigned short)l;
    }
}

// One block: the source's tile; its boundary labels, and round 1's list (the tile).
extern "C" __global__ void __launch_bounds__(BLOCK)
source_tile(const int* __restrict__ lptr, const unsigned short* __restrict__ lidx,
            const int* __restrict__ bverts, const int* __restrict__ bstart, int* L,
            int* mark, int* lists, int* counts, int n_tiles, int s) {
    __shared__ int lab[T];
    __shared__ int flag[3];
    __shared__ int s_off[T + 1];
    extern __shared__ unsigned short s_idx[];  // the tile's in-tile edges
    const int t = s >> T_SHIFT;
    load_tile(lptr, lidx, t, s_off, s_idx);
    clear_tile(lab, flag);
    if (threadIdx.x == 0) {
        lab[s & (T - 1)] = 0;
        mark[t] = 1;
        lists[n_tiles + 0] = t;  // round 1 reads lists[1]
        counts[1] = 1;
    }
    __syncthreads();
    tile_bfs(s_off, s_idx, lab, 0, 0, flag);
    const int base = bstart[t], nb = bstart[t + 1] - base;
    for (int j = threadIdx.x; j < nb; j += BLOCK) L[base + j] = lab[bverts[base + j] & (T - 1)];
}

// Cooperative: rounds of active tiles until none. Dynamic shared memory: s_idx, s_lab
// (max_nb each) and the D chunk (CHUNK uint16).
extern "C" __global__ void __launch_bounds__(BLOCK)
overlay_rounds(int* L, int* applied, int* sent, const int* __restrict__ bstart,
               const i64* __restrict__ dofs, const unsigned short* __restrict__ D,
               const i64* __restrict__ cut_ptr, const int* __restrict__ cut_dst,
               const int* __restrict__ cut_tile, int* mark, int* lists, int* counts,
               int n_tiles, int max_nb, int* stats, int delta) {
    cg::grid_group grid = cg::this_grid();
    extern __shared__ __align__(16) int dyn[];
    uint4* chunk4 = reinterpret_cast<uint4*>(dyn);  // first: 16-byte aligned
    unsigned short* chunk = reinterpret_cast<unsigned short*>(dyn);
    int* s_idx = dyn + CHUNK / 2;
    int* s_lab = s_idx + max_nb;
    __shared__ int s_count;
    __shared__ int s_defer;
    long long prof[6] = {0, 0, 0, 0, 0, 0};  // thread 0: -, step 1, min-plus, cut, sync, visits
    int r = 1;
    i64 visits = 0, sources = 0;
    while (true) {
        const int n_act = __ldcg(counts + r % 3);
        if (n_act == 0) break;
        visits += n_act;
        const int* list = lists + (r & 1) * n_tiles;
        for (int k = blockIdx.x; k < n_act; k += gridDim.x) {
            long long t_mark = clock64();
            const int t = __ldcg(list + k);
            const int base = bstart[t], nb = bstart[t + 1] - base;
            if (threadIdx.x == 0) { s_count = 0; s_defer = 0; }
            __syncthreads();
            // delta > 0 (delta-stepping over the rounds): round r applies only labels below
            // r * delta; a tile holding a lowered label past it comes back next round
            // untouched there, so tiles are visited nearer their final labels.
            const int threshold = delta > 0 ? r * delta : INF;
            for (int i = threadIdx.x; i < nb; i += BLOCK) {
                const int li = __ldcg(L + base + i);
                if (li < __ldcg(applied + base + i)) {
                    if (li >= threshold) { s_defer = 1; continue; }
                    applied[base + i] = li;
                    const int slot = atomicAdd(&s_count, 1);
                    s_idx[slot] = i;
                    s_lab[slot] = li;
                }
            }
            __syncthreads();
            const int ns = s_count;
            if (threadIdx.x == 0 && s_defer && atomicExch(mark + t, r + 1) != r + 1) {
                const int slot = atomicAdd(counts + (r + 1) % 3, 1);
                lists[((r + 1) & 1) * n_tiles + slot] = t;
            }
            if (threadIdx.x == 0) { prof[1] += clock64() - t_mark; t_mark = clock64(); }
            if (threadIdx.x == 0) sources += ns;
            const unsigned short* Dt = D + dofs[t];
            const int stride = (nb + 7) & ~7;  // entries per D row (16-byte rows)
            const int vecs = stride >> 3;       // uint4 per row
            int best[PER_THREAD];
#pragma unroll
            for (int q = 0; q < PER_THREAD; ++q) best[q] = INF;
            const int rows = nb > 0 ? max(1, CHUNK / stride) : 1;
            for (int k0 = 0; k0 < ns; k0 += rows) {
                const int kn = min(rows, ns - k0);
                // Every load of the chunk in flight at once: 16-byte loads, unrolled.
                const int total = kn * vecs;
#pragma unroll 4
                for (int x = threadIdx.x; x < total; x += BLOCK) {
                    const int kk = x / vecs, p = x - kk * vecs;
                    chunk4[x] = reinterpret_cast<const uint4*>(Dt + (i64)s_idx[k0 + kk] * stride)[p];
                }
                __syncthreads();
                // Sources outer, unrolled: the shared loads of eight sources in flight
                // together (a min chain alone waited on each load: 28 us for a tile of
                // 463 boundary vertices all lowered, H200 run 8).
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
                    if (best[q] < __ldcg(applied + base + j)) applied[base + j] = best[q];
                }
            }
            __syncthreads();
            if (threadIdx.x == 0) { prof[2] += clock64() - t_mark; t_mark = clock64(); }
            for (int j = threadIdx.x; j < nb; j += BLOCK) {
                const int lj = __ldcg(L + base + j);
                if (lj >= __ldcg(sent + base + j)) continue;
                sent[base + j] = lj;
                const int nl = lj + 1;
                const i64 e_end = cut_ptr[base + j + 1];
                for (i64 e = cut_ptr[base + j]; e < e_end; ++e) {
                    const int w = cut_dst[e];
                    const int tw = cut_tile[e];
                    if (atomicMin(L + w, nl) > nl) {
                        if (atomicExch(mark + tw, r + 1) != r + 1) {
                            const int slot = atomicAdd(counts + (r + 1) % 3, 1);
                            lists[((r + 1) & 1) * n_tiles + slot] = tw;
                        }
                    }
                }
            }
            __syncthreads();
            if (threadIdx.x == 0) { prof[3] += clock64() - t_mark; prof[5] += 1; }
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) counts[(r + 2) % 3] = 0;
        const long long t_sync = clock64();
        grid.sync();
        if (threadIdx.x == 0) prof[4] += clock64() - t_sync;
        ++r;
    }
    if (threadIdx.x == 0) {
        for (int q = 1; q < 6; ++q)
            atomicAdd(reinterpret_cast<unsigned long long*>(stats) + 2 + q, (unsigned long long)prof[q]);
        atomicAdd(reinterpret_cast<unsigned long long*>(stats) + 1, (unsigned long long)sources);
        if (blockIdx.x == 0) {
            stats[0] = r - 1;
            reinterpret_cast<unsigned long long*>(stats)[2] = (unsigned long long)visits;
        }
    }
}

// One block per tile: exact labels from the boundary labels (and the source), written in
// the caller's ids (dist prefilled with -1).
extern "C" __global__ void __launch_bounds__(BLOCK)
final_labels(const int* __restrict__ lptr, const unsigned short* __restrict__ lidx,
             const int* __restrict__ bverts, const int* __restrict__ bstart, const int* L,
             const int* __restrict__ perm, int* dist, int s) {
    __shared__ int lab[T];
    __shared__ int flag[3];
    __shared__ int s_off[T + 1];
    extern __shared__ unsigned short s_idx[];  // the tile's in-tile edges
    __shared__ int lo, hi;
    const int t = blockIdx.x;
    load_tile(lptr, lidx, t, s_off, s_idx);
    clear_tile(lab, flag);
    if (threadIdx.x == 0) { lo = INF; hi = -1; }
    __syncthreads();
    const int base = bstart[t], nb = bstart[t + 1] - base;
    for (int i = threadIdx.x; i < nb; i += blockDim.x) {
        const int l = L[base + i];
        if (l < INF) {
            atomicMin(lab + (bverts[base + i] & (T - 1)), l);
            atomicMin(&lo, l);
            atomicMax(&hi, l);
        }
    }
    if (threadIdx.x == 0 && (s >> T_SHIFT) == t) {
        atomicMin(lab + (s & (T - 1)), 0);
        atomicMin(&lo, 0);
        atomicMax(&hi, 0);
    }
    __syncthreads();
    if (hi < 0) return;  // nothing of this tile is reached
    tile_bfs(s_off, s_idx, lab, lo, hi, flag);
    for (int v = threadIdx.x; v < T; v += blockDim.x) {
        const int l = lab[v];
        if (l < INF) dist[perm[((i64)t << T_SHIFT) + v]] = l;
    }
}
