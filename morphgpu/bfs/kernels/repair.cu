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
// A repair can cost more than a search: one inserted shortcut on a road network lowers the
// distances of most vertices, each by many rounds of a label-correcting sweep without the
// direction optimisation or the one-block levels. So the repair stops once the vertices
// it has queued pass `budget` (every block sums the same round lengths, so all stop at the
// same round), sets *status = 1, and the host searches afresh; the labels it leaves are
// then discarded.
//
// One cooperative launch: rounds are separated by grid barriers, and a round's queue holds
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

struct Labels {
    unsigned* dist;   // the caller's int32 labels, read as unsigned
    u64* packed;      // (dist << 32) | parent, or null without parents
    i64* stamp;       // per vertex: (call << 20) | the last round it was queued in
    vid_t* out_queue;
    u64* out_tail;
    i64 round;  // (call << 20) | round

    __device__ __forceinline__ unsigned current(vid_t v) const {
        return packed ? (unsigned)(load_volatile(packed + v) >> 32) : load_volatile(dist + v);
    }
    // Offer v the distance d through parent p; queue v (once a round) if it fell.
    __device__ __forceinline__ void offer(vid_t p, vid_t v, unsigned d) const {
        bool fell;
        if (packed) {
            const u64 key = ((u64)d << 32) | (u64)(unsigned)p;
            const u64 old = atomicMin(packed + v, key);
            fell = d < (unsigned)(old >> 32);
        } else {
            fell = d < atomicMin(dist + v, d);
        }
        const bool push = fell &&
            atomicExch((unsigned long long*)(stamp + v), (unsigned long long)round) != (u64)round;
        warp_enqueue(out_queue, out_tail, push, v);
    }
};

struct RelaxVisit {
    Labels labels;
    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const unsigned d = labels.current(src);
        if (d != UNREACHED && d + 1 < labels.current(dst)) labels.offer(src, dst, d + 1);
    }
};

// queues: 2 * n entries (round r reads half r & 1); tails: 2 u64 per round slot (3 slots
// rotate: round r reads slot r % 3, fills (r + 1) % 3, zeroes (r + 2) % 3).
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_repair(MG_ADJ_PARAMS(graph), int* dist_io, vid_t* parent_io, u64* packed, i64* stamp,
           i64 call, const long long* new_src, const long long* new_dst, i64 n_new,
           vid_t* queues, u64* tails, i64 n, i64 budget, int* status,
           unsigned* barrier_state) {
    __shared__ GatherScratch<BLOCK> gather;
    GridBarrier bar(barrier_state);
    const Adjacency adj = MG_ADJ(graph);
    unsigned* dist = reinterpret_cast<unsigned*>(dist_io);
    const bool with_parents = parent_io != nullptr;
    if (with_parents) {
        for (i64 v = global_tid(); v < n; v += global_stride())
            packed[v] = ((u64)dist[v] << 32) | (u64)(unsigned)parent_io[v];
    }
    const i64 epoch = call << 20;
    if (global_tid() < 3) tails[global_tid()] = 0ull;
    grid_sync(bar);
    // Round 0: the inserted edges.
    {
        const Labels labels{dist, with_parents ? packed : nullptr, stamp, queues, &tails[1],
                            epoch};
        for (i64 base = global_tid() - lane_id(); base < n_new; base += global_stride()) {
            const i64 i = base + lane_id();
            const bool has = i < n_new;
            vid_t u = 0, w = 0;
            unsigned du = UNREACHED;
            if (has) {
                u = (vid_t)new_src[i];
                w = (vid_t)new_dst[i];
                du = labels.current(u);
            }
            const bool better = has && du != UNREACHED && du + 1 < labels.current(w);
            if (__any_sync(0xffffffffu, better)) {
                bool push = false;
                if (better) {
                    if (labels.packed) {
                        const u64 key = ((u64)(du + 1) << 32) | (u64)(unsigned)u;
                        push = du + 1 < (unsigned)(atomicMin(labels.packed + w, key) >> 32);
                    } else {
                        push = du + 1 < atomicMin(dist + w, du + 1);
                    }
                    push = push && atomicExch((unsigned long long*)(stamp + w),
                                              (unsigned long long)epoch) != (u64)epoch;
                }
                warp_enqueue(queues, &tails[1], push, w);
            }
        }
    }
    grid_sync(bar);
    i64 queued = 0;
    for (int round = 1;; ++round) {
        const i64 n_queue = (i64)load_volatile(&tails[round % 3]);
        if (n_queue == 0) break;
        queued += n_queue;
        if (queued > budget) {  // grid-uniform
            if (global_tid() == 0) *status = 1;
            return;
        }
        if (global_tid() == 0) tails[(round + 2) % 3] = 0ull;
        const vid_t* in = queues + (i64)((round - 1) & 1) * n;
        const Labels labels{dist, with_parents ? packed : nullptr, stamp,
                            queues + (i64)(round & 1) * n, &tails[(round + 1) % 3],
                            epoch | round};
        const RelaxVisit visit{labels};
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
