// Asynchronous, label-correcting BFS (Atos-style) in one persistent launch: no barrier per
// level. Made for high-diameter graphs (road networks, 2D grids with thousands of levels),
// where the level-synchronous persistent kernel (persistent.cu) pays a grid barrier of
// 3-4 us per level and the levels hold little work. Measured against it by
// morphgpu/bfs/gpu/asynchronous.py (variant "async"); the design and what would make it lose
// are in that module's docstring.
//
// Phases of the one launch (every block resident: cooperative launch, so the spin-waits
// below cannot deadlock on a block that never runs):
// 1. labels to UNREACHED (INT_MAX), the source to 0; block 0 seeds the global queue with
//    the source and sets the outstanding-item count to 1. One grid_sync.
// 2. label-correcting traversal. Workers are warps. A warp takes a batch of up to 32 items
//    (one per lane), from its own ring in shared memory first, else from the global queue;
//    skips stale items; relaxes every out-edge of the rest with atomicMin on the label
//    (the batch's edges are spread over the lanes, a warp-level merge path, so a hub's row
//    does not serialise on one lane); and pushes each neighbour whose label it lowered.
//    Pushes stay in the warp's ring when they fit (the next hop then costs no global
//    queue round trip and no other warp's wake-up); what does not fit goes to the global
//    queue, and so does the newest part of the ring when other warps are idle (work
//    sharing). No host involvement and no grid barrier until the end.
// 3. when the outstanding count reaches zero every warp leaves; a grid_sync; then labels
//    become the library's output (int32, -1 unreached) and, when asked, parents: any
//    in-neighbour w with dist[w] == dist[v] - 1 (the graph itself when symmetric, the
//    reverse graph for a directed one: the `rev` arguments).
//
// Items are (vertex, distance at push) packed in one 64-bit word, so one store publishes
// an item and a slot holding EMPTY is unpublished. With 32-bit ids: id in the low 32 bits,
// distance in the high 32. With 64-bit ids: the id in the low 40 bits (the host refuses
// graphs of 2^40 - 1 vertices or more) and the distance in 24 bits, saturated: a saturated
// distance is read as "unknown", the item is then never judged stale and is relaxed with
// the vertex's current label (always a valid upper bound, so still exact).
//
// Stale items: an item whose recorded distance is larger than its vertex's current label
// is skipped: whoever lowered the label pushed the vertex again with the smaller distance,
// and that item relaxes the same edges with smaller values.
//
// Why the distances are exact: labels only decrease and are always lengths of real paths.
// The last decrease of dist[u] (to its final value) pushed an item (u, dist[u]) that is
// never stale, and it was processed before termination (it counted as outstanding), so
// every edge (u, v) satisfies dist[v] <= dist[u] + 1 at the end: the Bellman-Ford fixed
// point, which for unit weights is the BFS distance.
//
// Termination: ctrl[C_OUTSTANDING] counts items pushed and not yet fully processed. A warp
// adds its pushes (before any of them is published to another warp) and subtracts the
// batch it took only after its own pushes are counted, so the count never reaches zero
// while work exists; it is zero exactly when every item is done. Idle warps poll it and
// leave at zero.
//
// Global queue: `capacity` slots, EMPTY between searches, used once each per search (head
// and tail are 64-bit counters that only grow, slot = counter). A producer reserves slots
// with one atomicAdd on tail per warp and stores each item with a release store; a
// consumer reserves up to 32 reserved slots with atomicCAS on head (never past tail), and
// waits for each to leave EMPTY (its producer is between reservation and store). After the
// search the grid writes EMPTY back into the slots used, [0, min(tail, capacity)).
// Not a ring: reusing a slot one lap later would need a sequence word per slot (a producer
// of lap L cannot tell "lap L-1's item not yet stored" from "lap L-1's item consumed" by
// an EMPTY slot, and a consumer of lap L cannot tell lap L-1's unconsumed item from its
// own), so the capacity bounds the items that pass through the global queue in one
// search, not those pending at once; items kept in warps' rings do not use it.
// Overflow: a reservation past `capacity` sets ctrl[C_OVERFLOW] and drops its items; every
// warp then leaves, the kernel writes no result, and the host (asynchronous.py) reruns the
// search with the level-synchronous `persistent` variant (and doubles the queue for the
// next search on that graph). A wrong answer is never returned.
//
// Memory ordering: the labels need none (atomicMin is exact whatever the order; an item's
// recorded distance is checked against a relaxed read and the smaller of the two used).
// The outstanding count does: lane 0 of a warp makes every count update, and before any
// global publication it fences (__threadfence), the warp synchronises (__syncwarp), and
// the lanes publish with st.release.gpu; a consumer reads a slot with ld.acquire.gpu, so
// the increment is ordered before the consumer's later decrement.
//
// Statistics (ctrl[C_STATS + ...], summed per warp, one atomic per warp at exit): items
// processed, stale items skipped, edges relaxed, labels lowered (pushes), items through
// the global queue. Pushes over reached vertices is the redundancy of the search (1.0 is
// BFS's work).
#include <morphgpu/adjacency.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>
#include <bfs/kernels/label_output.cuh>

#ifndef MG_ASYNC_BLOCK
#define MG_ASYNC_BLOCK 256
#endif
// Items a warp's ring in shared memory holds (a power of two, at least 64).
#ifndef MG_ASYNC_LOCAL
#define MG_ASYNC_LOCAL 256
#endif
// When some warp is idle, a warp keeps this many items of its ring and publishes the rest
// (up to 32 per batch) to the global queue.
#ifndef MG_ASYNC_KEEP
#define MG_ASYNC_KEEP 32
#endif
// Chunks of 32 edges whose loads and atomics a warp issues together.
#ifndef MG_ASYNC_UNROLL
#define MG_ASYNC_UNROLL 4
#endif
// Longest sleep of an idle warp between polls (ns; doubles from 32).
#ifndef MG_ASYNC_SLEEP_NS
#define MG_ASYNC_SLEEP_NS 256
#endif

using namespace mg;

namespace {

constexpr int BLOCK = MG_ASYNC_BLOCK;
constexpr int WARPS = BLOCK / 32;
constexpr unsigned LOCAL = MG_ASYNC_LOCAL;
constexpr unsigned LOCAL_MASK = LOCAL - 1u;
constexpr unsigned KEEP = MG_ASYNC_KEEP;
constexpr int UNROLL = MG_ASYNC_UNROLL;
constexpr unsigned FULL = 0xffffffffu;
static_assert(BLOCK % 32 == 0, "the block is whole warps");
static_assert((LOCAL & (LOCAL - 1u)) == 0u && LOCAL >= 64u, "the ring is a power of two >= 64");
static_assert(KEEP <= LOCAL, "a warp cannot keep more than its ring");
static_assert(UNROLL >= 1 && UNROLL <= 8, "1 to 8 chunks of 32 edges per pass");

constexpr int UNREACHED = 0x7fffffff;
constexpr int VBITS = sizeof(vid_t) == 4 ? 32 : 40;
constexpr u64 VMASK = (1ull << VBITS) - 1ull;
constexpr u64 DSAT = ~0ull >> VBITS;  // a saturated (unknown) recorded distance
constexpr u64 EMPTY = ~0ull;          // an unpublished slot (no valid item has this id)

// ctrl words (u64). The hot counters sit on their own 128-byte lines, so polling one does
// not contend with atomics on another. asynchronous.py reads C_OVERFLOW .. C_STATS + S_COUNT.
constexpr int C_HEAD = 0;
constexpr int C_TAIL = 16;
constexpr int C_OUTSTANDING = 32;
constexpr int C_IDLE = 48;
constexpr int C_OVERFLOW = 64;
constexpr int C_ERROR = 65;  // a reached vertex without an in-neighbour one level up (a bug)
constexpr int C_STATS = 80;
enum Stat { S_PROCESSED, S_STALE, S_EDGES, S_LOWERED, S_GLOBAL, S_COUNT };
constexpr int CTRL_WORDS = 128;
static_assert(C_STATS + S_COUNT <= CTRL_WORDS, "ctrl has 128 words");

__device__ __forceinline__ u64 ld_relaxed(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p));
    return v;
}
__device__ __forceinline__ u64 ld_acquire(const u64* p) {
    u64 v;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(u64* p, u64 v) {
    asm volatile("st.release.gpu.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed(u64* p, u64 v) {
    asm volatile("st.relaxed.gpu.u64 [%0], %1;" : : "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ int ld_relaxed_int(const int* p) {
    int v;
    asm volatile("ld.relaxed.gpu.s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

__device__ __forceinline__ u64 pack(i64 v, int d) {
    u64 rd = (u64)(unsigned)d;
    if (rd > DSAT) rd = DSAT;
    return (rd << VBITS) | ((u64)v & VMASK);
}

__device__ __forceinline__ unsigned lanes_below() {
    unsigned m;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}

// Lane 0 only: reserve n slots of the global queue. Returns the first, or EMPTY when the
// reservation passes the capacity (overflow: the flag is set, the items are dropped, the
// host reruns the search).
__device__ __forceinline__ u64 reserve_global(u64* ctrl, u64 n, u64 capacity) {
    const u64 base = atomicAdd(ctrl + C_TAIL, n);
    if (base + n > capacity) {
        st_relaxed(ctrl + C_OVERFLOW, 1ull);
        return EMPTY;
    }
    return base;
}

// Warp-collective: take up to 32 items of the global queue (lane i gets the i-th, EMPTY
// past the batch). Returns how many were reserved (0: nothing there).
__device__ __forceinline__ int take_global(u64* queue, u64 capacity, u64* ctrl, u64& item) {
    const unsigned lane = lane_id();
    u64 h = 0;
    int k = 0;
    if (lane == 0) {
        h = ld_relaxed(ctrl + C_HEAD);
        u64 t = ld_relaxed(ctrl + C_TAIL);
        t = t < capacity ? t : capacity;  // slots past it were never written (overflow)
        while (h < t) {
            const u64 want = t - h < 32ull ? t - h : 32ull;
            const u64 old = atomicCAS(ctrl + C_HEAD, h, h + want);
            if (old == h) {
                k = (int)want;
                break;
            }
            h = old;
            t = ld_relaxed(ctrl + C_TAIL);
            t = t < capacity ? t : capacity;
        }
    }
    k = __shfl_sync(FULL, k, 0);
    h = __shfl_sync(FULL, h, 0);
    item = EMPTY;
    if ((int)lane < k) {
        const u64* slot = queue + h + lane;
        u64 got;
        // Its producer has reserved it and is about to store (or overflowed: then leave).
        while ((got = ld_acquire(slot)) == EMPTY) {
            if (ld_relaxed(ctrl + C_OVERFLOW)) break;
        }
        item = got;
    }
    return k;
}

// Warp-wide inclusive prefix sum.
__device__ __forceinline__ i64 warp_inclusive(i64 x) {
    const unsigned lane = lane_id();
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const i64 y = __shfl_up_sync(FULL, x, off);
        if ((int)lane >= off) x += y;
    }
    return x;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(MG_ASYNC_BLOCK)
bfs_async(MG_ADJ_PARAMS(graph), MG_ADJ_PARAMS(rev), int* dist, vid_t* parent, u64* queue,
          u64 capacity, u64* ctrl, i64 n, vid_t source, unsigned* barrier_state) {
    const Adjacency adj = MG_ADJ(graph);
    const Adjacency radj = MG_ADJ(rev);
    GridBarrier bar(barrier_state);
    __shared__ u64 rings[WARPS][LOCAL];
    u64* ring = rings[warp_id()];
    const unsigned lane = lane_id();

    // 1. Labels, the seed, the counters.
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        dist[v] = v == (i64)source ? 0 : UNREACHED;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ctrl[C_HEAD] = 0ull;
        ctrl[C_TAIL] = 1ull;
        ctrl[C_OUTSTANDING] = 1ull;
        ctrl[C_IDLE] = 0ull;
        ctrl[C_OVERFLOW] = 0ull;
        ctrl[C_ERROR] = 0ull;
        for (int s = 0; s < S_COUNT; ++s) ctrl[C_STATS + s] = 0ull;
        queue[0] = pack(source, 0);
    }
    grid_sync(bar);

    // 2. The traversal. Control flow is warp-uniform from here to the exit (values that
    // decide it are broadcast from lane 0).
    unsigned rhead = 0, rtail = 0;  // the ring: items [rhead, rtail) mod LOCAL
    bool idle = false;
    unsigned sleep_ns = 32;
    u64 stats[S_COUNT] = {};
    for (;;) {
        __syncwarp();  // ring entries written by other lanes are visible
        u64 item = EMPTY;
        int k;
        const unsigned held = rtail - rhead;
        if (held > 0u) {
            k = held < 32u ? (int)held : 32;
            if ((int)lane < k) item = ring[(rhead + lane) & LOCAL_MASK];
            rhead += (unsigned)k;
        } else {
            k = take_global(queue, capacity, ctrl, item);
        }
        if (k == 0) {
            int done = 0;
            if (lane == 0) {
                if (!idle) atomicAdd(ctrl + C_IDLE, 1ull);
                done = ld_relaxed(ctrl + C_OUTSTANDING) == 0ull || ld_relaxed(ctrl + C_OVERFLOW);
            }
            idle = true;
            if (__shfl_sync(FULL, done, 0)) break;
            __nanosleep(sleep_ns);
            if (sleep_ns < MG_ASYNC_SLEEP_NS) sleep_ns *= 2u;
            continue;
        }
        if (idle) {
            if (lane == 0) atomicAdd(ctrl + C_IDLE, ~0ull);  // -1
            idle = false;
            sleep_ns = 32;
        }
        // Hints for this batch, read by lane 0 while the rows load: whether some warp is
        // idle (work sharing), the overflow flag.
        u64 idle_seen = 0, overflow = 0;
        if (lane == 0) {
            idle_seen = ld_relaxed(ctrl + C_IDLE);
            overflow = ld_relaxed(ctrl + C_OVERFLOW);
        }

        // The batch's items: row bounds and the current label, loaded together.
        bool has = item != EMPTY;
        const i64 v = has ? (i64)(item & VMASK) : 0;
        const u64 recorded = item >> VBITS;
        eid_t b = 0, e = 0;
        int cur = UNREACHED;
        if (has) {
            b = adj.begin(v);
            e = adj.end(v);
            cur = ld_relaxed_int(dist + v);
        }
        int d = cur;
        if (has && recorded != DSAT) {
            d = (int)recorded;
            if (cur < d) {  // stale: a later push of v carries the smaller distance
                has = false;
                stats[S_STALE] += 1;
            }
        }
        if (has) stats[S_PROCESSED] += 1;
        if (__shfl_sync(FULL, overflow, 0)) break;

        // The batch's edges, flattened: edge p of the batch belongs to the lane whose
        // inclusive degree sum first exceeds p (found by binary lifting over shuffles).
        const i64 deg = has ? (i64)(e - b) : 0;
        const i64 incl = warp_inclusive(deg);
        const i64 total = __shfl_sync(FULL, incl, 31);
        const int next = has ? d + 1 : 0;
        for (i64 base = 0; base < total; base += 32 * UNROLL) {
            vid_t nb[UNROLL];
            int nd[UNROLL];
            bool ok[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const i64 pos = base + u * 32 + lane;
                ok[u] = pos < total;
                int owner = 0;
#pragma unroll
                for (int step = 16; step >= 1; step >>= 1) {
                    const i64 x = __shfl_sync(FULL, incl, owner + step - 1);
                    if (x <= pos) owner += step;
                }
                const eid_t ob = __shfl_sync(FULL, b, owner);
                const i64 first = __shfl_sync(FULL, incl - deg, owner);
                nd[u] = __shfl_sync(FULL, next, owner);
                nb[u] = ok[u] ? adj.at(ob + (eid_t)(pos - first)) : (vid_t)0;
            }
            bool found[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                found[u] = false;
                if (ok[u]) {
                    stats[S_EDGES] += 1;
                    found[u] = atomicMin(dist + nb[u], nd[u]) > nd[u];
                }
            }
            // Ranks of the pass's pushes; the first `room` stay in the ring, the rest go
            // to the global queue.
            int rank[UNROLL];
            int c = 0;
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const unsigned m = __ballot_sync(FULL, found[u]);
                rank[u] = c + __popc(m & lanes_below());
                c += __popc(m);
            }
            if (c == 0) continue;
            const unsigned room = LOCAL - (rtail - rhead);
            const int n_local = (unsigned)c < room ? c : (int)room;
            const int n_global = c - n_local;
            u64 gbase = 0;
            if (lane == 0) {
                stats[S_LOWERED] += (u64)c;
                atomicAdd(ctrl + C_OUTSTANDING, (u64)c);
                if (n_global > 0) {
                    __threadfence();  // the count before the items (header comment)
                    stats[S_GLOBAL] += (u64)n_global;
                    gbase = reserve_global(ctrl, (u64)n_global, capacity);
                }
            }
            gbase = __shfl_sync(FULL, gbase, 0);
            __syncwarp();
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                if (!found[u]) continue;
                const u64 it = pack(nb[u], nd[u]);
                if (rank[u] < n_local) {
                    ring[(rtail + (unsigned)rank[u]) & LOCAL_MASK] = it;
                } else if (gbase != EMPTY) {
                    st_release(queue + gbase + (u64)(rank[u] - n_local), it);
                }
            }
            rtail += (unsigned)n_local;
        }

        // Work sharing: while some warp is idle, the newest items above KEEP go to the
        // global queue, 32 at most per batch (the oldest, smallest distances stay here).
        const unsigned kept = rtail - rhead;
        const bool share = __shfl_sync(FULL, idle_seen, 0) > 0ull && kept > KEEP;
        if (share) {
            const unsigned s = kept - KEEP < 32u ? kept - KEEP : 32u;
            __syncwarp();
            u64 it = EMPTY;
            if (lane < s) it = ring[(rtail - s + lane) & LOCAL_MASK];
            rtail -= s;
            u64 gbase = 0;
            if (lane == 0) {
                __threadfence();  // these items were counted by this lane earlier
                stats[S_GLOBAL] += s;
                gbase = reserve_global(ctrl, s, capacity);
            }
            gbase = __shfl_sync(FULL, gbase, 0);
            __syncwarp();
            if (lane < s && gbase != EMPTY) st_release(queue + gbase + lane, it);
        }
        // The batch is done, its pushes counted: now it may leave the count.
        if (lane == 0) atomicAdd(ctrl + C_OUTSTANDING, (u64)(-(i64)k));
    }
    // Per-warp statistics, one atomic each.
#pragma unroll
    for (int s = 0; s < S_COUNT; ++s) {
        u64 x = stats[s];
#pragma unroll
        for (int off = 16; off >= 1; off >>= 1) x += __shfl_down_sync(FULL, x, off);
        if (lane == 0 && x) atomicAdd(ctrl + C_STATS + s, x);
    }
    grid_sync(bar);

    // 3. Output. The slots used back to EMPTY, which the next search relies on. After an
    // overflow no result (the host reruns).
    const u64 tail = load_volatile(ctrl + C_TAIL);
    const i64 used = (i64)(tail < capacity ? tail : capacity);
    for (i64 i = global_tid(); i < used; i += global_stride()) queue[i] = EMPTY;
    if (load_volatile(ctrl + C_OVERFLOW)) return;
    bfs::labels_to_output(radj, dist, parent, ctrl + C_ERROR, n, source);
}
