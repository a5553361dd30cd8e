// Tiled BFS, the rounds schedule (variant "tiled"; design, cost model and what would make it
// lose in morphgpu/bfs/gpu/tiled.py): tile visits (tile_visit.cuh) in rounds separated by
// the grid barrier, in one persistent launch. The other schedule, without rounds, is
// tiled_queue.cu.
//
// In round r the blocks take the tiles activated in round r - 1 (a list, taken with an
// atomic counter). A visit seeds the tile's vertices whose stamp is >= r (stamp[v] = the
// round in which v must be processed again, written by whoever lowered v's label from
// outside the tile; stamps are never cleared, they only grow). Lowering a vertex from
// outside its tile stamps it r + 1 and activates its tile for round r + 1 (atomicMax on the
// tile's mark; the first activation appends the tile to the next round's list).
// With horizon_step > 0, round r (the k-th of the search) expands only labels below
// k * horizon_step: a touched vertex at or past it relaxes nothing, is stamped r + 1 and
// keeps its tile active (tiles then advance in step instead of flooding ahead on labels
// that later rounds correct). The search ends, on the device, after a round that
// activated no tile.
//
// Exactness (tile_visit.cuh's argument): a vertex lowered from outside, or deferred, is
// stamped r + 1 and its tile is in round r + 1's list; that round reads its label after
// the barrier (which orders the round's atomicMins before it) and seeds it. A stamp may be
// seen before the atomicMin that preceded it (no fence between them); such a vertex is
// seeded again in the next round, where the barrier orders both.
//
// Stamps and marks outlive a search: the rounds of a search are numbered from ctrl[C_BASE]
// (one past the previous search's last round; in that last round nothing was stamped or
// activated), so no per-search clearing of n stamps. ctrl[C_BASE] == 0 (new buffers, or
// after a tiled_queue.cu search, which uses the same arrays) or past 2^31 resets both
// arrays in the launch.
#include <morphgpu/barrier.cuh>
#include <bfs/kernels/tile_visit.cuh>

using namespace mg;
using namespace tiles;

namespace {

// Schedule words (u64) of ctrl.
constexpr int C_COUNT = 0;   // + r % 3: tiles in round r's list
constexpr int C_TAKE = 16;   // + r % 3: tiles of round r's list taken
constexpr unsigned BASE_LIMIT = 0x80000000u;

// tile_visit.cuh's Schedule for round r.
struct Rounds {
    static constexpr bool MIN_SEED = false;
    unsigned* stamp;
    unsigned* mark;
    i64* next_list;
    u64* next_count;
    unsigned r;
    int round_horizon;
    int shift;
    __device__ __forceinline__ bool seed(int d, unsigned st) const {
        return st >= r && d != UNREACHED;
    }
    __device__ __forceinline__ int horizon(int) const { return round_horizon; }
    __device__ __forceinline__ void deferred(i64 v) const { stamp[v] = r + 1u; }
    __device__ __forceinline__ void relaxed(i64, int) const {}
    __device__ __forceinline__ void lowered(i64 w) const {
        stamp[w] = r + 1u;
        activate(w >> shift);
    }
    __device__ __forceinline__ void activate(i64 t) const {
        if (atomicMax(mark + t, r + 1u) < r + 1u) next_list[atomicAdd(next_count, 1ull)] = t;
    }
};

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
    const TileSmem sm = carve(smem_raw, 1 << shift);
    __shared__ VisitShared vs;
    const int tid = threadIdx.x;
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
    if (tid == 0) {
        vs.clock[0] = clock64();
        vs.clock[1] = -1;
    }
    for (;; ++r) {
        // The horizon (horizon_step > 0): labels this round may expand from.
        const long long reach = (long long)(r - base + 1u) * horizon_step;
        const Rounds sched{stamp, mark, lists + (i64)((r + 1u) & 1u) * n_tiles,
                           ctrl + C_COUNT + (r + 1u) % 3u, r,
                           horizon_step > 0 && reach < UNREACHED ? (int)reach : UNREACHED,
                           shift};
        if (blockIdx.x == 0 && tid == 0) {
            // Round r + 1 appends there, round r + 2 takes there; nobody touches them now.
            ctrl[C_COUNT + (r + 2u) % 3u] = 0ull;
            ctrl[C_TAKE + (r + 2u) % 3u] = 0ull;
            stats[S_ROUNDS] += 1;
        }
        for (;;) {
            __syncthreads();  // the previous tile's shared memory is no longer read
            if (tid == 0) {
                count_write_cycles(vs, stats);
                const u64 count = ld_volatile_u64(ctrl + C_COUNT + r % 3u);
                const u64 k = atomicAdd(ctrl + C_TAKE + r % 3u, 1ull);
                vs.tile = k < count ? __ldcg(lists + (i64)(r & 1u) * n_tiles + k) : (i64)-1;
                if (vs.tile >= 0) begin_visit(vs, vs.tile, indptr, n, shift, edge_cap);
            }
            __syncthreads();
            if (vs.tile < 0) break;
            visit(sched, vs, sm, stats, indptr, indices, label, stamp, n, shift, edge_cap);
            // A deferred vertex keeps its tile active (vs.deferred is final: see visit).
            if (tid == 0 && vs.deferred) sched.activate(vs.tile);
        }
        const long long arrive = clock64();
        grid_sync(bar);
        if (blockIdx.x == 0 && tid == 0) stats[S_WAIT_CYCLES] += (u64)(clock64() - arrive);
        if (ld_volatile_u64(ctrl + C_COUNT + (r + 1u) % 3u) == 0ull) break;
    }
    if (blockIdx.x == 0 && tid == 0) stats[S_LOOP_CYCLES] = (u64)(clock64() - vs.clock[0]);
    // Thread 0 wrote the wait and loop cycles just above with no barrier since (a thread per
    // counter raced with those two stores), and every other thread's atomicAdd on them
    // came before the grid barrier.
    add_stats(stats, ctrl);
    // Nobody reads the base again in this launch (read before the first barrier).
    if (blockIdx.x == 0 && tid == 0) ctrl[C_BASE] = (u64)r + 1ull;

    // 3. Output, in the copy's ids. (Writing the caller's ids here instead, reading the
    //    copy's labels through the inverse permutation and parents by scanning the copy's
    //    rows in the caller's order, saved the map back's launch but lost the copy's
    //    locality: 0.87-1.03x with parents, H200, session 30, six deep graphs; so
    //    relabel_back.cu maps back after the search.)
    bfs::labels_to_output(radj, label, parent, ctrl + C_ERROR, n, source);
}
