// Incremental BFS after insertions (decrease-only repair): distances of a search on the
// graph before a batch of insertions, brought up to date from the inserted edges alone.
//
// Insertions only shorten paths, so the new distances are the fixpoint of
// d(w) = min(d(w), d(v) + 1) over the edges, reached from the old distances by relaxing
// the inserted edges and then every out-edge of each vertex whose distance fell, round
// after round (label correcting, as an asynchronous traversal would; with unit weights a
// vertex rarely falls twice). Unreached (-1) is read as the largest unsigned value, so one
// atomicMin both labels and improves. With parents, distance and parent are packed into
// one 64-bit word, (distance << 32) | parent, and improved by one atomicMin: a vertex's
// final parent is an in-neighbour one level up. A vertex whose distance did not change
// keeps its parent, whose distance cannot have changed either (else it would have
// relaxed the vertex).
//
// Hubs: a fallen vertex of more than HUB_DEGREE out-edges goes to a second queue, whose
// rows the whole grid expands as one flat edge array (expand_rows_grid): on a Kronecker
// graph one hub a level closer to the source re-relaxes ~10^5 edges, which one block
// (expand_gather's CTA phase) would take hundreds of steps over while the grid waited.
//
// A repair can cost more than a search: one inserted shortcut on a road network lowers the
// distances of most vertices, each by many rounds of a label-correcting sweep without the
// direction optimisation or the one-block levels. So the repair stops once the vertices
// it has queued pass `budget` or its rounds pass MAX_ROUNDS (every block sums the same
// round lengths, so all stop at the same round), sets *status = 1, and the host searches
// afresh; the labels it leaves are then discarded.
//
// One cooperative launch: rounds are separated by grid barriers, and a round's queues hold
// each improved vertex once (a per-vertex stamp of the round it was queued in). Stamps are
// (call << 20) | round with a call number the host increases, so the stamp array, kept
// between calls, needs no clearing pass over all n vertices.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/queue.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 256
#endif

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;
constexpr unsigned UNREACHED = 0xffffffffu;
constexpr i64 HUB_DEGREE = 2048;
constexpr int FLAT_CAP = 1024;  // hub rows per grid-wide expansion
constexpr int MAX_ROUNDS = 256;

struct Labels {
    unsigned* dist;   // the caller's int32 labels, read as unsigned
    u64* packed;      // (dist << 32) | parent, or null without parents
    i64* stamp;       // per vertex: (call << 20) | the last round it was queued in
    Adjacency adj;    // for the degree of a fallen vertex (hub or not)
    vid_t* out_queue;
    u64* out_tail;
    vid_t* hub_queue;
    u64* hub_tail;
    i64 round;  // (call << 20) | round

    __device__ __forceinline__ unsigned current(vid_t v) const {
        return packed ? (unsigned)(load_volatile(packed + v) >> 32) : load_volatile(dist + v);
    }
    // Offer v the distance d through parent p; true when v fell and is queued by the caller
    // (once a round: the stamp).
    __device__ __forceinline__ bool improve(vid_t p, vid_t v, unsigned d) const {
        bool fell;
        if (packed) {
            const u64 key = ((u64)d << 32) | (u64)(unsigned)p;
            fell = d < (unsigned)(atomicMin(packed + v, key) >> 32);
        } else {
            fell = d < atomicMin(dist + v, d);
        }
        return fell &&
            atomicExch((unsigned long long*)(stamp + v), (unsigned long long)round) != (u64)round;
    }
    // Every lane converged here calls it (push false for lanes with nothing to queue).
    __device__ __forceinline__ void queue_warp(bool push, vid_t v) const {
        const bool hub = push && adj.degree(v) > HUB_DEGREE;
        warp_enqueue(out_queue, out_tail, push && !hub, v);
        warp_enqueue(hub_queue, hub_tail, hub, v);
    }
    // One lane alone (the grid-wide hub expansion diverges: no warp collectives).
    __device__ __forceinline__ void queue_one(vid_t v) const {
        if (adj.degree(v) > HUB_DEGREE) hub_queue[atomicAdd(hub_tail, 1ull)] = v;
        else out_queue[atomicAdd(out_tail, 1ull)] = v;
    }
};

template <bool WARP>
struct RelaxVisit {
    Labels labels;
    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const unsigned d = labels.current(src);
        const bool better = d != UNREACHED && d + 1 < labels.current(dst);
        if (WARP) {
            labels.queue_warp(better && labels.improve(src, dst, d + 1), dst);
        } else if (better && labels.improve(src, dst, d + 1)) {
            labels.queue_one(dst);
        }
    }
};

// queues: 4 n entries (normal queue halves 0, 1, then hub queue halves 2, 3; round r reads
// halves (r - 1) & 1); tails: 3 slots of (normal, hub) counts (round r reads slot r % 3,
// fills (r + 1) % 3, zeroes (r + 2) % 3).
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_repair(MG_ADJ_PARAMS(graph), int* dist_io, vid_t* parent_io, u64* packed, i64* stamp,
           i64 call, const long long* new_keys, i64 n_new,
           vid_t* queues, u64* tails, i64 n, i64 budget, int* status,
           unsigned* barrier_state) {
    __shared__ GatherScratch<BLOCK> gather;
    __shared__ FlatRows<FLAT_CAP> flat;
    GridBarrier bar(barrier_state);
    const Adjacency adj = MG_ADJ(graph);
    unsigned* dist = reinterpret_cast<unsigned*>(dist_io);
    const bool with_parents = parent_io != nullptr;
    if (with_parents) {
        for (i64 v = global_tid(); v < n; v += global_stride())
            packed[v] = ((u64)dist[v] << 32) | (u64)(unsigned)parent_io[v];
    }
    if (global_tid() < 6) tails[global_tid()] = 0ull;
    const i64 epoch = call << 20;
    auto labels_for = [&](int round) {
        const i64 half = (i64)(round & 1) * n;
        u64* slot = tails + 2 * ((round + 1) % 3);
        return Labels{dist, with_parents ? packed : nullptr, stamp, adj, queues + half, slot,
                      queues + 2 * n + half, slot + 1, epoch | round};
    };
    grid_sync(bar);
    // Round 0: the inserted edges.
    {
        const Labels labels = labels_for(0);
        for (i64 base = global_tid() - lane_id(); base < n_new; base += global_stride()) {
            const i64 i = base + lane_id();
            bool push = false;
            vid_t w = 0;
            if (i < n_new) {
                const i64 key = new_keys[i];  // source * n + destination
                const vid_t u = (vid_t)(key / n);
                w = (vid_t)(key - (i64)u * n);
                const unsigned du = labels.current(u);
                push = du != UNREACHED && du + 1 < labels.current(w) &&
                       labels.improve(u, w, du + 1);
            }
            labels.queue_warp(push, w);
        }
    }
    grid_sync(bar);
    i64 queued = 0;
    for (int round = 1;; ++round) {
        const u64* here = tails + 2 * (round % 3);
        const i64 n_queue = (i64)load_volatile(here);
        const i64 n_hubs = (i64)load_volatile(here + 1);
        if (n_queue + n_hubs == 0) break;
        queued += n_queue + n_hubs;
        if (queued > budget || round > MAX_ROUNDS) {  // grid-uniform
            if (global_tid() == 0) *status = 1;
            return;
        }
        if (global_tid() < 2) tails[2 * ((round + 2) % 3) + global_tid()] = 0ull;
        const i64 half = (i64)((round - 1) & 1) * n;
        const vid_t* in = queues + half;
        const vid_t* hubs_in = queues + 2 * n + half;
        const Labels labels = labels_for(round);
        for (i64 c = 0; c < n_hubs; c += FLAT_CAP)  // grid-uniform
            expand_rows_grid<BLOCK, FLAT_CAP>(flat, adj, hubs_in + c,
                                              n_hubs - c < FLAT_CAP ? n_hubs - c : FLAT_CAP,
                                              RelaxVisit<false>{labels});
        const RelaxVisit<true> visit{labels};
        for (i64 base = (i64)blockIdx.x * BLOCK; base < n_queue; base += (i64)gridDim.x * BLOCK) {
            const i64 i = base + threadIdx.x;
            const bool has = i < n_queue;
            expand_gather<BLOCK>(gather, adj, has, has ? in[i] : (vid_t)0, visit);
        }
        grid_sync(bar);
    }
    if (with_parents) {
        for (i64 v = global_tid(); v < n; v += global_stride()) {
            const u64 key = packed[v];
            dist[v] = (unsigned)(key >> 32);
            parent_io[v] = (vid_t)(unsigned)(key & 0xffffffffu);
        }
    }
}
