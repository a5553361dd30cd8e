// Tiled BFS (variant "tiled"; design and measurements in morphgpu/bfs/gpu/tiled.py): the
// tile visits of tile_visit.cuh in one persistent launch, scheduled by a ring of active
// tiles. A block takes the next active tile as soon as its last visit ends, and a lowered
// vertex activates its tile at once. (Until session 32 a second schedule ran the visits in
// rounds separated by the grid barrier, a round as long as its slowest visit: slower than
// this one on every graph measured since tiles are kept (below), so deleted.)
//
// Per tile a state word: IDLE, QUEUED (in the ring), RUNNING (a block visits it), DIRTY
// (lowered from outside while RUNNING). Per vertex, in the stamp array: done[v], the label
// v's edges were last relaxed with (UNREACHED: never). A visit seeds the vertices with
// label < done. ctrl[C_OUT] counts the tiles QUEUED, RUNNING or DIRTY; it reaches zero
// only when no work is left anywhere, and every block then leaves its loop.
//
// Lowering w (tile t) from outside: atomicMin on label[w], a fence, then activate(t):
// IDLE -> QUEUED (count it on C_OUT, push it), RUNNING -> DIRTY, QUEUED or DIRTY: nothing.
// Taking a tile: QUEUED -> RUNNING, a fence, then the labels are read. With the fences on
// both sides (sequentially consistent), a lowering either happened before the visit's
// state change, and the visit reads the lowered label, or its activation sees RUNNING and
// makes the tile DIRTY. At the end of a visit (its writes fenced), RUNNING -> IDLE, unless
// the tile is DIRTY or a vertex was deferred: then it is queued again. So every vertex
// whose label fell below done is seeded by a later visit that reads the lowered label
// (tile_visit.cuh's exactness argument). Labels only fall and done words change only
// inside visits, which seed at least the lowest of the tile's pending labels and relax
// it, so the search ends.
//
// horizon_step > 0: a visit expands only labels below its lowest seed's label +
// horizon_step and defers the rest (its tile queued again behind the tiles queued
// meanwhile, whose corrections then arrive first).
//
// Keeping a tile. A tile to be visited again (DIRTY, or with deferred vertices) stays with
// the block that visited it, RUNNING, when it was lowered from outside while it ran or when
// no tile waits in the ring; otherwise it goes to the ring's tail. A kept tile's next visit
// reloads only its labels and done words (tile_visit.cuh's reuse: its row offsets and
// column ids are still in shared memory). Taking it again this way is a take without the
// ring: RUNNING, a fence, then the labels; the exactness argument above is unchanged. A
// tile lowered while it ran holds the wavefront: pushing it behind every queued tile let
// visits of other tiles run ahead on labels it was about to lower. H200, session 32 (run 2,
// 16 roots, one process, against pushing every such tile, horizon 48): a 5000^2 grid with
// 25 % of its edges deleted 1.83x (181k visits -> 112k), 3000^2 1.26x, a 12000 x 800 strip
// 1.28x, Delaunay 1M / 2M / 4M / 8M 1.05 / 1.12 / 1.26 / 1.39x, grid 4000^2 1.10x, road NY
// / COL 1.03 / 1.00x; the rounds schedule was slower than this on all ten.
// Keeping only where the ring is empty: 1.01-1.06x; keeping every tile to be visited again
// (deferred ones too, whatever waits): equal on the geometric mean (0.96-1.08x).
//
// The ring (`lists`): a bounded multi-producer multi-consumer queue of C = n_tiles slots,
// each with a sequence word (items in lists[0, C), sequences in lists[C, 2 C)): position p
// lives in slot p % C; its producer waits for seq == p, stores, then seq = p + 1; its
// consumer waits for seq == p + 1, loads, then seq = p + C. Positions are 64-bit counters
// that only grow (C_TAIL for producers, C_HEAD for consumers: a block takes a position
// and waits for its item, or for C_OUT to reach zero). A producer never waits for long:
// every position no consumer has taken holds a distinct QUEUED tile, so the position one
// lap back has been taken by a block that is waiting for it.
#include <morphgpu/barrier.cuh>
#include <bfs/kernels/tile_visit.cuh>

using namespace mg;
using namespace tiles;

namespace {

constexpr unsigned ST_IDLE = 0u, ST_QUEUED = 1u, ST_RUNNING = 2u, ST_DIRTY = 3u;
// Schedule words (u64) of ctrl, each on a 128-byte line apart from the others (word 40
// shares its line only with C_ERROR, written at the start and the end).
constexpr int C_HEAD = 0;  // positions taken by consumers
constexpr int C_TAIL = 16;  // positions taken by producers
constexpr int C_OUT = 40;  // tiles QUEUED, RUNNING or DIRTY

struct Ring {
    i64* lists;
    i64 slots;
    u64* ctrl;

    __device__ __forceinline__ void push(i64 t) const {
        const u64 p = atomicAdd(ctrl + C_TAIL, 1ull);
        const u64 slot = p % (u64)slots;
        volatile i64* seq = (volatile i64*)(lists + slots + slot);
        while (*seq != (i64)p) {}
        *(volatile i64*)(lists + slot) = t;
        __threadfence();  // the item before its sequence
        *seq = (i64)p + 1;
    }

    // Thread 0: the next tile, or -1 once no tile is active anywhere.
    __device__ __forceinline__ i64 take() const {
        const u64 p = atomicAdd(ctrl + C_HEAD, 1ull);
        const u64 slot = p % (u64)slots;
        volatile i64* seq = (volatile i64*)(lists + slots + slot);
        for (;;) {
            if (*seq == (i64)p + 1) {
                const i64 t = *(volatile i64*)(lists + slot);
                __threadfence();  // the item read before the slot is handed on
                *seq = (i64)p + slots;
                return t;
            }
            if (load_volatile(ctrl + C_OUT) == 0ull) return -1;
            __nanosleep(64);
        }
    }
};

// After lowering a label in tile t: a visit of t that reads it is sure to follow.
__device__ __forceinline__ void activate(unsigned* state, const Ring& ring, i64 t) {
    __threadfence();  // the label before the state
    for (;;) {
        const unsigned s = atomicCAS(state + t, ST_IDLE, ST_QUEUED);
        if (s == ST_IDLE) {
            atomicAdd(ring.ctrl + C_OUT, 1ull);  // before the item is visible to anyone
            ring.push(t);
            return;
        }
        if (s != ST_RUNNING) return;  // QUEUED or DIRTY: a visit will read it
        if (atomicCAS(state + t, ST_RUNNING, ST_DIRTY) == ST_RUNNING) return;
    }
}

// tile_visit.cuh's Schedule.
struct Queue {
    int* done;
    unsigned* state;
    Ring ring;
    int horizon_step;
    int shift;
    __device__ __forceinline__ bool seed(int d, unsigned done_word) const {
        return d < (int)done_word;
    }
    __device__ __forceinline__ int horizon(int lowest_seed) const {
        const long long reach = (long long)lowest_seed + horizon_step;
        return horizon_step > 0 && reach < UNREACHED ? (int)reach : UNREACHED;
    }
    __device__ __forceinline__ void relaxed(i64 v, int d) const { done[v] = d; }
    __device__ __forceinline__ void lowered(i64 w) const { activate(state, ring, w >> shift); }
};

}  // namespace

// label: the output (int32, -1 unreached); stamp: done[], n words; mark: the tile states,
// n_tiles words; lists: the ring, 2 n_tiles words; ctrl: CTRL_WORDS u64 words (tiled.py).
extern "C" __global__ void __launch_bounds__(MG_TILED_BLOCK, MG_TILED_MIN_BLOCKS)
bfs_tiled(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
          const eid_t* __restrict__ rev_indptr, const vid_t* __restrict__ rev_indices,
          int* label, vid_t* parent, unsigned* stamp, unsigned* mark, i64* lists, u64* ctrl,
          i64 n, vid_t source, int shift, int edge_cap, int horizon_step, i64 n_tiles,
          unsigned* barrier_state) {
    const CsrAdjacency radj{rev_indptr, rev_indices};
    GridBarrier bar(barrier_state);
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const TileSmem sm = carve(smem_raw, 1 << shift);
    __shared__ VisitShared vs;
    const int tid = threadIdx.x;
    __shared__ u64 stats[S_COUNT];
    if (tid < S_COUNT) stats[tid] = 0ull;
    int* done = (int*)stamp;
    const Queue sched{done, mark, Ring{lists, n_tiles, ctrl}, horizon_step, shift};

    // 1. Labels and done words, tile states, the ring holding the source's tile.
    const i64 src_tile = (i64)source >> shift;
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        label[v] = v == (i64)source ? 0 : UNREACHED;
        done[v] = UNREACHED;
    }
    for (i64 t = global_tid(); t < n_tiles; t += global_stride()) {
        mark[t] = t == src_tile ? ST_QUEUED : ST_IDLE;
        lists[n_tiles + t] = t == 0 ? 1 : t;  // position 0 stored, the others free
    }
    if (blockIdx.x == 0 && tid == 0) {
        lists[0] = src_tile;
        ctrl[C_HEAD] = 0ull;
        ctrl[C_TAIL] = 1ull;
        ctrl[C_OUT] = 1ull;
        ctrl[C_ERROR] = 0ull;
        for (int s = 0; s < S_COUNT; ++s) ctrl[C_STATS + s] = 0ull;
    }
    grid_sync(bar);

    // 2. Visits until no tile is active.
    __shared__ int keep;  // the last visit's tile is visited again, by this block
    if (tid == 0) {
        vs.clock[0] = clock64();
        vs.clock[1] = -1;
        keep = 0;
    }
    for (;;) {
        __syncthreads();  // the previous tile's shared memory is no longer read
        if (tid == 0) {
            count_write_cycles(vs, stats);
            if (keep) {
                clear_visit(vs);  // state RUNNING again, fenced (below)
            } else {
                const long long wait_start = clock64();
                vs.tile = sched.ring.take();
                stats[S_WAIT_CYCLES] += (u64)(clock64() - wait_start);
                if (vs.tile >= 0) {
                    atomicExch(mark + vs.tile, ST_RUNNING);
                    __threadfence();  // the state before the labels
                    begin_visit(vs, vs.tile, indptr, n, shift, edge_cap);
                }
            }
        }
        __syncthreads();
        if (vs.tile < 0) break;
        visit(sched, vs, sm, stats, indptr, indices, label, stamp, n, shift, edge_cap,
              keep != 0);
        // The visit's labels and done words, and every activation it made (counted on
        // C_OUT), before this tile's own state changes.
        __threadfence();
        __syncthreads();
        if (tid == 0) {
            const i64 t = vs.tile;
            bool again = vs.deferred != 0;
            bool dirty = false;
            if (atomicCAS(mark + t, ST_RUNNING, again ? ST_RUNNING : ST_IDLE) != ST_RUNNING) {
                again = dirty = true;  // DIRTY: lowered from outside while it ran
            }
            keep = 0;
            if (again) {
                stats[S_AGAIN] += 1;
                // Kept (see the header) where it was lowered from outside while it ran, or
                // where no tile waits in the ring (a block would take it next anyway).
                const bool idle = (i64)(load_volatile(ctrl + C_TAIL) -
                                        load_volatile(ctrl + C_HEAD)) <= 0;
                if (dirty || idle) {
                    atomicExch(mark + t, ST_RUNNING);
                    __threadfence();  // the state before the labels, as after a take
                    keep = 1;
                } else {
                    atomicExch(mark + t, ST_QUEUED);
                    sched.ring.push(t);
                }
            } else {
                atomicAdd(ctrl + C_OUT, ~0ull);  // - 1
            }
        }
    }
    if (blockIdx.x == 0 && tid == 0) stats[S_LOOP_CYCLES] = (u64)(clock64() - vs.clock[0]);
    add_stats(stats, ctrl);
    grid_sync(bar);

    // 3. Output, in the copy's ids.
    bfs::labels_to_output(radj, label, parent, ctrl + C_ERROR, n, source);
}
