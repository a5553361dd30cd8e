// One tile visit of the tiled BFS (tiled.cu). The schedule decides which tiles are visited
// when, which vertices seed a visit, how far a visit expands and what lowering a vertex
// outside the tile does (a Schedule, below: tiled.cu's ring of active tiles); the visit
// itself does not know how tiles are scheduled. (Two schedules shared it until session 32,
// which deleted the rounds.) Design and cost model: morphgpu/bfs/gpu/tiled.py.
//
// A tile is the vertex range [t T, (t + 1) T), T = 1 << shift, of a graph whose ids are
// local (the tiled copy). For one tile a block:
// 1. loads its labels into shared memory (int32), its row offsets (uint16, relative to the
//    tile's first edge) and its column ids as 16-bit local ids (REMOTE for a neighbour
//    outside the tile); rows that do not fit the shared edge capacity (a suffix of the
//    tile's vertices: the first row that passes it and all after) are "global rows";
// 2. seeds the first local frontier (a queue of local ids and a bitmap) with the vertices
//    the schedule names (Schedule::seed, from the label and the vertex's word of the
//    schedule's per-vertex array);
// 3. runs local label-correcting levels in shared memory: a group of G lanes per queued
//    frontier vertex with a local row (G = 1, 2, ..., 32 from the queue's length: the
//    block's lanes spread over the queue) relaxes its in-tile neighbours with atomicMin on
//    the shared labels, each lane EB edges per pass; a lowered neighbour whose bit in the
//    next frontier's bitmap was clear (the bitmap keeps each vertex once per queue) is
//    appended to the next queue (one warp-aggregated atomicAdd on a shared length per
//    pass). Only labels below the schedule's horizon expand. The loop ends after a level
//    that queued nothing. No global memory is touched here. (The first form scanned all
//    T / 32 bitmap words each level; the second took a thread per queued vertex, walked
//    its row in dependent passes of EB = 4 edges and appended each slot with its own
//    atomicAdd and shuffle: 1.16 us per level on the 4000^2 grid, 2.4-2.5 on Delaunay
//    graphs, 1.19 on road COL (H100). This form, EB = 4: 1.21 / 1.25-1.29 / 0.98 us; EB =
//    2: 1.01 / 1.20-1.23 / 0.86 us; EB = 1: 0.88 / 1.22-1.25 / 0.76 us: tiled.py builds
//    EB = 1 for mean degrees up to 4.5, 2 above. H200, session 30: the group size without
//    a division and claims without a label read first took a level on Delaunay 1M from
//    1.16 to 0.93 us (ncu: the level is one chain of dependent instructions; see
//    relax_edges and the level loop). One block per SM (no register bound of 64) took it
//    to 0.86 but lost where a round holds more tiles than SMs (Delaunay 4M 0.975x, a
//    5000^2 grid with deleted edges 0.943x; Delaunay 1M 1.089x);
// 4. writes back: every vertex that was a seed or was lowered ("touched") gets
//    atomicMin(label, local label) (fire and forget); one at or past the horizon is
//    deferred (its edges were not relaxed: vs.deferred is set); for the others
//    (Schedule::relaxed) the edges the local levels did not relax are relaxed from global
//    memory: a global row's every entry (in-tile neighbours included) by its thread, a
//    local row's REMOTE entries listed in shared memory first and then spread over the
//    block (their loads and atomics in flight together). Where such an atomicMin lowers a
//    label, Schedule::lowered makes sure a later visit of that vertex's tile reads it.
//
// Exactness. Labels only decrease and are always lengths of real
// paths (loaded labels are; the local levels and the relaxations add one per edge). A
// schedule guarantees that every vertex whose label was lowered after its edges were last
// relaxed (from outside by Schedule::lowered, or deferred by its own visit) is seeded by
// a later visit that reads the lowered label. Then at the end every edge (u, w) has
// label[w] <= label[u] + 1: consider u's last decrease, to its final value. If a visit's
// local levels made it, u was in a frontier there, so below the horizon its local edges
// were relaxed in that loop (and the local labels, <= the relaxed values, were written
// back with atomicMin) and its other edges at the write-back; at or past it, it was
// deferred and a later visit seeds it with that label. If a global atomicMin made it, a
// later visit seeds u with its final label and relaxes all its edges. Races inside a visit
// are harmless: writes to labels are atomicMin and never raise one. The Bellman-Ford
// fixed point with unit weights is the BFS distance.
//
// A Schedule provides (all __device__, called by any thread):
//   bool seed(int label, unsigned word)   word: the schedule's per-vertex array
//   int horizon(int lowest_seed)           labels at or past it do not expand
//   void relaxed(i64 v, int label)         v's edges are relaxed with this label now
//   void lowered(i64 w)                    an atomicMin from this visit lowered label[w]
#pragma once
#include <morphgpu/adjacency.cuh>
#include <morphgpu/bitmap.cuh>
#include <morphgpu/common.cuh>
#include <bfs/kernels/label_output.cuh>

#ifndef MG_TILED_BLOCK
#define MG_TILED_BLOCK 512
#endif

namespace tiles {

using namespace mg;

constexpr int BLOCK = MG_TILED_BLOCK;
constexpr unsigned FULL = 0xffffffffu;
constexpr int UNREACHED = 0x7fffffff;
constexpr unsigned short REMOTE = 0xffffu;
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "whole warps, one block");
constexpr int LOG_BLOCK = ceil_log2(BLOCK);
static_assert((1 << LOG_BLOCK) == BLOCK, "a power of two (the local levels' lane groups)");

// ctrl words (u64) of the visit, on their own 128-byte lines (tiled.py reads them): words
// 0-47 but these belong to the schedule (tiled.cu).
constexpr int C_ERROR = 33;  // a reached vertex without an in-neighbour one level up (a bug)
constexpr int C_STATS = 48;
// Counters, and SM cycles read by thread 0 (a few clock reads per tile): summed over the
// blocks' tiles for the load, the local levels and the write-back; S_AGAIN: the visits
// after which their tile had to be visited again; S_WAIT_CYCLES: every block's wait for a
// tile; S_LOOP_CYCLES: block 0's whole loop.
enum Stat {
    S_AGAIN, S_TILES, S_LEVELS, S_REMOTE_LOWERED, S_GLOBAL_ROWS,
    S_LOAD_CYCLES, S_LEVEL_CYCLES, S_WRITE_CYCLES, S_WAIT_CYCLES, S_LOOP_CYCLES, S_COUNT
};

constexpr int VB = 2;  // vertices per thread whose loads issue together (tile load)
constexpr int RB = 2;  // remote edges per thread whose loads and atomics issue together
#ifndef MG_TILED_MIN_BLOCKS
#define MG_TILED_MIN_BLOCKS 2
#endif
#ifndef MG_TILED_EB
#define MG_TILED_EB 2
#endif
constexpr int EB = MG_TILED_EB;  // edges per lane whose shared loads issue together (local levels)

// The shared-memory layout of one tile (dynamic shared memory, sizes from the host:
// tiled.py's shared_bytes must match). T = 1 << shift vertices, W = T / 32 bitmap words.
struct TileSmem {
    int* dist;              // T local labels
    unsigned* frontier;     // 3 bitmaps of W words: read at level L: bitmap L % 3, written:
                            // (L + 1) % 3 (a pointer each would be an array in local memory)
    unsigned* touched;      // W words: seeds and every vertex lowered in this visit
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
            push[u] = test_and_set_bit(next, j[u]);
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


// A visit's shared state (one per block): thread 0 fills it with begin_visit.
struct VisitShared {
    i64 tile;  // -1: no tile (the block leaves its loop)
    eid_t eb, ee;
    int local_rows;
    int remote;
    int deferred;
    int min_seed;
    int queued[3];  // level L's queue length: queued[L % 3]
    // Thread 0's clock stamps: the loop's start, the write-back's (-1: none), the load's.
    long long clock[3];
};

// Thread 0: the visit's counters cleared (the tile and its topology stay).
__device__ __forceinline__ void clear_visit(VisitShared& vs) {
    vs.remote = 0;
    vs.deferred = 0;
    vs.min_seed = UNREACHED;
    vs.queued[0] = vs.queued[1] = vs.queued[2] = 0;
}

// Thread 0: the tile's edge range and first global row; the visit's counters cleared.
__device__ __forceinline__ void begin_visit(VisitShared& vs, i64 tile,
                                            const eid_t* __restrict__ indptr, i64 n, int shift,
                                            int edge_cap) {
    const i64 s = tile << shift;
    const i64 e = s + (1 << shift) < n ? s + (1 << shift) : n;
    vs.eb = indptr[s];
    vs.ee = indptr[e];  // e <= n
    vs.local_rows = (int)(e - s) - (vs.ee - vs.eb > (eid_t)edge_cap ? 1 : 0);
    clear_visit(vs);
}

// Thread 0, at the top of a block's loop: the last visit's write-back cycles. A volatile
// load inside the tid == 0 branch: a plain one is hoisted out of the branch onto every
// thread (a shared load is safe to speculate), which racecheck reports against thread 0's
// store (WAR/RAW on the H100, harmless but not clean).
__device__ __forceinline__ void count_write_cycles(VisitShared& vs, u64* stats) {
    const long long write_start = *(volatile long long*)(vs.clock + 1);
    if (write_start >= 0) {
        stats[S_WRITE_CYCLES] += (u64)(clock64() - write_start);
        vs.clock[1] = -1;
    }
}

// One visit of vs.tile (every thread of the block; vs filled by begin_visit and a
// __syncthreads since). Ends after the write-back's last global operation was issued,
// with vs.deferred final (a __syncthreads follows phase A, which alone sets it).
// reuse: this block's last visit was of the same tile (vs by clear_visit since), so its
// row offsets, column ids and vs.local_rows are still in shared memory (a visit never
// writes them) and only the labels and the schedule's words are loaded again.
template <class Schedule>
__device__ __forceinline__ void visit(const Schedule& sched, VisitShared& vs, const TileSmem& sm,
                                      u64* stats, const eid_t* __restrict__ indptr,
                                      const vid_t* __restrict__ indices, int* label,
                                      const unsigned* word, i64 n, int shift, int edge_cap,
                                      bool reuse = false) {
    const int T = 1 << shift;
    const int W = T >> 5;
    const int tid = threadIdx.x;
    const unsigned lane = lane_id();
    const i64 tile = vs.tile;
    if (tid == 0) {
        vs.clock[2] = clock64();
        stats[S_TILES] += 1;
    }
    const i64 s = tile << shift;
    const int cnt = (int)((s + T < n ? s + T : n) - s);
    const eid_t eb = vs.eb;
    const i64 tile_edges = (i64)(vs.ee - eb);
    const int loaded = (int)(tile_edges < (i64)edge_cap ? tile_edges : (i64)edge_cap);

    // Load: labels, seeds, row offsets, the first row past the edge capacity (from the
    // row starts: one offset load per vertex); VB vertices per thread whose loads issue
    // together, then the column ids.
    for (int i0 = tid; i0 < T; i0 += VB * BLOCK) {
        int d[VB];
        unsigned st[VB];
        eid_t rb[VB];
#pragma unroll
        for (int u = 0; u < VB; ++u) {
            const int i = i0 + u * BLOCK;
            if (i < cnt) {
                d[u] = __ldcg(label + s + i);
                st[u] = __ldcg(word + s + i);
                if (!reuse) rb[u] = indptr[s + i];
            }
        }
#pragma unroll
        for (int u = 0; u < VB; ++u) {
            const int i = i0 + u * BLOCK;
            if (i >= T) break;  // warp-uniform: T and BLOCK are whole warps
            bool seed = false;
            if (i < cnt) {
                sm.dist[i] = d[u];
                seed = sched.seed(d[u], st[u]);
                if (seed) atomicMin(&vs.min_seed, d[u]);
                if (!reuse) {
                    const i64 b = (i64)(rb[u] - eb);
                    sm.off[i] = (unsigned short)(b < (i64)edge_cap ? b : (i64)edge_cap);
                    // Row i - 1 ends where row i begins (the last row's end: vs.ee, read
                    // with the tile); i >= 1 here (row 0 begins at eb).
                    if (b > (i64)edge_cap) atomicMin(&vs.local_rows, i - 1);
                }
            }
            const unsigned bits = __ballot_sync(FULL, seed);
            if (lane == 0) {
                sm.frontier[i >> 5] = bits;
                sm.frontier[W + (i >> 5)] = 0u;
                sm.frontier[2 * W + (i >> 5)] = 0u;
                sm.touched[i >> 5] = 0u;
            }
            if (bits != 0u) {  // warp-uniform
                int at = 0;
                if (lane == 0) at = atomicAdd(&vs.queued[0], __popc(bits));
                at = __shfl_sync(FULL, at, 0);
                if (seed) sm.queue[at + __popc(bits & ((1u << lane) - 1u))] = i;
            }
        }
    }
    if (!reuse) {
        if (tid == 0) sm.off[cnt] = (unsigned short)loaded;
        load_ids(indices, eb, loaded, s, cnt, sm.nbr);
    }
    __syncthreads();
    const int local_rows = vs.local_rows;
    const int horizon = sched.horizon(vs.min_seed);
    if (tid == 0) {
        const long long now = clock64();
        stats[S_LOAD_CYCLES] += (u64)(now - vs.clock[2]);
        vs.clock[2] = now;  // the local levels' start
    }

    // Local levels in shared memory: a group of G = 1 << lg lanes per queued vertex, G the
    // largest power of two up to 32 with queued * G <= BLOCK (the same for the whole
    // block; 1 where the queue holds more than BLOCK), each lane taking the row's edges
    // sub, sub + G, ... in passes of EB. (A thread per queued vertex left most of the
    // block idle on the narrow frontiers of deep graphs and walked a row's edges in
    // dependent passes: 1.2 us per level on a grid, 2.4 on Delaunay graphs on the H100.)
    // Bitmaps and queue lengths rotate over three (level L: read L % 3, append to
    // (L + 1) % 3, clear (L + 2) % 3, which level L - 1 read before the __syncthreads
    // ending it); queues over two.
    int level = 0;
    for (int third = 0;; ++level, third = third == 2 ? 0 : third + 1) {
        const int after = third == 2 ? 0 : third + 1;
        const int before = third == 0 ? 2 : third - 1;
        const unsigned* cur = sm.frontier + third * W;
        unsigned* next = sm.frontier + after * W;
        unsigned* spare = sm.frontier + before * W;
        const unsigned short* cur_queue = sm.queue + (level & 1) * T;
        unsigned short* next_queue = sm.queue + ((level & 1) ^ 1) * T;
        const int queued = vs.queued[third];
        if (tid == 0) vs.queued[before] = 0;
        // The bitmap words by the block's last threads (the first ones take the queue:
        // with a short queue they alone have edges to relax).
        for (int w = BLOCK - 1 - tid; w < W; w += BLOCK) {
            spare[w] = 0u;
            sm.touched[w] |= cur[w];
        }
        // lg = log2(BLOCK) - ceil(log2(queued)), clamped to [0, 5]: the largest power of
        // two G with queued * G <= BLOCK, without a division in the chain every level
        // waits on (BLOCK / queued cost a local level 0.16 us: 1.09 / 1.09 / 1.15x faster
        // without it on Delaunay 1M / 4M / a 3000^2 grid with deleted edges, H200, 8
        // roots).
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
                relax_edges(sm, nd, k, ke, lg, next, next_queue, &vs.queued[after]);
            }
        }
        __syncthreads();
        if (vs.queued[after] == 0) break;
    }
    if (tid == 0) {
        stats[S_LEVELS] += (u64)(level + 1);
        vs.clock[1] = clock64();
        stats[S_LEVEL_CYCLES] += (u64)(vs.clock[1] - vs.clock[2]);
    }

    // Write-back, phase A (a thread per vertex): labels, a global row's every edge, a
    // local row's edges that leave the tile listed for phase B (relaxed here where the
    // list is full).
    const int remote_cap = T;
    for (int i = tid; i < cnt; i += BLOCK) {
        if (!((sm.touched[i >> 5] >> (i & 31)) & 1u)) continue;
        const i64 v = s + i;
        const int d = sm.dist[i];
        atomicMin(label + v, d);
        if (d >= horizon) {
            // Beyond the horizon: none of its edges was relaxed (its label was never
            // below it); a later visit seeds it.
            vs.deferred = 1;
            continue;
        }
        sched.relaxed(v, d);
        const int nd = d + 1;
        if (i >= local_rows) {
            atomicAdd(stats + S_GLOBAL_ROWS, 1ull);
            for (eid_t k = indptr[v]; k < indptr[v + 1]; ++k) {
                const i64 w = (i64)indices[k];
                if (atomicMin(label + w, nd) > nd) {
                    sched.lowered(w);
                    count_remote(stats, true);
                }
            }
            continue;
        }
        const int kb = sm.off[i], ke = sm.off[i + 1];
        for (int k = kb; k < ke; ++k) {
            if (sm.nbr[k] != REMOTE) continue;
            const int pos = atomicAdd(&vs.remote, 1);
            if (pos < remote_cap) {
                sm.remote[pos] = ((unsigned)k << 16) | (unsigned)i;
            } else {
                const i64 w = (i64)indices[eb + (eid_t)k];
                if (atomicMin(label + w, nd) > nd) {
                    sched.lowered(w);
                    count_remote(stats, true);
                }
            }
        }
    }
    __syncthreads();
    // Phase B: the listed edges, RB per thread whose loads and atomics issue together.
    const int listed = vs.remote < remote_cap ? vs.remote : remote_cap;
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
#pragma unroll
        for (int u = 0; u < RB; ++u) {
            if (low[u]) {
                atomicAdd(stats + S_REMOTE_LOWERED, 1ull);
                sched.lowered(w[u]);
            }
        }
    }
}

// Per-block statistics, one atomic per counter, by thread 0 (after the block's loop).
__device__ __forceinline__ void add_stats(const u64* stats, u64* ctrl) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < S_COUNT; ++s) {
            if (stats[s]) atomicAdd(ctrl + C_STATS + s, stats[s]);
        }
    }
}

}  // namespace tiles
