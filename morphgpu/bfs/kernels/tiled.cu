// Tile-local, label-correcting BFS in one persistent launch (variant "tiled"; design, cost
// model and what would make it lose in morphgpu/bfs/gpu/tiled.py). For deep graphs whose
// ids are local (the locality-relabelled copy, gpu/relabel.py): a tile is the vertex range
// [t T, (t + 1) T), T = 1 << shift, and most edges stay inside it.
//
// Rounds are separated by the grid barrier. In round r the blocks take the tiles activated
// in round r - 1 (a list, taken with an atomic counter). For one tile a block:
// 1. loads its labels into shared memory (int32), its row offsets (uint16, relative to the
//    tile's first edge) and its column ids as 16-bit local ids (REMOTE for a neighbour
//    outside the tile); rows that do not fit the shared edge capacity (a suffix of the
//    tile's vertices: the first row that passes it and all after) are "global rows";
// 2. seeds a frontier bitmap with its vertices whose stamp is >= r (stamp[v] = the round
//    in which v must be processed again, written by whoever lowered v's label from
//    outside the tile; stamps are never cleared, they only grow);
// 3. runs local label-correcting levels in shared memory: each frontier vertex with a
//    local row relaxes its in-tile neighbours with atomicMin on the shared labels, and a
//    lowered neighbour enters the next frontier; __syncthreads_or ends the loop when a
//    level lowers nothing. No global memory is touched here;
// 4. writes back: every vertex that was a seed or was lowered ("touched") gets
//    atomicMin(label, local label) (fire and forget), and relaxes from global memory the
//    edges the local levels did not: a local row's REMOTE entries, a global row's every
//    entry (in-tile neighbours included). Where such an atomicMin lowers a label, the
//    vertex's stamp becomes r + 1 and its tile is activated for round r + 1 (atomicMax on
//    the tile's mark, the first activation appends the tile to the next round's list).
// The search ends, on the device, after a round that activated no tile. Then labels
// become the output (-1 unreached) and, when asked, parents: any in-neighbour one level
// up (the graph itself when symmetric, the reverse graph of a directed one: `rev`).
//
// Exactness. Labels only decrease and are always lengths of real paths (loaded labels
// are; the local levels and the relaxations add one per edge). At the end every edge
// (u, w) has label[w] <= label[u] + 1: consider u's last decrease, to its final value.
// If the local levels of u's tile made it, u was in a frontier, so its local edges were
// relaxed in that loop (and the local labels, <= the relaxed values, were written back
// with atomicMin), and its other edges were relaxed at the write-back (u touched). If a
// global atomicMin made it, u's stamp became r + 1 and its tile was activated; that
// round reads u's final label after the barrier, seeds u and relaxes all its edges.
// Races inside a round are harmless: a tile reading a label or a stamp while another
// tile lowers it either sees the new values or is processed again next round; write-
// backs are atomicMin and never raise a label. The Bellman-Ford fixed point with unit
// weights is the BFS distance.
//
// Stamps and marks outlive a search: the rounds of a search are numbered from ctrl[C_BASE]
// (one past the previous search's last round; in that last round nothing was stamped or
// activated), so no per-search clearing of n stamps. ctrl[C_BASE] == 0 (new buffers) or
// past 2^31 resets both arrays in the launch.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>

#ifndef MG_TILED_BLOCK
#define MG_TILED_BLOCK 512
#endif

using namespace mg;

namespace {

constexpr int BLOCK = MG_TILED_BLOCK;
constexpr int WARPS = BLOCK / 32;
constexpr unsigned FULL = 0xffffffffu;
constexpr int UNREACHED = 0x7fffffff;
constexpr unsigned short REMOTE = 0xffffu;
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, one block");

// ctrl words (u64): counters on their own 128-byte lines. tiled.py reads C_STATS on demand.
constexpr int C_COUNT = 0;   // + r % 3: tiles in round r's list
constexpr int C_TAKE = 16;   // + r % 3: tiles of round r's list taken
constexpr int C_BASE = 32;   // the first round of the next search
constexpr int C_ERROR = 33;  // a reached vertex without an in-neighbour one level up (a bug)
constexpr int C_STATS = 48;
enum Stat { S_ROUNDS, S_TILES, S_LEVELS, S_REMOTE_LOWERED, S_GLOBAL_ROWS, S_COUNT };
constexpr unsigned BASE_LIMIT = 0x80000000u;

__device__ __forceinline__ u64 ld_volatile_u64(const u64* p) { return *(const volatile u64*)p; }

// The shared-memory layout of one tile (dynamic shared memory, sizes from the host:
// tiled.py's shared_bytes must match). T = 1 << shift vertices, W = T / 32 bitmap words.
struct TileSmem {
    int* dist;              // T local labels
    unsigned* frontier;     // 3 bitmaps of W words: read at level L: bitmap L % 3, written:
                            // (L + 1) % 3 (a pointer each would be an array in local memory)
    unsigned* touched;      // W words: seeds and every vertex lowered in this round
    unsigned short* off;    // T + 1 row offsets relative to the tile's first edge
    unsigned short* nbr;    // edge_cap local neighbour ids (REMOTE: outside the tile)
};

__device__ __forceinline__ TileSmem carve(unsigned char* base, int T) {
    TileSmem s;
    const int W = T / 32;
    s.dist = (int*)base;
    unsigned* bits = (unsigned*)(s.dist + T);
    s.frontier = bits;
    s.touched = bits + 3 * W;
    s.off = (unsigned short*)(bits + 4 * W);
    s.nbr = s.off + ((T + 2) & ~1);  // keeps nbr 4-byte aligned
    return s;
}

// Lower label[w] to nd from outside w's tile's local levels; where it lowered it, stamp w
// for round r + 1 and activate its tile. Returns whether it lowered it.
__device__ __forceinline__ bool relax_global(int* label, unsigned* stamp, unsigned* mark,
                                             i64* next_list, u64* next_count, i64 w, int nd,
                                             unsigned r, int shift) {
    const int old = atomicMin(label + w, nd);
    if (old <= nd) return false;
    stamp[w] = r + 1u;
    const i64 t = w >> shift;
    if (atomicMax(mark + t, r + 1u) < r + 1u) {
        const u64 pos = atomicAdd(next_count, 1ull);
        next_list[pos] = t;
    }
    return true;
}

}  // namespace

// label: the output (int32, -1 unreached); stamp: n words; mark: n_tiles words; lists: two
// lists of n_tiles tile ids; ctrl: 64 u64 words (C_BASE kept between searches).
extern "C" __global__ void __launch_bounds__(MG_TILED_BLOCK, 2)
bfs_tiled(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
          const eid_t* __restrict__ rev_indptr, const vid_t* __restrict__ rev_indices,
          int* label, vid_t* parent, unsigned* stamp, unsigned* mark, i64* lists, u64* ctrl,
          i64 n, vid_t source, int shift, int edge_cap, i64 n_tiles, unsigned* barrier_state) {
    // CSR only: a tile's rows are one contiguous slice of the column ids.
    const CsrAdjacency adj{indptr, indices};
    const CsrAdjacency radj{rev_indptr, rev_indices};
    GridBarrier bar(barrier_state);
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int T = 1 << shift;
    const int W = T >> 5;
    const TileSmem sm = carve(smem_raw, T);
    __shared__ i64 s_tile;
    __shared__ eid_t s_eb, s_ee;
    __shared__ int s_local_rows;
    const int tid = threadIdx.x;
    const unsigned lane = lane_id();
    const int warp = (int)warp_id();

    // 1. Labels, the source, the first round's list. Every block reads the base before
    //    block 0 rewrites it (after the last barrier).
    unsigned base = (unsigned)ld_volatile_u64(ctrl + C_BASE);
    const bool reset = base == 0u || base >= BASE_LIMIT;
    if (reset) base = 1u;
    const i64 src_tile = (i64)source >> shift;
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        label[v] = v == (i64)source ? 0 : UNREACHED;
        if (reset) {
            stamp[v] = v == (i64)source ? base : 0u;
        } else if (v == (i64)source) {
            stamp[v] = base;
        }
    }
    if (reset) {
        for (i64 t = global_tid(); t < n_tiles; t += global_stride()) {
            mark[t] = t == src_tile ? base : 0u;
        }
    }
    if (blockIdx.x == 0 && tid == 0) {
        if (!reset) mark[src_tile] = base;
        lists[(base & 1u) * n_tiles] = src_tile;
        for (int k = 0; k < 3; ++k) {
            ctrl[C_COUNT + k] = 0ull;
            ctrl[C_TAKE + k] = 0ull;
        }
        ctrl[C_COUNT + base % 3u] = 1ull;
        ctrl[C_ERROR] = 0ull;
        for (int s = 0; s < S_COUNT; ++s) ctrl[C_STATS + s] = 0ull;
    }
    grid_sync(bar);

    // 2. Rounds.
    u64 stats[S_COUNT] = {};
    unsigned r = base;
    for (;; ++r) {
        const i64* list = lists + (i64)(r & 1u) * n_tiles;
        i64* next_list = lists + (i64)((r + 1u) & 1u) * n_tiles;
        u64* next_count = ctrl + C_COUNT + (r + 1u) % 3u;
        const u64 count = ld_volatile_u64(ctrl + C_COUNT + r % 3u);
        if (blockIdx.x == 0 && tid == 0) {
            // Round r + 1 appends there, round r + 2 takes there; nobody touches them now.
            ctrl[C_COUNT + (r + 2u) % 3u] = 0ull;
            ctrl[C_TAKE + (r + 2u) % 3u] = 0ull;
            stats[S_ROUNDS] += 1;
        }
        for (;;) {
            __syncthreads();  // the previous tile's shared memory is no longer read
            if (tid == 0) {
                const u64 k = atomicAdd(ctrl + C_TAKE + r % 3u, 1ull);
                s_tile = k < count ? __ldcg(list + k) : (i64)-1;
                if (s_tile >= 0) {
                    const i64 s = s_tile << shift;
                    const i64 e = s + T < n ? s + T : n;
                    s_eb = adj.begin(s);
                    s_ee = adj.begin(e);  // indptr[e], e <= n
                    s_local_rows = (int)(e - s);
                }
            }
            __syncthreads();
            const i64 tile = s_tile;
            if (tile < 0) break;
            if (tid == 0) stats[S_TILES] += 1;
            const i64 s = tile << shift;
            const int cnt = (int)((s + T < n ? s + T : n) - s);
            const eid_t eb = s_eb;
            const i64 tile_edges = (i64)(s_ee - eb);
            const int loaded = (int)(tile_edges < (i64)edge_cap ? tile_edges : (i64)edge_cap);

            // Load: labels, seeds, row offsets; the first row past the edge capacity.
            for (int i = tid; i < T; i += BLOCK) {
                const bool valid = i < cnt;
                const i64 v = s + i;
                bool seed = false;
                if (valid) {
                    const int d = __ldcg(label + v);
                    sm.dist[i] = d;
                    // A stamp may be seen before the atomicMin that preceded it (no fence
                    // between them); such a vertex waits for the next round, where its
                    // tile is active and the barrier orders both.
                    seed = __ldcg(stamp + v) >= r && d != UNREACHED;
                    const i64 b = (i64)(adj.begin(v) - eb);
                    sm.off[i] = (unsigned short)(b < (i64)edge_cap ? b : (i64)edge_cap);
                    if ((i64)(adj.end(v) - eb) > (i64)edge_cap) atomicMin(&s_local_rows, i);
                }
                const unsigned word = __ballot_sync(FULL, seed);
                if (lane == 0) {
                    sm.frontier[i >> 5] = word;
                    sm.frontier[W + (i >> 5)] = 0u;
                    sm.frontier[2 * W + (i >> 5)] = 0u;
                    sm.touched[i >> 5] = 0u;
                }
            }
            if (tid == 0) sm.off[cnt] = (unsigned short)loaded;
#pragma unroll 4
            for (int k = tid; k < loaded; k += BLOCK) {
                const i64 j = (i64)adj.at(eb + (eid_t)k) - s;
                sm.nbr[k] = j >= 0 && j < (i64)cnt ? (unsigned short)j : REMOTE;
            }
            __syncthreads();
            const int local_rows = s_local_rows;

            // Local levels in shared memory.
            for (int level = 0, third = 0;; ++level, third = third == 2 ? 0 : third + 1) {
                const unsigned* cur = sm.frontier + third * W;
                unsigned* next = sm.frontier + (third == 2 ? 0 : third + 1) * W;
                unsigned* spare = sm.frontier + (third == 0 ? 2 : third - 1) * W;  // level - 1's
                for (int w = tid; w < W; w += BLOCK) {
                    spare[w] = 0u;
                    sm.touched[w] |= cur[w];
                }
                bool lowered = false;
                for (int w = warp; w < W; w += WARPS) {
                    const unsigned bits = cur[w];
                    if (bits == 0u) continue;  // warp-uniform
                    const int i = (w << 5) + (int)lane;
                    if (!((bits >> lane) & 1u) || i >= local_rows) continue;
                    const int nd = sm.dist[i] + 1;
                    const int kb = sm.off[i], ke = sm.off[i + 1];
                    for (int k = kb; k < ke; ++k) {
                        const unsigned short j = sm.nbr[k];
                        if (j == REMOTE) continue;
                        if (nd < *(volatile int*)(sm.dist + j) && atomicMin(sm.dist + j, nd) > nd) {
                            atomicOr(next + (j >> 5), 1u << (j & 31));
                            lowered = true;
                        }
                    }
                }
                if (tid == 0) stats[S_LEVELS] += 1;
                if (!__syncthreads_or(lowered)) break;
            }

            // Write-back and the edges the local levels did not relax.
            for (int w = warp; w < W; w += WARPS) {
                const unsigned bits = sm.touched[w];
                if (bits == 0u) continue;
                const int i = (w << 5) + (int)lane;
                if (!((bits >> lane) & 1u)) continue;
                const i64 v = s + i;
                const int d = sm.dist[i];
                atomicMin(label + v, d);
                const int nd = d + 1;
                if (i >= local_rows) {
                    stats[S_GLOBAL_ROWS] += 1;
                    for (eid_t k = adj.begin(v); k < adj.end(v); ++k) {
                        stats[S_REMOTE_LOWERED] += relax_global(
                            label, stamp, mark, next_list, next_count, (i64)adj.at(k), nd, r,
                            shift);
                    }
                    continue;
                }
                const int kb = sm.off[i], ke = sm.off[i + 1];
                for (int k = kb; k < ke; ++k) {
                    if (sm.nbr[k] != REMOTE) continue;
                    stats[S_REMOTE_LOWERED] += relax_global(
                        label, stamp, mark, next_list, next_count,
                        (i64)adj.at(eb + (eid_t)k), nd, r, shift);
                }
            }
        }
        grid_sync(bar);
        if (ld_volatile_u64(next_count) == 0ull) break;
    }
    // Per-block statistics, one atomic per warp and counter.
#pragma unroll
    for (int k = 0; k < S_COUNT; ++k) {
        const u64 x = warp_sum(stats[k]);
        if (lane == 0 && x) atomicAdd(ctrl + C_STATS + k, x);
    }
    // Nobody reads the base again in this launch (read before the first barrier).
    if (blockIdx.x == 0 && tid == 0) ctrl[C_BASE] = (u64)r + 1ull;

    // 3. Output: -1 for unreached while other threads read labels for parents (either
    //    UNREACHED or -1 never equals d - 1 >= 0, so the race is harmless).
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        const int d = __ldcg(label + v);
        if (d == UNREACHED) {
            label[v] = -1;
            if (parent) parent[v] = (vid_t)-1;
            continue;
        }
        if (!parent) continue;
        if (v == (i64)source) {
            parent[v] = source;
            continue;
        }
        vid_t p = (vid_t)-1;
        for (eid_t k = radj.begin(v); k < radj.end(v); ++k) {
            const vid_t w = radj.at(k);
            if (__ldcg(label + w) == d - 1) {
                p = w;
                break;
            }
        }
        if (p == (vid_t)-1) atomicExch(ctrl + C_ERROR, 1ull);
        parent[v] = p;
    }
}
