// The whole BFS in one persistent kernel: levels are separated by mg::grid_sync, so the
// host launches once and reads nothing until the end (deep graphs: roads, meshes, grids
// with hundreds to thousands of levels, where a launch plus a host read per level would
// cost more than the level's work).
//
// Frontier classification by size (Enterprise §4.2; the dynamic-parallelism paper's
// small/large split): a frontier of at most `enter_local` vertices is served by block 0
// alone, which runs level after level with __syncthreads and its queues in shared memory
// while the rest of the grid waits at the barrier; it hands back to the grid when the next
// level's edges would overflow its shared queue. Wider frontiers run across the grid with
// the scan+warp+CTA expand and one grid barrier per level.
//
// Round bookkeeping (a round is one grid-wide step: one grid level or one local stretch):
// round r writes the next frontier's length to tails[r % 3] and its level and "local mode
// gave up" flag to ctrl[2 (r % 3) .. +1]; block 0 zeroes tails[(r + 1) % 3] during round r.
// A slot is rewritten only two barriers after everyone read it.
//
// MG_BFS_PROFILE: block 0 counts rounds and clock64() cycles into mg_bfs_profile (see
// PROFILE_* below), read by benchmarks/bfs.py --profile-levels (benchmarks/bfs_ab.py).
#include <morphgpu/barrier.cuh>
#include <morphgpu/bitmap.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/ell.cuh>
#include <morphgpu/adjacency.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/visit.cuh>
#include <morphgpu/worklist.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 1024
#endif
#ifndef MG_BFS_LOCAL_CAP
#define MG_BFS_LOCAL_CAP 3072
#endif
// MG_BFS_ELL_K (0 = off; 4, 8 or 16): the graph also comes as fixed-width rows (traversal/
// ell.cuh, the kernel's `ell` argument), and the levels use them: the one-block levels run
// on an edge queue (LocalEdges below) and the grid levels through expand_ell_claim.
#ifndef MG_BFS_ELL_K
#define MG_BFS_ELL_K 0
#endif
#if defined(MG_PAGED) && MG_BFS_ELL_K > 0
#error "the ELL rows are a copy of a CSR graph: a paged (dynamic) graph runs with MG_BFS_ELL_K=0"
#endif
// Measured and removed (session 36 deleted the switch, whose default was the best): the
// first edge queue of a one-block stretch leaving out neighbours already labelled (one
// more round trip per stretch), H200, 2026-11-23, against without: 0.99x / 0.98x / 0.94x
// on roads NY / BAY / COL, 1.004x on grid2d 5000².
#define MG_BFS_USE_ELL_LOCAL (MG_BFS_ELL_K > 0)
// MG_BFS_LOCAL_BITMAP=1 (ELL one-block levels only): block 0 claims vertices in a visited
// bitmap in its dynamic shared memory (one bit per vertex, the launch's shared_mem) instead
// of with an atomicCAS on the global label, and loads the rows of its winners only. Every
// access of a level costs issue slots of the one SM that runs it: on road NY a level of
// ~950 queued edges spent 2.9 us in ~950 global CAS and ~1900 speculative row loads
// (the H200 profile of 2026-11-23), where the winners are about a third of the entries.
// The bitmap is rebuilt from the labels when a stretch of one-block levels begins after
// grid levels, and cleared (only the frontier set) at level 0. (Measured and dropped on the
// H200, 2026-11-24: loading every entry's row with the claim, 0.97x; prefetching queued
// rows into L1, 0.91x.)
#ifndef MG_BFS_LOCAL_BITMAP
#define MG_BFS_LOCAL_BITMAP 0
#endif
#define MG_BFS_USE_BITMAP (MG_BFS_USE_ELL_LOCAL && MG_BFS_LOCAL_BITMAP)
// During a one-block round the other blocks do not spin in the grid
// barrier (cooperative grid.sync() polls one L2 word from every waiting block, all the
// time block 0 works: a road search is one such round of ~1.5 ms); they sleep on a flag
// that block 0 publishes when its stretch ends (ctrl[IDLE_FLAG], a release store after its
// __syncthreads), polling with __nanosleep from 32 ns doubling up to MG_BFS_IDLE_SLEEP_NS.
// A one-block round is always followed by a grid round (it ends on an empty frontier or
// a give-up), whose grid barrier keeps the rotating-slot rule: block 0 rewrites a slot
// only after a full barrier that follows everyone's read of it.
#ifndef MG_BFS_IDLE_SLEEP_NS
#define MG_BFS_IDLE_SLEEP_NS 2048
#endif
constexpr int IDLE_FLAG = 6;  // ctrl word of the one-block round's hand-back (ctrl has 8)
// ctrl word that keeps the widest frontier of every launch so far (atomicMax at the end of
// a launch, never cleared by the kernel): the host sizes later grids from it (gpu/persistent.py,
// ADAPTIVE_GRID), since a grid level's grid.sync() costs more the more blocks wait in it.
constexpr int WIDEST_FRONTIER = 7;

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;
// The two shared queues must stay under the 48 KB of static shared memory a block may
// declare: with 64-bit vertex ids 3072 entries each would need 48 KB alone (ptxas refuses
// it), so the capacity shrinks to what fits; the kernel clamps enter_local to it too.
// LocalEdges keeps two ids per entry; LocalRows an id and its row bounds.
constexpr int LOCAL_ENTRY_BYTES = MG_BFS_USE_ELL_LOCAL ? (int)(2 * sizeof(vid_t))
                                                       : (int)(sizeof(vid_t) + 2 * sizeof(eid_t));
constexpr int LOCAL_CAP_FITS = (45 * 1024) / LOCAL_ENTRY_BYTES;
constexpr int LOCAL_CAP = MG_BFS_LOCAL_CAP < LOCAL_CAP_FITS ? MG_BFS_LOCAL_CAP : LOCAL_CAP_FITS;
constexpr int ITEMS = (LOCAL_CAP + BLOCK - 1) / BLOCK;  // frontier vertices per thread
constexpr int UNROLL = 8;  // edges per lane whose loads a grid level issues together
// Grid levels deal a warp's rows out flat over its lanes up to this degree
// (expand_rows_warp_flat), block-wide gathering above it.
constexpr i64 SHORT_ROWS_MAX = 64;

// Bits of bfs_persistent's `options` (morphgpu/bfs/gpu/persistent.py sets them).
// (bit 1 chose the id-queue one-block levels' batched rows; those levels are gone)
constexpr int OPT_SPREAD = 2;       // grid levels: frontier warps spread over the blocks
constexpr int OPT_HYSTERESIS = 4;   // lower the one-block limit after a give-up

#ifdef MG_BFS_PROFILE
// Block 0's view: rounds of each kind, levels run inside block 0, give-ups, and cycles
// from a round's start to the end of its barrier (local, grid) and in the grid rounds'
// barriers alone (block 0 waits there for the slowest block).
enum ProfileSlot {
    PROFILE_LOCAL_ROUNDS, PROFILE_LOCAL_LEVELS, PROFILE_GRID_ROUNDS, PROFILE_GIVE_UPS,
    PROFILE_LOCAL_CYCLES, PROFILE_GRID_CYCLES, PROFILE_GRID_BARRIER_CYCLES, PROFILE_TOTAL_CYCLES,
    PROFILE_SLOTS
};
__device__ unsigned long long mg_bfs_profile[PROFILE_SLOTS];
// The ELL one-block levels, seen by block 0's thread 0 and summed over its levels: cycles
// from the level's start to after the entries are read and the buffer freed (one
// __syncthreads), from there to the end of its own claims and pushes (the round trip and
// the warp's queue work), the wait at the closing __syncthreads (the slowest warp), and
// the entries processed. Accumulated (the host zeroes it before a search).
enum ProfileEllSlot {
    PROFILE_ELL_READ_CYCLES, PROFILE_ELL_WORK_CYCLES, PROFILE_ELL_SYNC_CYCLES,
    PROFILE_ELL_ENTRIES, PROFILE_ELL_SLOTS
};
__device__ unsigned long long mg_bfs_profile_ell[PROFILE_ELL_SLOTS];
#endif

// Without ELL rows the one-block levels keep each queued vertex with its row bounds, which
// the discoverer loads together with the vertex's label (a speculative load: most
// of the neighbours looked at are not new), so a level costs two dependent memory round
// trips (ids, then labels and rows) instead of three (rows, ids, labels). The level's edge
// count is summed as vertices are queued, so the overflow check needs no block-wide sum.
// One buffer: a level reads its rows into registers, then a __syncthreads frees the
// buffer for the next level's entries. Counts and edge sums rotate over three slots:
// level t reads slot t % 3, fills (t + 1) % 3 and zeroes (t + 2) % 3.
//
// Edge sums are 32-bit (shared 32-bit atomics are native): each row adds its length clamped
// to LOCAL_CAP + 1, so a sum of at most LOCAL_CAP rows cannot wrap, and it exceeds
// LOCAL_CAP exactly when the true sum does. H200, 2026-11-22 (24 roots, same process),
// against queues of ids alone (rows, ids, labels: three round trips): 1.027x / 1.021x /
// 1.039x faster on roads NY / BAY / COL and 1.004x on grid2d 5000²; reserving queue slots
// and adding edges once per warp (a warp prefix sum) instead of once per discovery was
// 1.037x / 0.996x / 0.961x. (Session 36 deleted both alternatives, compiled out since
// then, and their switch MG_BFS_LOCAL_ROWS.) Block 0 then spends ~3.3-4.2 us per
// one-block level, still the larger share of a road search (NY: 346 of 521 levels).
struct LocalRows {
    vid_t v[LOCAL_CAP];
    eid_t begin[LOCAL_CAP];
    eid_t end[LOCAL_CAP];
    int count[3];
    unsigned edges[3];
};

__device__ __forceinline__ unsigned clamped_length(eid_t b, eid_t e) {
    return (e - b) > (eid_t)LOCAL_CAP ? (unsigned)LOCAL_CAP + 1u : (unsigned)(e - b);
}

#if MG_BFS_USE_ELL_LOCAL
// The one-block levels over ELL rows (MG_BFS_ELL_K): the queue holds EDGES (u, p): u a
// neighbour of the frontier, p the frontier vertex it was found from. A level claims each u
// with an atomicCAS and, in the same round trip, loads u's row (its address needs only
// u), so the winner can queue u's neighbours at once: one dependent memory round trip per
// level instead of LocalRows' two (ids, then labels and rows). The neighbour u came from (p)
// is not queued again (it is labelled). The claims make every vertex queue its row once,
// so the queue never holds more than the level's edges, and the level's claims (the next
// frontier) are written to the grid's `out` queue as they happen: when the next edge
// queue overflows, block 0 hands that frontier to the grid, whole. Counts rotate over three
// slots as in LocalRows; a count above LOCAL_CAP means the entries past LOCAL_CAP were
// dropped (overflow).
constexpr int ELL_K = MG_BFS_ELL_K;

struct LocalEdges {
    vid_t u[LOCAL_CAP];
    vid_t p[LOCAL_CAP];
    int count[3];      // edge entries of each level
    int out_count[3];  // vertices claimed (frontier length) of each level
};

// Every lane of the warp calls this (block-uniform loops): the neighbours of a won vertex
// `from` (but `skip`) go to the edge queue `dst` with one shared atomic per warp.
__device__ __forceinline__ void push_edges(LocalEdges& q, int dst, const vid_t (&row)[ELL_K],
                                           vid_t from, bool won, vid_t skip) {
    int mine = 0;
    if (won) {
#pragma unroll
        for (int k = 0; k < ELL_K; ++k) mine += row[k] >= 0 && row[k] != skip;
    }
    const int inclusive = warp_inclusive_sum(mine);
    const int total = __shfl_sync(0xffffffffu, inclusive, 31);
    if (total == 0) return;  // warp-uniform
    int start = 0;
    if (lane_id() == 31) start = atomicAdd(&q.count[dst], total);
    int slot = __shfl_sync(0xffffffffu, start, 31) + inclusive - mine;
    if (!won) return;
#pragma unroll
    for (int k = 0; k < ELL_K; ++k) {
        if (row[k] >= 0 && row[k] != skip) {
            if (slot < LOCAL_CAP) {
                q.u[slot] = row[k];
                q.p[slot] = from;
            }
            ++slot;
        }
    }
}

// Every lane calls this too: a won vertex u goes to out[] (the level's frontier, kept for a
// hand-back to the grid) at a slot reserved once per warp.
__device__ __forceinline__ void push_frontier(LocalEdges& q, int dst, vid_t* out, vid_t u,
                                              bool won) {
    const unsigned ballot = __ballot_sync(0xffffffffu, won);
    if (ballot == 0u) return;
    int start = 0;
    if (lane_id() == 0) start = atomicAdd(&q.out_count[dst], __popc(ballot));
    start = __shfl_sync(0xffffffffu, start, 0);
    if (won) out[start + __popc(ballot & ((1u << lane_id()) - 1u))] = u;
}

#if MG_BFS_USE_BITMAP
// The bitmap of block 0's stretch: at level 0 only the frontier (the source) is labelled,
// later the labels are read back (grid levels wrote them before the round's barrier; __ldcg
// skips any line of them block 0's L1 might hold). A warp turns 32 labels into a word with
// one ballot, BITMAP_UNROLL words in flight.
constexpr int BITMAP_UNROLL = 4;
__device__ void load_visited_bits(unsigned* bits, const int* dist, i64 n, const vid_t* in,
                                  i64 n_in, int level) {
    const i64 words = (n + 31) >> 5;
    if (level == 0) {
        for (i64 w = threadIdx.x; w < words; w += BLOCK) bits[w] = 0u;
        __syncthreads();
        for (i64 i = threadIdx.x; i < n_in; i += BLOCK) test_and_set_bit(bits, (i64)in[i]);
    } else {
        const int lane = (int)lane_id();
        const i64 warps = BLOCK / 32;
        for (i64 w0 = (i64)(threadIdx.x / 32) * BITMAP_UNROLL; w0 < words;
             w0 += warps * BITMAP_UNROLL) {  // warp-uniform
            int label[BITMAP_UNROLL];
#pragma unroll
            for (int k = 0; k < BITMAP_UNROLL; ++k) {
                const i64 v = (w0 + k) * 32 + lane;
                label[k] = v < n ? __ldcg(dist + v) : -1;
            }
#pragma unroll
            for (int k = 0; k < BITMAP_UNROLL; ++k) {
                const unsigned word = __ballot_sync(0xffffffffu, label[k] != -1);
                if (lane == 0 && w0 + k < words) bits[w0 + k] = word;
            }
        }
    }
    __syncthreads();
}
#endif

// local_levels for ELL rows (same contract as local_levels_with_rows): runs levels from
// the frontier in[0, n_in) at `level`; returns the level reached, leaves that level's
// frontier in out[0, *out_tail) and sets *gave_up to its length when the grid must expand
// it (its edges overflowed the queue), else 0. *out_tail = 0 when nothing is left.
__device__ int local_levels_ell(LocalEdges& q, const vid_t* __restrict__ ell, int* dist,
                                vid_t* parent, const vid_t* in, i64 n_in, vid_t* out,
                                u64* out_tail, int level, int* gave_up, unsigned* bits,
                                i64 n) {
#if MG_BFS_USE_BITMAP
    load_visited_bits(bits, dist, n, in, n_in, level);
#else
    (void)bits;
    (void)n;
#endif
    if (threadIdx.x == 0) {
        q.count[0] = q.count[1] = q.count[2] = 0;
        q.out_count[0] = (int)n_in;
        q.out_count[1] = q.out_count[2] = 0;
    }
    __syncthreads();
    {
        // The frontier's rows give the first edge queue; out keeps a copy of the frontier
        // (the grid expands it if the queue overflows). n_in <= LOCAL_CAP (the caller's
        // limit), so ITEMS strides cover it, and the loop is block-uniform.
        vid_t v[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const i64 i = threadIdx.x + (i64)j * BLOCK;
            v[j] = i < n_in ? in[i] : (vid_t)-1;
        }
        vid_t row[ITEMS][ELL_K];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (v[j] >= 0) load_ell_row<ELL_K>(ell, v[j], row[j]);
            else fill_ell_row<ELL_K>(row[j]);
        }
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if ((i64)j * BLOCK < n_in) {
                if (v[j] >= 0) out[threadIdx.x + j * BLOCK] = v[j];
                push_edges(q, 0, row[j], v[j], v[j] >= 0, (vid_t)-1);
            }
        }
    }
    __syncthreads();
    *gave_up = 0;
    int t = 0;
    int n_out = 0;
    while (true) {
#ifdef MG_BFS_PROFILE
        const long long level_start = clock64();
#endif
        const int c = q.count[t % 3];
        if (c == 0) break;  // the frontier has no edges but to its parents: the search ends
        if (c > LOCAL_CAP) {  // its edges did not fit: the grid expands it
            n_out = q.out_count[t % 3];
            *gave_up = n_out;
            break;
        }
        vid_t u[ITEMS], p[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const int i = threadIdx.x + j * BLOCK;
            u[j] = i < c ? q.u[i] : (vid_t)-1;
            p[j] = i < c ? q.p[i] : (vid_t)-1;
        }
        __syncthreads();  // every entry is read: the buffer takes the next level's
        if (threadIdx.x == 0) {
            q.count[(t + 2) % 3] = 0;
            q.out_count[(t + 2) % 3] = 0;
        }
#ifdef MG_BFS_PROFILE
        const long long read_end = clock64();
#endif
        const int dst = (t + 1) % 3;
        bool won[ITEMS];
        vid_t row[ITEMS][ELL_K];
#if MG_BFS_USE_BITMAP
        // Nobody in the block reads the labels during the stretch (the bits stand in for
        // them): plain stores, made visible to the grid by the round's hand-back.
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) won[j] = u[j] >= 0 && test_and_set_bit(bits, (i64)u[j]);
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (won[j]) {
                dist[u[j]] = level + 1;
                load_ell_row<ELL_K>(ell, u[j], row[j]);
            } else {
                fill_ell_row<ELL_K>(row[j]);
            }
        }
#else
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            won[j] = false;
            if (u[j] >= 0) {
                won[j] = atomicCAS(dist + u[j], -1, level + 1) == -1;
                load_ell_row<ELL_K>(ell, u[j], row[j]);
            } else {
                fill_ell_row<ELL_K>(row[j]);
            }
        }
#endif
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j * BLOCK < c) {  // block-uniform: whole warps
                if (won[j] && parent) parent[u[j]] = p[j];
                push_frontier(q, dst, out, u[j], won[j]);
                push_edges(q, dst, row[j], u[j], won[j], p[j]);
            }
        }
#ifdef MG_BFS_PROFILE
        const long long work_end = clock64();
#endif
        __syncthreads();
#ifdef MG_BFS_PROFILE
        if (threadIdx.x == 0) {
            const long long level_end = clock64();
            mg_bfs_profile_ell[PROFILE_ELL_READ_CYCLES] += read_end - level_start;
            mg_bfs_profile_ell[PROFILE_ELL_WORK_CYCLES] += work_end - read_end;
            mg_bfs_profile_ell[PROFILE_ELL_SYNC_CYCLES] += level_end - work_end;
            mg_bfs_profile_ell[PROFILE_ELL_ENTRIES] += c;
        }
#endif
        ++level;
        ++t;
    }
    if (threadIdx.x == 0) *out_tail = (u64)n_out;
    return level;
}
#endif

// Block 0's queues and the grid's gather scratch are never live at once.
union PersistentShared {
    GatherScratch<BLOCK> gather;
#if MG_BFS_USE_ELL_LOCAL
    LocalEdges edges;
#else
    LocalRows rows;
#endif
};

// Labels inside the one-block levels are written by one thread and read by others of the
// block after a __syncthreads, which orders them only at block scope; a weak L1-bypassing
// load (__ldcg) is then not guaranteed to see the write (the L2 copy it reads may lag the
// block's view). Relaxed gpu-scope accesses are, and cost the same L2 trip. (The H200 run of
// 2026-11-22 saw one wrong search on a 40x30 grid, run entirely in one-block levels of a
// form since deleted that read labels with __ldcg; this is the suspected cause, not yet
// confirmed.)
__device__ __forceinline__ int load_label(const int* p) {
    int v;
    asm volatile("ld.relaxed.gpu.s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ void store_label(int* p, int v) {
    asm volatile("st.relaxed.gpu.s32 [%0], %1;" : : "l"(p), "r"(v));
}

// Queues w (found unvisited) with its row bounds; counts its edges.
__device__ __forceinline__ void push_row(LocalRows& q, int dst, vid_t w, eid_t b, eid_t e) {
    const int slot = atomicAdd(&q.count[dst], 1);
    q.v[slot] = w;
    q.begin[slot] = b;
    q.end[slot] = e;
    atomicAdd(&q.edges[dst], clamped_length(b, e));
}

// One row of a one-block level: the first UNROLL neighbours' ids, then their labels and
// rows, with independent loads (one L2 round trip each instead of one per edge); the
// unvisited ones are labelled with plain stores. Two discoverers of one vertex may both
// queue it; the duplicate only re-expands a labelled vertex, and every entry is an edge,
// so the level's edge bound still bounds the queue.
__device__ __forceinline__ void local_row_with_rows(const Adjacency& adj,
                                                    int* dist, vid_t* parent, vid_t v, eid_t b,
                                                    eid_t e, int next, LocalRows& q, int dst) {
    vid_t w[UNROLL];
    int label[UNROLL];
    eid_t wb[UNROLL], we[UNROLL];
#pragma unroll
    for (int t = 0; t < UNROLL; ++t)
        if (b + t < e) w[t] = adj.at(b + t);
#pragma unroll
    for (int t = 0; t < UNROLL; ++t) {
        label[t] = 0;
        wb[t] = we[t] = 0;
        if (b + t < e) {
            label[t] = load_label(dist + w[t]);
            wb[t] = adj.begin(w[t]);
            we[t] = adj.end(w[t]);
        }
    }
#pragma unroll
    for (int t = 0; t < UNROLL; ++t) {
        if (b + t < e && label[t] == -1) {
            store_label(dist + w[t], next);
            if (parent) parent[w[t]] = v;
            push_row(q, dst, w[t], wb[t], we[t]);
        }
    }
    for (eid_t k = b + UNROLL; k < e; ++k) {
        const vid_t x = adj.at(k);
        if (load_label(dist + x) == -1) {
            store_label(dist + x, next);
            if (parent) parent[x] = v;
            push_row(q, dst, x, adj.begin(x), adj.end(x));
        }
    }
}

// local_levels for LocalRows (same contract; see LocalRows).
__device__ int local_levels_with_rows(LocalRows& q, const Adjacency& adj, int* dist,
                                      vid_t* parent, const vid_t* in, i64 n_in, vid_t* out,
                                      u64* out_tail, int level, int* gave_up) {
    if (threadIdx.x == 0) {
        q.count[0] = (int)n_in;
        q.count[1] = q.count[2] = 0;
        q.edges[0] = q.edges[1] = q.edges[2] = 0u;
    }
    __syncthreads();
    unsigned mine = 0;  // at most BLOCK-strided rows of at most LOCAL_CAP + 1 each
    for (i64 i = threadIdx.x; i < n_in; i += BLOCK) {
        const vid_t v = in[i];
        const eid_t b = adj.begin(v), e = adj.end(v);
        q.v[i] = v;
        q.begin[i] = b;
        q.end[i] = e;
        mine += clamped_length(b, e);
    }
    const unsigned warp_total = __reduce_add_sync(0xffffffffu, mine);
    if (lane_id() == 31 && warp_total != 0) atomicAdd(&q.edges[0], warp_total);
    __syncthreads();
    *gave_up = 0;
    int t = 0;
    while (true) {
        const int n = q.count[t % 3];
        if (n == 0) break;
        if (q.edges[t % 3] > (unsigned)LOCAL_CAP) {  // the next queue could overflow
            *gave_up = n;
            break;
        }
        eid_t b[ITEMS], e[ITEMS];
        vid_t v[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const int i = threadIdx.x + j * BLOCK;
            b[j] = e[j] = 0;
            v[j] = 0;
            if (i < n) {
                v[j] = q.v[i];
                b[j] = q.begin[i];
                e[j] = q.end[i];
            }
        }
        __syncthreads();  // every row is read: the buffer takes the next level's
        if (threadIdx.x == 0) {
            q.count[(t + 2) % 3] = 0;
            q.edges[(t + 2) % 3] = 0u;
        }
        const int dst = (t + 1) % 3;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (b[j] < e[j])
                local_row_with_rows(adj, dist, parent, v[j], b[j], e[j], level + 1, q, dst);
        }
        __syncthreads();
        ++level;
        ++t;
    }
    const int n = q.count[t % 3];
    for (int i = threadIdx.x; i < n; i += BLOCK) out[i] = q.v[i];
    if (threadIdx.x == 0) *out_tail = (u64)n;
    return level;
}

// Grid levels over CSR rows of at most SHORT_ROWS_MAX edges, called by whole warps. A lane
// per row walking its row UNROLL edges at a time (the form this replaced) made a warp with
// one row longer than UNROLL (most warps of a Delaunay graph: mean degree 6, a few rows of
// 9-24) repeat the id, label and claim round trips for every extra chunk while its other
// lanes idled. Here the warp lays its 32 rows end to end (a warp prefix sum of their
// lengths) and deals the edges out: lane l takes edges l, l + 32, ..., PER of them per
// pass, each finding its row by a 5-step binary search over the lanes' starts with
// shuffles (no memory), so a warp of up to 32 * PER edges issues all its id loads, then
// all its label loads, then its claims, once. One winner per vertex (atomicCAS), parent
// its row's vertex, queue slots reserved once per warp and pass. The labels are loaded
// before the claims (claims only for unlabelled vertices): H100, same process
// (scripts/bfs_deep_probe.py, 2026-11-26; now benchmarks/bfs.py --before), against the
// lane-per-row form: Delaunay 1M / 4M 3.12 / 7.23 ms against 4.09 / 9.81 as given,
// 3.05 / 6.43 against 3.97 / 8.61 on the relabelled copy; claiming without the pre-check
// was 2.95 / 7.62 as given, 3.02 / 6.63 relabelled, so the pre-check stays (it wins on
// the relabelled 4M, the copy auto picks).
//
// spread: the frontier's runs of 32 go to warp 0 of every block first, then warp 1 of
// every block, ... (warp rank warp_id * gridDim.x + blockIdx.x), instead of filling block
// 0, then block 1. A frontier of a few thousand vertices (a mesh or road level) then
// occupies one warp on each of many SMs instead of all warps of a few SMs, whose load
// throughput, not latency, bounded the level. Either order covers every item once (the
// rank is a bijection onto the grid's warps, and the stride is the grid's thread count).
template <int PER>
__device__ void expand_rows_warp_flat(const Adjacency& adj, const vid_t* in, i64 n_in,
                                      int* dist, vid_t* parent, int next_level, vid_t* out,
                                      u64* out_tail, bool spread) {
    const unsigned lane = lane_id();
    const i64 first = spread ? ((i64)warp_id() * gridDim.x + blockIdx.x) * 32
                             : global_tid() - lane;
    for (i64 base = first; base < n_in; base += global_stride()) {
        const i64 i = base + lane;
        const vid_t v = i < n_in ? in[i] : (vid_t)0;
        eid_t b = 0;
        int length = 0;  // <= SHORT_ROWS_MAX, so a warp's sum fits an int
        if (i < n_in) {
            b = adj.begin(v);
            length = (int)(adj.end(v) - b);
        }
        const int inclusive = warp_inclusive_sum(length);
        const int total = __shfl_sync(0xffffffffu, inclusive, 31);
        const int start = inclusive - length;  // this lane's row in the warp's edge list
        for (int done = 0; done < total; done += 32 * PER) {  // warp-uniform
            vid_t w[PER], from[PER];
            bool mine[PER];
#pragma unroll
            for (int t = 0; t < PER; ++t) {
                const int k = done + t * 32 + (int)lane;
                // The highest lane whose start is <= k owns edge k (an empty row shares
                // the next row's start, and starts do not decrease with the lane).
                int owner = 0;
#pragma unroll
                for (int step = 16; step > 0; step >>= 1) {
                    const int s = __shfl_sync(0xffffffffu, start, owner + step);
                    if (s <= k) owner += step;
                }
                const eid_t row = __shfl_sync(0xffffffffu, b, owner);
                const int row_start = __shfl_sync(0xffffffffu, start, owner);
                from[t] = __shfl_sync(0xffffffffu, v, owner);
                mine[t] = k < total;
                w[t] = mine[t] ? adj.at(row + (eid_t)(k - row_start)) : (vid_t)0;
            }
#pragma unroll
            for (int t = 0; t < PER; ++t) mine[t] = mine[t] && __ldcg(dist + w[t]) == -1;
            int count = 0;
#pragma unroll
            for (int t = 0; t < PER; ++t) {
                if (mine[t]) mine[t] = atomicCAS(dist + w[t], -1, next_level) == -1;
                count += mine[t];
            }
            const int claimed = warp_inclusive_sum(count);
            const int claims = __shfl_sync(0xffffffffu, claimed, 31);
            if (claims == 0) continue;  // warp-uniform
            u64 reserved = 0;
            if (lane == 31) reserved = atomicAdd(out_tail, (u64)claims);
            u64 slot = __shfl_sync(0xffffffffu, reserved, 31) + (u64)(claimed - count);
#pragma unroll
            for (int t = 0; t < PER; ++t) {
                if (mine[t]) {
                    if (parent) parent[w[t]] = from[t];
                    out[slot++] = w[t];
                }
            }
        }
    }
}

// Labels start here too (every vertex -1, the source 0 and its own parent), so one launch
// is the whole search.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_persistent(MG_ADJ_PARAMS(graph), int* dist,
               vid_t* parent, vid_t* queue0, vid_t* queue1, u64* tails, int* ctrl, i64 n,
               vid_t source, int enter_local, i64 max_degree, int options,
               const vid_t* __restrict__ ell, unsigned* barrier_state) {
    const bool spread = options & OPT_SPREAD;
    const bool hysteresis = options & OPT_HYSTERESIS;
    const Adjacency adj = MG_ADJ(graph);  // CSR, or a dynamic graph's pages (MG_PAGED)
    __shared__ PersistentShared shm;
#if MG_BFS_USE_BITMAP
    extern __shared__ unsigned visited_bits[];  // ceil(n / 32) words: the launch's shared_mem
#else
    unsigned* visited_bits = nullptr;
    (void)visited_bits;
#endif
    GridBarrier bar(barrier_state);
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        dist[v] = v == (i64)source ? 0 : -1;
        if (parent) parent[v] = v == (i64)source ? source : (vid_t)-1;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        queue0[0] = source;
        tails[0] = 0ull;
        ctrl[IDLE_FLAG] = 0;  // rounds publish round + 1; the last launch's value goes
    }
    grid_sync(bar);
    int level = 0;
    int cur = 0;
    int force_grid = 0;
    // Frontiers up to local_limit go to block 0. A frontier that block 0 had to give back
    // (its edges overflowed the shared queue) lowers the limit to 7/8 of its length, so a
    // frontier hovering just above the size that fits is not handed to block 0 only to be
    // handed back (a wasted round and grid barrier) at every other level. Frontiers whose
    // every row fits (n * max_degree <= LOCAL_CAP) never give up, hence the floor.
    int local_limit = enter_local < LOCAL_CAP ? enter_local : LOCAL_CAP;
    const int local_floor = max_degree > 0 && (i64)LOCAL_CAP / max_degree < (i64)local_limit
        ? (int)((i64)LOCAL_CAP / max_degree) : local_limit;
    i64 n_cur = 1;
    i64 widest = 1;
    unsigned round = 0;
#ifdef MG_BFS_PROFILE
    const bool profiling = blockIdx.x == 0 && threadIdx.x == 0;
    unsigned long long prof[PROFILE_SLOTS] = {};
    const long long kernel_start = clock64();
#endif
    while (n_cur > 0) {
        const vid_t* in = cur ? queue1 : queue0;
        vid_t* out = cur ? queue0 : queue1;
        u64* out_tail = tails + (round % 3);
        int* slot = ctrl + 2 * (round % 3);
#ifdef MG_BFS_PROFILE
        const long long round_start = clock64();
        const bool local_round = n_cur <= local_limit && !force_grid;
        long long barrier_start = 0;
#endif
        if (n_cur <= local_limit && !force_grid) {
            if (blockIdx.x == 0) {
                int gave_up;
#if MG_BFS_USE_ELL_LOCAL
                const int reached = local_levels_ell(shm.edges, ell, dist, parent, in, n_cur,
                                                     out, out_tail, level, &gave_up,
                                                     visited_bits, n);
#else
                const int reached = local_levels_with_rows(shm.rows, adj, dist,
                                                           parent, in, n_cur, out, out_tail,
                                                           level, &gave_up);
#endif
                if (threadIdx.x == 0) {
                    slot[0] = reached;
                    slot[1] = gave_up;
                }
            }
        } else {
#if MG_BFS_ELL_K > 0
            if (true) {
                expand_ell_claim<MG_BFS_ELL_K>(ell, in, n_cur, dist, parent, level + 1, out,
                                               out_tail, spread);
            } else
#endif
            if (max_degree <= SHORT_ROWS_MAX) {
                // Short rows only: a warp's rows dealt out flat over its lanes, no
                // block-wide gathering. H100, same process, against gathering above degree
                // 8 (a thread per row then): Delaunay graphs of 1M / 4M random points
                // (degree <= 20) 1.78x / 1.85x faster (6.13 -> 3.45 ms, 14.8 -> 8.0 ms per
                // search; their grid levels had cost ~13 us); flat rows, see above.
                expand_rows_warp_flat<UNROLL>(adj, in, n_cur, dist, parent, level + 1, out,
                                              out_tail, spread);
            } else {
                const ClaimVisit visit{dist, parent, level + 1, out, out_tail};
                for (i64 base = (i64)blockIdx.x * BLOCK; base < n_cur;
                     base += (i64)gridDim.x * BLOCK) {
                    const i64 i = base + threadIdx.x;
                    const bool has = i < n_cur;
                    expand_gather<BLOCK>(shm.gather, adj, has,
                                         has ? in[i] : (vid_t)0, visit);
                }
            }
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                slot[0] = level + 1;
                slot[1] = 0;
            }
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) tails[(round + 1) % 3] = 0ull;
#ifdef MG_BFS_PROFILE
        barrier_start = clock64();
#endif
        if (n_cur <= local_limit && !force_grid) {  // grid-uniform: this was block 0's round
            unsigned* flag = reinterpret_cast<unsigned*>(ctrl + IDLE_FLAG);
            if (blockIdx.x == 0) {
                __syncthreads();  // block 0's labels, queue and slot writes, then the flag
                if (threadIdx.x == 0) {
                    __threadfence();
                    flag_publish(flag, round + 1u);
                }
            } else {
                if (threadIdx.x == 0) {
                    unsigned ns = 32;
                    while (flag_poll(flag) != round + 1u) {
                        __nanosleep(ns);
                        if (ns < MG_BFS_IDLE_SLEEP_NS) ns *= 2;
                    }
                    flag_acquired();
                }
                __syncthreads();
            }
        } else {
            grid_sync(bar);
        }
        n_cur = (i64)load_volatile(out_tail);
        if (n_cur > widest) widest = n_cur;
        const int level_before = level;
        level = load_volatile(slot);
        const int gave_up = load_volatile(slot + 1);
#ifdef MG_BFS_PROFILE
        if (profiling) {
            const unsigned long long now = clock64();
            if (local_round) {
                prof[PROFILE_LOCAL_ROUNDS] += 1;
                prof[PROFILE_LOCAL_LEVELS] += level - level_before;
                prof[PROFILE_LOCAL_CYCLES] += now - round_start;
            } else {
                prof[PROFILE_GRID_ROUNDS] += 1;
                prof[PROFILE_GRID_CYCLES] += now - round_start;
                prof[PROFILE_GRID_BARRIER_CYCLES] += now - barrier_start;
            }
            prof[PROFILE_GIVE_UPS] += gave_up != 0;
        }
#else
        (void)level_before;
#endif
        force_grid = gave_up != 0;
        if (hysteresis && gave_up != 0) {
            const int lowered = gave_up - gave_up / 8;
            if (lowered < local_limit)
                local_limit = lowered > local_floor ? lowered : local_floor;
        }
        cur ^= 1;
        ++round;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicMax(ctrl + WIDEST_FRONTIER, widest < 0x7fffffff ? (int)widest : 0x7fffffff);
#ifdef MG_BFS_PROFILE
    if (profiling) {
        prof[PROFILE_TOTAL_CYCLES] = clock64() - kernel_start;
        for (int k = 0; k < PROFILE_SLOTS; ++k) mg_bfs_profile[k] = prof[k];
    }
#endif
}
