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
// 2. seeds the first local frontier (a queue of local ids and a bitmap) with its vertices
//    whose stamp is >= r (stamp[v] = the round in which v must be processed again,
//    written by whoever lowered v's label from outside the tile; stamps are never
//    cleared, they only grow);
// 3. runs local label-correcting levels in shared memory: a group of G lanes per queued
//    frontier vertex with a local row (G = 1, 2, ..., 32 from the queue's length: the
//    block's lanes spread over the queue) relaxes its in-tile neighbours with atomicMin on
//    the shared labels, each lane EB edges per pass; a lowered neighbour whose bit in the
//    next frontier's bitmap was clear (the bitmap keeps each vertex once per queue) is
//    appended to the next queue (one warp-aggregated atomicAdd on a shared length per
//    pass). The loop ends after a level that queued nothing. No global memory is touched
//    here. (The first form scanned all T / 32 bitmap words each level; the second took a
//    thread per queued vertex, walked its row in dependent passes of EB = 4 edges and
//    appended each slot with its own atomicAdd and shuffle: 1.16 us per level on the
//    4000^2 grid, 2.4-2.5 on Delaunay graphs, 1.19 on road COL (H100). This form, EB = 4:
//    1.21 / 1.25-1.29 / 0.98 us; EB = 2: 1.01 / 1.20-1.23 / 0.86 us; EB = 1: 0.88 / 1.22-
//    1.25 / 0.76 us: tiled.py builds EB = 1 for mean degrees up to 4.5, 2 above. One
//    block per SM instead of two took only 0.1 us off a level: not contention with the
//    co-resident block's load. H200, session 30: the group size without a division and
//    claims without a label read first took a level on Delaunay 1M from 1.16 to 0.93 us
//    (ncu: the level is one chain of dependent instructions; see relax_edges and the
//    level loop). One block per SM (no register bound of 64) took it to 0.86 but lost
//    where a round holds more tiles than SMs (Delaunay 4M 0.975x, a 5000^2 grid with
//    deleted edges 0.943x; Delaunay 1M 1.089x). The ~0.3 us one chain of shared
//    accesses and one __syncthreads per level should cost is not reached yet);
// 4. writes back: every vertex that was a seed or was lowered ("touched") gets
//    atomicMin(label, local label) (fire and forget), and the edges the local levels did
//    not relax are relaxed from global memory: a global row's every entry (in-tile
//    neighbours included) by its thread, a local row's REMOTE entries listed in shared
//    memory first and then spread over the block (their loads and atomics in flight
//    together). Where such an atomicMin lowers a label, the vertex's stamp becomes r + 1
//    and its tile is activated for round r + 1 (atomicMax on the tile's mark, the first
//    activation appends the tile to the next round's list).
// With horizon_step > 0, round r (the k-th of the search) expands only labels below
// k * horizon_step: a touched vertex at or past it relaxes nothing, is stamped r + 1 and
// keeps its tile active (tiles then advance in step instead of flooding ahead on labels
// that later rounds correct).
// The search ends, on the device, after a round that activated no tile. Then labels
// become the output (-1 unreached) and, when asked, parents: any in-neighbour one level
// up (the graph itself when symmetric, the reverse graph of a directed one: `rev`).
//
// Exactness. Labels only decrease and are always lengths of real paths (loaded labels
// are; the local levels and the relaxations add one per edge). At the end every edge
// (u, w) has label[w] <= label[u] + 1: consider u's last decrease, to its final value.
// If the local levels of u's tile made it, u was in a frontier, so (below the horizon;
// else it is stamped and comes back, as below) its local edges were relaxed in that loop (and the local labels, <= the relaxed values, were written back
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
constexpr unsigned FULL = 0xffffffffu;
constexpr int UNREACHED = 0x7fffffff;
constexpr unsigned short REMOTE = 0xffffu;
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, one block");
constexpr int LOG_BLOCK = ceil_log2(BLOCK);
static_assert((1 << LOG_BLOCK) == BLOCK, "a power of two (the local levels' lane groups)");

// ctrl words (u64): counters on their own 128-byte lines. tiled.py reads C_STATS on demand.
constexpr int C_COUNT = 0;   // + r % 3: tiles in round r's list
constexpr int C_TAKE = 16;   // + r % 3: tiles of round r's list taken
constexpr int C_BASE = 32;   // the first round of the next search
constexpr int C_ERROR = 33;  // a reached vertex without an in-neighbour one level up (a bug)
constexpr int C_STATS = 48;
// Counters, and SM cycles read by thread 0 (a few clock reads per tile): summed over the
// blocks' tiles for the load, the local levels and the write-back; block 0's own time in
// the round barriers and in the whole round loop.
enum Stat {
    S_ROUNDS, S_TILES, S_LEVELS, S_REMOTE_LOWERED, S_GLOBAL_ROWS,
    S_LOAD_CYCLES, S_LEVEL_CYCLES, S_WRITE_CYCLES, S_BARRIER_CYCLES, S_LOOP_CYCLES, S_COUNT
};
constexpr unsigned BASE_LIMIT = 0x80000000u;
constexpr int VB = 2;  // vertices per thread whose loads issue together (tile load)
constexpr int RB = 2;  // remote edges per thread whose loads and atomics issue together
#ifndef MG_TILED_MIN_BLOCKS
#define MG_TILED_MIN_BLOCKS 2
#endif
#ifndef MG_TILED_EB
#define MG_TILED_EB 2
#endif
constexpr int EB = MG_TILED_EB;  // edges per lane whose shared loads issue together (local levels)

__device__ __forceinline__ u64 ld_volatile_u64(const u64* p) { return *(const volatile u64*)p; }

// The shared-memory layout of one tile (dynamic shared memory, sizes from the host:
// tiled.py's shared_bytes must match). T = 1 << shift vertices, W = T / 32 bitmap words.
struct TileSmem {
    int* dist;              // T local labels
    unsigned* frontier;     // 3 bitmaps of W words: read at level L: bitmap L % 3, written:
                            // (L + 1) % 3 (a pointer each would be an array in local memory)
    unsigned* touched;      // W words: seeds and every vertex lowered in this round
    unsigned* remote;       // T edges to relax from global memory at the write-back:
                            // (local edge index << 16) | local vertex. The same bytes
                            // hold the local levels' two queues (never live together):
    unsigned short* queue;  // 2 T local ids: level L reads queue (L % 2) T, appends to
                            // the other
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
    s.remote = bits + 4 * W;
    s.queue = (unsigned short*)s.remote;
    s.off = (unsigned short*)(s.remote + T);
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

// Append the local ids j[u] where push[u] to a shared queue (any subset of a warp's lanes
// may call it together: the lanes converged at the call). One ballot per slot, one
// atomicAdd on the length and one shuffle per warp for all EB slots (one of each per slot
// made a chain of EB shared atomics and shuffles per pass).
__device__ __forceinline__ void enqueue_local(unsigned short* queue, int* length,
                                              const bool (&push)[EB],
                                              const unsigned short (&j)[EB]) {
    const unsigned active = __activemask();
    unsigned ballot[EB];
    int total = 0;
#pragma unroll
    for (int u = 0; u < EB; ++u) {
        ballot[u] = __ballot_sync(active, push[u]);
        total += __popc(ballot[u]);
    }
    if (total == 0) return;  // the same for every lane of `active`
    const unsigned lane = lane_id();
    const int leader = __ffs(active) - 1;
    int base = 0;
    if ((int)lane == leader) base = atomicAdd(length, total);
    base = __shfl_sync(active, base, leader);
    const unsigned below = (1u << lane) - 1u;
#pragma unroll
    for (int u = 0; u < EB; ++u) {
        if (push[u]) queue[base + __popc(ballot[u] & below)] = j[u];
        base += __popc(ballot[u]);
    }
}

// A pass over one frontier vertex's local row by one lane of its group of G = 1 << lg lanes:
// the EB edges k, k + G, ..., k + (EB - 1) G below ke (their id loads issue together), each
// in-tile neighbour lowered with atomicMin at once. (Reading its label first, to skip the
// atomic where it would not lower it, put one more shared round trip in every level's
// chain: without it 1.036 / 1.029 / 1.029x faster on Delaunay 1M / 4M / a 3000^2 grid with
// deleted edges, H200, 8 roots.) A lowered neighbour not yet in the next frontier (its bit
// in `next`) is appended to the next queue.
__device__ __forceinline__ void relax_edges(const TileSmem& sm, int nd, int k, int ke, int lg,
                                            unsigned* next, unsigned short* next_queue,
                                            int* next_length) {
    unsigned short j[EB];
    bool push[EB];
#pragma unroll
    for (int u = 0; u < EB; ++u) {
        const int e = k + (u << lg);
        j[u] = e < ke ? sm.nbr[e] : REMOTE;
    }
#pragma unroll
    for (int u = 0; u < EB; ++u) {
        push[u] = false;
        if (j[u] != REMOTE && atomicMin(sm.dist + j[u], nd) > nd) {
            const unsigned bit = 1u << (j[u] & 31);
            push[u] = (atomicOr(next + (j[u] >> 5), bit) & bit) == 0u;
        }
    }
    enqueue_local(next_queue, next_length, push, j);
}

// The tile's column ids [eb, eb + loaded) as local ids (REMOTE outside [s, s + cnt)):
// 16-byte loads over the aligned middle (where the array is 16-byte aligned), single
// ids at the ends, LB vectors per thread in flight.
__device__ __forceinline__ void load_ids(const vid_t* __restrict__ indices, eid_t eb,
                                         int loaded, i64 s, int cnt, unsigned short* nbr) {
    constexpr int P = 16 / (int)sizeof(vid_t);
    constexpr int LB = 4;
    const i64 begin = (i64)eb, end = (i64)eb + loaded;
    i64 head = begin, tail = begin;  // [head, tail): the vector part
    if (((unsigned long long)indices & 15ull) == 0ull) {
        head = (begin + P - 1) / P * P;
        tail = end / P * P;
        if (tail < head) tail = head;
    }
    if (tail <= head) head = tail = end;  // no vector part: all single ids
    auto put = [&](i64 k, vid_t w) {
        const i64 j = (i64)w - s;
        nbr[k - begin] = j >= 0 && j < (i64)cnt ? (unsigned short)j : REMOTE;
    };
    for (i64 k = begin + threadIdx.x; k < head; k += BLOCK) put(k, indices[k]);
    for (i64 k = tail + threadIdx.x; k < end; k += BLOCK) put(k, indices[k]);
    const uint4* vec = (const uint4*)indices;
    const i64 q_end = tail / P;
    for (i64 q0 = head / P + threadIdx.x; q0 < q_end; q0 += LB * BLOCK) {
        uint4 x[LB];
#pragma unroll
        for (int u = 0; u < LB; ++u) {
            const i64 q = q0 + (i64)u * BLOCK;
            if (q < q_end) x[u] = __ldg(vec + q);
        }
#pragma unroll
        for (int u = 0; u < LB; ++u) {
            const i64 q = q0 + (i64)u * BLOCK;
            if (q >= q_end) break;
            const vid_t* ids = (const vid_t*)&x[u];
#pragma unroll
            for (int e = 0; e < P; ++e) put(q * P + e, ids[e]);
        }
    }
}

__device__ __forceinline__ void count_remote(u64* stats, bool lowered) {
    if (lowered) atomicAdd(stats + S_REMOTE_LOWERED, 1ull);
}

}  // namespace

// label: the output (int32, -1 unreached); stamp: n words; mark: n_tiles words; lists: two
// lists of n_tiles tile ids; ctrl: 64 u64 words (C_BASE kept between searches).
extern "C" __global__ void __launch_bounds__(MG_TILED_BLOCK, MG_TILED_MIN_BLOCKS)
bfs_tiled(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
          const eid_t* __restrict__ rev_indptr, const vid_t* __restrict__ rev_indices,
          int* label, vid_t* parent, unsigned* stamp, unsigned* mark, i64* lists, u64* ctrl,
          i64 n, vid_t source, int shift, int edge_cap, int horizon_step, i64 n_tiles,
          unsigned* barrier_state) {
    // CSR only: a tile's rows are one contiguous slice of the column ids.
    const CsrAdjacency radj{rev_indptr, rev_indices};
    GridBarrier bar(barrier_state);
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int T = 1 << shift;
    const int W = T >> 5;
    const TileSmem sm = carve(smem_raw, T);
    __shared__ i64 s_tile;
    __shared__ eid_t s_eb, s_ee;
    __shared__ int s_local_rows;
    __shared__ int s_remote;
    __shared__ int s_deferred;
    __shared__ int s_queued[3];  // level L's queue length: s_queued[L % 3]
    const int tid = threadIdx.x;
    const unsigned lane = lane_id();
    // Per-block counters in shared memory (registers are the scarce resource here).
    __shared__ u64 stats[S_COUNT];
    if (tid < S_COUNT) stats[tid] = 0ull;

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
    unsigned r = base;
    // Thread 0's clock stamps, and the round's next list and its count, in shared memory:
    // registers kept live across the local levels spill there (64 per thread at 2 blocks
    // of 512 per SM).
    __shared__ long long s_clock[3];  // the round loop's start, the write-back's (-1:
                                      // none), the load's
    if (tid == 0) {
        s_clock[0] = clock64();
        s_clock[1] = -1;
    }
    for (;; ++r) {
        i64* next_list = lists + (i64)((r + 1u) & 1u) * n_tiles;
        u64* next_count = ctrl + C_COUNT + (r + 1u) % 3u;
        // The horizon (horizon_step > 0): labels this round may expand from.
        const long long reach = (long long)(r - base + 1u) * horizon_step;
        const int horizon = horizon_step > 0 && reach < UNREACHED ? (int)reach : UNREACHED;
        if (blockIdx.x == 0 && tid == 0) {
            // Round r + 1 appends there, round r + 2 takes there; nobody touches them now.
            ctrl[C_COUNT + (r + 2u) % 3u] = 0ull;
            ctrl[C_TAKE + (r + 2u) % 3u] = 0ull;
            stats[S_ROUNDS] += 1;
        }
        for (;;) {
            __syncthreads();  // the previous tile's shared memory is no longer read
            // A volatile load inside the tid == 0 branch: a plain one (as in `tid == 0 &&
            // s_clock[1] >= 0`, or nested) is hoisted out of the branch onto every thread (a
            // shared load is safe to speculate), which racecheck reports against thread 0's
            // store below (WAR/RAW on the H100, harmless but not clean).
            if (tid == 0) {
                const long long write_start = *(volatile long long*)(s_clock + 1);
                if (write_start >= 0) {
                    stats[S_WRITE_CYCLES] += (u64)(clock64() - write_start);
                    s_clock[1] = -1;
                }
            }
            if (tid == 0) {
                const u64 count = ld_volatile_u64(ctrl + C_COUNT + r % 3u);
                const u64 k = atomicAdd(ctrl + C_TAKE + r % 3u, 1ull);
                s_tile = k < count ? __ldcg(lists + (i64)(r & 1u) * n_tiles + k) : (i64)-1;
                if (s_tile >= 0) {
                    const i64 s = s_tile << shift;
                    const i64 e = s + T < n ? s + T : n;
                    s_eb = indptr[s];
                    s_ee = indptr[e];  // e <= n
                    s_local_rows = (int)(e - s) - (s_ee - s_eb > (eid_t)edge_cap ? 1 : 0);
                    s_remote = 0;
                    s_deferred = 0;
                    s_queued[0] = s_queued[1] = s_queued[2] = 0;
                }
            }
            __syncthreads();
            const i64 tile = s_tile;
            if (tile < 0) break;
            if (tid == 0) {
                s_clock[2] = clock64();
                stats[S_TILES] += 1;
            }
            const i64 s = tile << shift;
            const int cnt = (int)((s + T < n ? s + T : n) - s);
            const eid_t eb = s_eb;
            const i64 tile_edges = (i64)(s_ee - eb);
            const int loaded = (int)(tile_edges < (i64)edge_cap ? tile_edges : (i64)edge_cap);

            // Load: labels, seeds, row offsets, the first row past the edge capacity (from
            // the row starts: one offset load per vertex); VB vertices per thread whose
            // loads issue together, then the column ids.
            for (int i0 = tid; i0 < T; i0 += VB * BLOCK) {
                int d[VB];
                unsigned st[VB];
                eid_t rb[VB];
#pragma unroll
                for (int u = 0; u < VB; ++u) {
                    const int i = i0 + u * BLOCK;
                    if (i < cnt) {
                        d[u] = __ldcg(label + s + i);
                        st[u] = __ldcg(stamp + s + i);
                        rb[u] = indptr[s + i];
                    }
                }
#pragma unroll
                for (int u = 0; u < VB; ++u) {
                    const int i = i0 + u * BLOCK;
                    if (i >= T) break;  // warp-uniform: T and BLOCK are whole warps
                    bool seed = false;
                    if (i < cnt) {
                        sm.dist[i] = d[u];
                        // A stamp may be seen before the atomicMin that preceded it (no
                        // fence between them); such a vertex waits for the next round,
                        // where its tile is active and the barrier orders both.
                        seed = st[u] >= r && d[u] != UNREACHED;
                        const i64 b = (i64)(rb[u] - eb);
                        sm.off[i] = (unsigned short)(b < (i64)edge_cap ? b : (i64)edge_cap);
                        // Row i - 1 ends where row i begins (the last row's end: s_ee,
                        // read with the tile); i >= 1 here (row 0 begins at eb).
                        if (b > (i64)edge_cap) atomicMin(&s_local_rows, i - 1);
                    }
                    const unsigned word = __ballot_sync(FULL, seed);
                    if (lane == 0) {
                        sm.frontier[i >> 5] = word;
                        sm.frontier[W + (i >> 5)] = 0u;
                        sm.frontier[2 * W + (i >> 5)] = 0u;
                        sm.touched[i >> 5] = 0u;
                    }
                    if (word != 0u) {  // warp-uniform
                        int at = 0;
                        if (lane == 0) at = atomicAdd(&s_queued[0], __popc(word));
                        at = __shfl_sync(FULL, at, 0);
                        if (seed) sm.queue[at + __popc(word & ((1u << lane) - 1u))] = i;
                    }
                }
            }
            if (tid == 0) sm.off[cnt] = (unsigned short)loaded;
            load_ids(indices, eb, loaded, s, cnt, sm.nbr);
            __syncthreads();
            const int local_rows = s_local_rows;
            if (tid == 0) {
                const long long now = clock64();
                stats[S_LOAD_CYCLES] += (u64)(now - s_clock[2]);
                s_clock[2] = now;  // the local levels' start
            }

            // Local levels in shared memory: a group of G = 1 << lg lanes per queued
            // vertex, G the largest power of two up to 32 with queued * G <= BLOCK (the
            // same for the whole block; 1 where the queue holds more than BLOCK), each
            // lane taking the row's edges sub, sub + G, ... in passes of EB. (A thread per
            // queued vertex left most of the block idle on the narrow frontiers of deep
            // graphs and walked a row's edges in dependent passes: 1.2 us per level on a
            // grid, 2.4 on Delaunay graphs on the H100.) Bitmaps and queue lengths rotate
            // over three (level L: read L % 3, append to (L + 1) % 3, clear (L + 2) % 3,
            // which level L - 1 read before the __syncthreads ending it); queues over two.
            int level = 0;
            for (int third = 0;; ++level, third = third == 2 ? 0 : third + 1) {
                const int after = third == 2 ? 0 : third + 1;
                const int before = third == 0 ? 2 : third - 1;
                const unsigned* cur = sm.frontier + third * W;
                unsigned* next = sm.frontier + after * W;
                unsigned* spare = sm.frontier + before * W;
                const unsigned short* cur_queue = sm.queue + (level & 1) * T;
                unsigned short* next_queue = sm.queue + ((level & 1) ^ 1) * T;
                const int queued = s_queued[third];
                if (tid == 0) s_queued[before] = 0;
                // The bitmap words by the block's last threads (the first ones take the
                // queue: with a short queue they alone have edges to relax).
                for (int w = BLOCK - 1 - tid; w < W; w += BLOCK) {
                    spare[w] = 0u;
                    sm.touched[w] |= cur[w];
                }
                // lg = log2(BLOCK) - ceil(log2(queued)), clamped to [0, 5]: the largest
                // power of two G with queued * G <= BLOCK, without a division in the chain
                // every level waits on (BLOCK / queued cost a local level 0.16 us: 1.09 /
                // 1.09 / 1.15x faster without it on Delaunay 1M / 4M / a 3000^2 grid with
                // deleted edges, H200, 8 roots).
                const int ceil_lg = queued <= 1 ? 0 : 32 - __clz(queued - 1);
                const int lg = max(0, min(5, LOG_BLOCK - ceil_lg));
                const int sub = tid & ((1 << lg) - 1);
                for (int q = tid >> lg; q < queued; q += BLOCK >> lg) {
                    const int i = cur_queue[q];
                    int nd = 0, k = 0, ke = 0;  // no edges: a global row, or at the horizon
                    if (i < local_rows) {
                        const int d = sm.dist[i];
                        if (d < horizon) {
                            nd = d + 1;
                            k = sm.off[i] + sub;
                            ke = sm.off[i + 1];
                        }
                    }
                    for (; k < ke; k += EB << lg) {
                        relax_edges(sm, nd, k, ke, lg, next, next_queue, &s_queued[after]);
                    }
                }
                __syncthreads();
                if (s_queued[after] == 0) break;
            }
            if (tid == 0) {
                stats[S_LEVELS] += (u64)(level + 1);
                s_clock[1] = clock64();
                stats[S_LEVEL_CYCLES] += (u64)(s_clock[1] - s_clock[2]);
            }

            // Write-back, phase A (a thread per vertex): labels, a global row's every edge,
            // a local row's edges that leave the tile listed for phase B (relaxed here
            // where the list is full).
            const int remote_cap = T;
            for (int i = tid; i < cnt; i += BLOCK) {
                if (!((sm.touched[i >> 5] >> (i & 31)) & 1u)) continue;
                const i64 v = s + i;
                const int d = sm.dist[i];
                atomicMin(label + v, d);
                if (d >= horizon) {
                    // Beyond the horizon: none of its edges was relaxed (its label was
                    // never below it); it comes back next round.
                    stamp[v] = r + 1u;
                    s_deferred = 1;
                    continue;
                }
                const int nd = d + 1;
                if (i >= local_rows) {
                    atomicAdd(stats + S_GLOBAL_ROWS, 1ull);
                    for (eid_t k = indptr[v]; k < indptr[v + 1]; ++k) {
                        count_remote(stats, relax_global(
                            label, stamp, mark, next_list, next_count, (i64)indices[k], nd, r,
                            shift));
                    }
                    continue;
                }
                const int kb = sm.off[i], ke = sm.off[i + 1];
                for (int k = kb; k < ke; ++k) {
                    if (sm.nbr[k] != REMOTE) continue;
                    const int pos = atomicAdd(&s_remote, 1);
                    if (pos < remote_cap) {
                        sm.remote[pos] = ((unsigned)k << 16) | (unsigned)i;
                    } else {
                        count_remote(stats, relax_global(
                            label, stamp, mark, next_list, next_count,
                            (i64)indices[eb + (eid_t)k], nd, r, shift));
                    }
                }
            }
            __syncthreads();
            if (tid == 0 && s_deferred && atomicMax(mark + tile, r + 1u) < r + 1u) {
                next_list[atomicAdd(next_count, 1ull)] = tile;
            }
            // Phase B: the listed edges, RB per thread whose loads and atomics issue
            // together.
            const int listed = s_remote < remote_cap ? s_remote : remote_cap;
            for (int q0 = tid; q0 < listed; q0 += RB * BLOCK) {
                i64 w[RB];
                int nd[RB];
#pragma unroll
                for (int u = 0; u < RB; ++u) {
                    const int q = q0 + u * BLOCK;
                    nd[u] = 0;
                    if (q < listed) {
                        const unsigned e = sm.remote[q];
                        w[u] = (i64)indices[eb + (eid_t)(e >> 16)];
                        nd[u] = sm.dist[e & 0xffffu] + 1;
                    }
                }
                bool low[RB];
#pragma unroll
                for (int u = 0; u < RB; ++u) {
                    low[u] = nd[u] > 0 && atomicMin(label + w[u], nd[u]) > nd[u];
                }
                unsigned was[RB];
#pragma unroll
                for (int u = 0; u < RB; ++u) {
                    was[u] = r + 1u;
                    if (low[u]) {
                        stamp[w[u]] = r + 1u;
                        was[u] = atomicMax(mark + (w[u] >> shift), r + 1u);
                    }
                }
#pragma unroll
                for (int u = 0; u < RB; ++u) {
                    if (low[u]) atomicAdd(stats + S_REMOTE_LOWERED, 1ull);
                    if (was[u] < r + 1u) {
                        const u64 pos = atomicAdd(next_count, 1ull);
                        next_list[pos] = w[u] >> shift;
                    }
                }
            }
        }
        const long long arrive = clock64();
        grid_sync(bar);
        if (blockIdx.x == 0 && tid == 0) stats[S_BARRIER_CYCLES] += (u64)(clock64() - arrive);
        if (ld_volatile_u64(ctrl + C_COUNT + (r + 1u) % 3u) == 0ull) break;
    }
    if (blockIdx.x == 0 && tid == 0) stats[S_LOOP_CYCLES] = (u64)(clock64() - s_clock[0]);
    // Per-block statistics, one atomic per counter, by thread 0: it wrote the barrier and
    // loop cycles just above with no barrier since (a thread per counter raced with those
    // two stores), and every other thread's atomicAdd on them came before the grid barrier.
    if (tid == 0) {
        for (int s = 0; s < S_COUNT; ++s) {
            if (stats[s]) atomicAdd(ctrl + C_STATS + s, stats[s]);
        }
    }
    // Nobody reads the base again in this launch (read before the first barrier).
    if (blockIdx.x == 0 && tid == 0) ctrl[C_BASE] = (u64)r + 1ull;

    // 3. Output: -1 for unreached while other threads read labels for parents (either
    //    UNREACHED or -1 never equals d - 1 >= 0, so the race is harmless). In the copy's
    //    ids: writing the caller's ids here instead (reading the copy's labels through the
    //    inverse permutation, parents by scanning the copy's rows in the caller's order)
    //    saved the map back's launch but lost the copy's locality: 0.87-1.03x with parents
    //    (H200, session 30, six deep graphs), so relabel_back.cu maps back after the search.
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
