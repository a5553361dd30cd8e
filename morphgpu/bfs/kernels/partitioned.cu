// One part of a partitioned BFS (morphgpu/bfs/gpu/partitioned.py): the part owns the
// vertices [lo, hi) and holds their rows (indptr rebased to 0, GLOBAL column ids).
//
// Per level: bfs_part_expand gathers the frontier's rows with the shared expand operator
// (traversal/expand.cuh); a neighbour the part owns is claimed here (claim_label: first
// claim wins) and queued for the next level; any other neighbour goes, once per search
// (an n-bit "sent" bitmap, Merrill et al.'s multi-GPU bitmask made exact by atomicOr), to
// an unordered (vertex, parent) buffer, counted per owner. bfs_part_bucket then orders
// that buffer by owner (a counting scatter from the owners' offsets), so each owner's
// message is one contiguous slice. After the exchange, bfs_part_claim claims the received
// candidates the same way, appending to the same next queue.
//
// Bottom-up levels (direction-optimizing, Enterprise §4.4 over parts): bfs_part_frontier_edges
// gives the loop the frontier's size and edges for Beamer's rule; bfs_part_mark sets the
// frontier's bits (global ids) in an n-bit map that the exchange ORs across the parts; then
// bfs_part_bottom_up lets each unvisited vertex of the part adopt its first neighbour on
// that map (the shared bottom-up scan) and queues it, so a top-down level can follow.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/bottom_up.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/queue.cuh>
#include <morphgpu/traversal/visit.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 256
#endif

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;

// The part owning global vertex v: the last start <= v (starts has n_parts + 1 entries).
__device__ __forceinline__ int owner_of(const i64* starts, int n_parts, vid_t v) {
    int lo = 0, hi = n_parts - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (starts[mid] <= (i64)v) lo = mid; else hi = mid - 1;
    }
    return lo;
}

struct PartVisit {
    int* dist;        // local labels, hi - lo of them
    vid_t* parent;    // local parents (global ids), or null
    int next_level;
    vid_t* out_queue; // local ids
    u64* out_tail;
    vid_t lo, hi;
    const i64* starts;
    int n_parts;
    vid_t* remote_dst;  // global ids
    vid_t* remote_src;  // global ids (the parents the owners will record)
    u64* remote_tail;
    u64* owner_counts;  // n_parts of them
    unsigned* sent;     // n bits, zeroed before the search

    // src is a local row id (the frontier holds local ids); dst a global id.
    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const bool local = dst >= lo && dst < hi;
        bool mine = false;
        if (local) {
            mine = claim_label(dist, dst - lo, next_level);
            if (mine && parent) parent[dst - lo] = src + lo;
        }
        warp_enqueue(out_queue, out_tail, mine, (vid_t)(local ? dst - lo : 0));
        bool send = false;
        if (!local) {
            const unsigned bit = 1u << ((u64)dst & 31u);
            unsigned* word = sent + ((u64)dst >> 5);
            send = (load_volatile(word) & bit) == 0u && (atomicOr(word, bit) & bit) == 0u;
        }
        send_remote(send, dst, src + lo);
    }

    // The converged lanes' candidates appended with one atomicAdd on the buffer's tail and
    // one per owner among them: one atomic per candidate on those few words serialised
    // every sending thread (warp_append, queue.cuh).
    __device__ __forceinline__ void send_remote(bool send, vid_t dst, vid_t from) const {
        warp_append(remote_tail, send, [&](u64 k, unsigned sending) {
            remote_dst[k] = dst;
            remote_src[k] = from;
            const int owner = owner_of(starts, n_parts, dst);
            const unsigned same = __match_any_sync(sending, owner);
            if ((int)lane_id() == __ffs(same) - 1)
                atomicAdd(owner_counts + owner, (u64)__popc(same));
        });
    }
};

extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_part_expand(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                vid_t lo, vid_t hi, const i64* starts, int n_parts, int* dist, vid_t* parent,
                const vid_t* in_queue, const u64* in_count, vid_t* out_queue, u64* out_tail,
                vid_t* remote_dst, vid_t* remote_src, u64* remote_tail, u64* owner_counts,
                unsigned* sent, int next_level) {
    __shared__ GatherScratch<BLOCK> scratch;
    const PartVisit visit{dist, parent, next_level, out_queue, out_tail, lo, hi, starts,
                          n_parts, remote_dst, remote_src, remote_tail, owner_counts, sent};
    const i64 n_queue = (i64)*in_count;
    // Frontier entries dealt round-robin over the blocks (entry i to block i mod gridDim.x),
    // not in runs of BLOCK: a small frontier of hubs (Kronecker 25: 1,136 vertices holding
    // 11M edges) then spreads over every block, where runs of BLOCK gave all of it to 5
    // blocks and that one top-down level cost ~20 ms (expand_gather keeps a row in the
    // block that holds it). Block-uniform trip count: expand_gather is block-wide.
    const i64 span = (i64)gridDim.x * BLOCK;
    for (i64 base = 0; base < n_queue; base += span) {
        const i64 i = base + (i64)threadIdx.x * gridDim.x + blockIdx.x;
        const bool has = i < n_queue;
        const vid_t v = has ? in_queue[i] : (vid_t)0;
        expand_gather<BLOCK>(scratch, indptr, indices, has, v, visit);
    }
}

// Each owner's first slot in the bucketed buffer: the exclusive scan of owner_counts, by
// one thread (n_parts is the number of parts; the host walks as many slices a level).
extern "C" __global__ void bfs_part_offsets(const u64* owner_counts, int n_parts,
                                            u64* cursor) {
    if (global_tid() != 0) return;
    u64 sum = 0;
    for (int o = 0; o < n_parts; ++o) {
        cursor[o] = sum;
        sum += owner_counts[o];
    }
}

// The remote buffer ordered by owner: `cursor` starts at each owner's offset
// (bfs_part_offsets) and is consumed by one atomicAdd per candidate.
extern "C" __global__ void bfs_part_bucket(const vid_t* remote_dst, const vid_t* remote_src,
                                           const u64* remote_count, const i64* starts,
                                           int n_parts, u64* cursor, vid_t* out_dst,
                                           vid_t* out_src) {
    const i64 n = (i64)*remote_count;
    const unsigned lane = lane_id();
    for (i64 i = global_tid(); i < n; i += global_stride()) {
        const vid_t v = remote_dst[i];
        const int owner = owner_of(starts, n_parts, v);
        // Lanes with the same owner take consecutive slots: one atomicAdd between them.
        const unsigned same = __match_any_sync(__activemask(), owner);
        const int leader = __ffs(same) - 1;
        u64 base = 0;
        if ((int)lane == leader) base = atomicAdd(cursor + owner, (u64)__popc(same));
        const u64 k = __shfl_sync(same, base, leader) + __popc(same & ((1u << lane) - 1u));
        out_dst[k] = v;
        out_src[k] = remote_src[i];
    }
}

// Received candidates (global ids, all owned here): first claim wins, parent = sender's.
extern "C" __global__ void bfs_part_claim(const vid_t* recv_dst, const vid_t* recv_src,
                                          i64 n, vid_t lo, int* dist, vid_t* parent,
                                          vid_t* out_queue, u64* out_tail, int next_level) {
    const i64 stride = global_stride();
    // Every lane of a warp runs the same trip count (warp_enqueue wants whole warps).
    const i64 rounds = (n + stride - 1) / stride;
    for (i64 r = 0; r < rounds; ++r) {
        const i64 i = r * stride + global_tid();
        const bool has = i < n;
        const vid_t w = has ? (vid_t)(recv_dst[i] - lo) : (vid_t)0;
        const bool mine = has && claim_label(dist, w, next_level);
        if (mine && parent) parent[w] = recv_src[i];
        warp_enqueue(out_queue, out_tail, mine, w);
    }
}

// What BFSResult's figures need of one part: [edges out of reached vertices, largest
// label], added into words[0] and maxed into words[1] (zeroed by the caller).
extern "C" __global__ void bfs_part_figures(const eid_t* __restrict__ indptr, const int* dist,
                                            i64 n_local, u64* words) {
    u64 edges = 0;
    int top = 0;
    for (i64 v = global_tid(); v < n_local; v += global_stride()) {
        const int d = dist[v];
        if (d >= 0) {
            edges += (u64)(indptr[v + 1] - indptr[v]);
            top = d > top ? d : top;
        }
    }
    // Summed and maxed over the warp first: one atomic per thread on two words was most of
    // this kernel's time (0.46 ms on Kronecker 23, one H100).
    for (int off = 16; off > 0; off >>= 1) {
        edges += __shfl_down_sync(0xffffffffu, edges, off);
        top = max(top, __shfl_down_sync(0xffffffffu, top, off));
    }
    if (lane_id() == 0 && edges) atomicAdd(words, edges);
    if (lane_id() == 0 && top) atomicMax(words + 1, (u64)top);
}

// stats[0] = the frontier's size, stats[1] += its rows' lengths (stats zeroed by the caller).
extern "C" __global__ void bfs_part_frontier_edges(const eid_t* __restrict__ indptr,
                                                   const vid_t* queue, const u64* count,
                                                   u64* stats) {
    const i64 n = (i64)*count;
    if (global_tid() == 0) stats[0] = (u64)n;
    u64 edges = 0;
    for (i64 i = global_tid(); i < n; i += global_stride()) {
        const vid_t v = queue[i];
        edges += (u64)(indptr[v + 1] - indptr[v]);
    }
    for (int off = 16; off > 0; off >>= 1) edges += __shfl_down_sync(0xffffffffu, edges, off);
    if (lane_id() == 0 && edges) atomicAdd(stats + 1, edges);
}

// The frontier (local ids) as bits of global ids in an n-bit map zeroed by the caller.
extern "C" __global__ void bfs_part_mark(const vid_t* queue, const u64* count, vid_t lo,
                                         unsigned* bits) {
    const i64 n = (i64)*count;
    for (i64 i = global_tid(); i < n; i += global_stride()) {
        const u64 g = (u64)((i64)queue[i] + (i64)lo);
        atomicOr(bits + (g >> 5), 1u << (unsigned)(g & 31u));
    }
}

// Every unvisited vertex of the part looks through its row (an undirected graph: its
// in-edges too) for a neighbour whose bit is set in `front`, the whole frontier, and adopts
// the first one (label next_level, parent its global id); the adopted are queued (local
// ids). Only v's own thread writes v, so no atomics on the labels.
extern "C" __global__ void bfs_part_bottom_up(const eid_t* __restrict__ indptr,
                                              const vid_t* __restrict__ indices, i64 n_local,
                                              int* dist, vid_t* parent, const unsigned* front,
                                              vid_t* out_queue, u64* out_tail, int next_level) {
    const CsrAdjacency rows{indptr, indices};
    const HubCache<1>* no_cache = nullptr;
    const i64 stride = global_stride();
    // Every lane of a warp runs the same trip count (warp_enqueue wants whole warps).
    const i64 rounds = (n_local + stride - 1) / stride;
    for (i64 r = 0; r < rounds; ++r) {
        const i64 v = r * stride + global_tid();
        bool found = false;
        if (v < n_local && dist[v] < 0)
            found = scan_in_row(rows, dist, parent, (vid_t)v, rows.begin(v), rows.end(v),
                                next_level - 1, no_cache, front);
        warp_enqueue(out_queue, out_tail, found, (vid_t)(found ? v : 0));
    }
}
