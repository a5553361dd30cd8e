// One part of a partitioned BFS (morphgpu/bfs/gpu/partitioned.py): the part owns the
// vertices [lo, hi) and holds their rows (indptr rebased to 0, GLOBAL column ids).
//
// Message levels (any graph; partitioned.py's run_levels), per level: bfs_part_expand
// gathers the frontier's rows with the shared expand operator (traversal/expand.cuh); a
// neighbour the part owns is claimed here (claim_label: first
// claim wins) and queued for the next level; any other neighbour goes, once per search
// (an n-bit "sent" bitmap, Merrill et al.'s multi-GPU bitmask made exact by atomicOr), to
// an unordered (vertex, parent) buffer, counted per owner. bfs_part_bucket then orders
// that buffer by owner (a counting scatter from the owners' offsets), so each owner's
// message is one contiguous slice. After the exchange, bfs_part_claim claims the received
// candidates the same way, appending to the same next queue.
//
// Undirected graphs take the bitmap levels instead (bfs_level_*, below; Enterprise §4.4's
// direction-optimizing over parts): every message a fixed-size bitmap, the direction
// decided on the device, so the host never waits on a level.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/bitmap.cuh>
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
        send_remote(!local && first_to_set(sent, dst), dst, src + lo);
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

// ---- Bitmap levels (undirected graphs; morphgpu/bfs/bitmap_levels.py): three launches a
// level, every size fixed before the search, the direction decided here, so the host
// queues levels without reading anything back but each level's mode, late.
constexpr int MODE_DONE = 0, MODE_TOP_DOWN = 1, MODE_BOTTOM_UP = 2;  // bitmap_levels.py's
constexpr int MODE_RING = 8;  // modes[level % MODE_RING]: the host reads them AHEAD late

// Beamer's rule on the summed row [frontier vertices, their edges, CSR entries], the same
// arithmetic as partitioned.Direction.decide. rule: [unexplored, bottom-up, last frontier,
// started]; the level's rule goes to `out` (a second copy: every block decides, so the
// input must not change under them).
__device__ __forceinline__ int decide(const u64* sums, const i64* rule, i64* out,
                                      double alpha, double beta, i64 n_vertices) {
    const i64 nf = (i64)sums[0], mf = (i64)sums[1], entries = (i64)sums[2];
    for (int k = 0; k < 4; ++k) out[k] = rule[k];
    if (nf == 0) return MODE_DONE;
    const i64 unexplored = (rule[3] ? rule[0] : entries) - mf;
    bool bottom_up = rule[1] != 0;
    if (!bottom_up) bottom_up = (double)mf * alpha > (double)unexplored;
    else if ((double)nf * beta < (double)n_vertices && nf < rule[2]) bottom_up = false;
    out[0] = unexplored;
    out[1] = bottom_up;
    out[2] = nf;
    out[3] = 1;
    return bottom_up ? MODE_BOTTOM_UP : MODE_TOP_DOWN;
}

// Frontier rows longer than HUB_CHUNK go to the grid in chunks of HUB_CHUNK entries
// (bfs_level_hubs), not to one block each: a top-down level of Kronecker 25 from 2,250
// vertices holding 20M edges took 5.5 ms with every row in expand_gather, which gives a
// long row to the one block that holds it (benchmarks/RESULTS.md, session 34).
constexpr int HUB_CHUNK = 4096;

// The level's start: this part's row of the sum ([frontier size, its edges, the part's CSR
// entries]; the edges added into stats[1], zeroed a level earlier, so this level zeroes the
// next level's), the next frontier's bitmap, the candidate map, the next queue's tail and
// the hub chunks' count zeroed. Every buffer written here was last read by the previous
// level's launches.
extern "C" __global__ void bfs_level_start(const eid_t* __restrict__ indptr,
                                           const vid_t* queue, const u64* tail,
                                           u64* tail_next, u64* chunk_tail, i64 entries,
                                           u64* stats, u64* stats_next, unsigned* next_front,
                                           unsigned* cand, i64 n_words) {
    const i64 n = (i64)*tail;
    if (global_tid() == 0) {
        stats[0] = (u64)n;
        stats[2] = (u64)entries;
        stats_next[1] = 0;
        *tail_next = 0;
        *chunk_tail = 0;
    }
    for (i64 i = global_tid(); i < n_words; i += global_stride()) {
        next_front[i] = 0u;
        cand[i] = 0u;
    }
    u64 edges = 0;
    for (i64 i = global_tid(); i < n; i += global_stride()) {
        const vid_t v = queue[i];
        edges += (u64)(indptr[v + 1] - indptr[v]);
    }
    edges = warp_sum(edges);
    if (lane_id() == 0 && edges) atomicAdd(stats + 1, edges);
}

// Top-down on bitmaps: a neighbour the part owns is claimed (first claim wins, parent the
// frontier vertex) and queued; any other is sent once a search (the `sent` bitmap): its
// bit set in the n-bit candidate map, which the exchange cuts by owner, and the frontier
// vertex kept in remote_parent (null without parents) for its owner to read after the
// search.
struct BitmapVisit {
    int* dist;
    vid_t* parent;
    int next_level;
    vid_t* out_queue;  // local ids
    u64* out_tail;
    vid_t lo, hi;
    unsigned* next_front;  // global ids
    unsigned* cand;        // global ids
    unsigned* sent;        // global ids
    vid_t* remote_parent;  // global ids -> global ids

    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const bool local = dst >= lo && dst < hi;
        bool mine = false;
        if (local) {
            mine = claim_label(dist, dst - lo, next_level);
            if (mine) {
                if (parent) parent[dst - lo] = src + lo;
                set_bit(next_front, dst);
            }
        } else if (first_to_set(sent, dst)) {
            if (remote_parent) remote_parent[dst] = src + lo;
            set_bit(cand, dst);
        }
        warp_enqueue(out_queue, out_tail, mine, (vid_t)(local ? dst - lo : 0));
    }
};

// The level's direction (every block decides alike from the summed row; block 0 keeps
// the rule and the mode), then its labelling here: top-down over this part's frontier
// (rows up to HUB_CHUNK entries; longer ones listed as chunks for bfs_level_hubs), or
// bottom-up, each unvisited vertex of the part adopting its first neighbour on the
// summed frontier bitmap `front` (direction.cu's batches of two). Found vertices are
// queued and set in next_front.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_level_expand(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                 vid_t lo, vid_t hi, int* dist, vid_t* parent, const vid_t* queue,
                 const u64* tail, vid_t* queue_next, u64* tail_next, const unsigned* front,
                 unsigned* next_front, unsigned* cand, unsigned* sent, vid_t* remote_parent,
                 u64* chunks, u64* chunk_tail, const u64* sums, const i64* rule,
                 i64* rule_next, int* modes, int level, double alpha, double beta,
                 i64 n_vertices) {
    __shared__ GatherScratch<BLOCK> scratch;
    i64 next_rule[4];
    const int mode = decide(sums, rule, next_rule, alpha, beta, n_vertices);
    if (global_tid() == 0) {
        for (int k = 0; k < 4; ++k) rule_next[k] = next_rule[k];
        modes[level % MODE_RING] = mode;
    }
    if (mode == MODE_TOP_DOWN) {
        const BitmapVisit visit{dist, parent, level + 1, queue_next, tail_next, lo, hi,
                                next_front, cand, sent, remote_parent};
        const i64 n_queue = (i64)*tail;
        // Round-robin over the blocks, as bfs_part_expand deals them (a frontier of hubs).
        const i64 span = (i64)gridDim.x * BLOCK;
        for (i64 base = 0; base < n_queue; base += span) {
            const i64 i = base + (i64)threadIdx.x * gridDim.x + blockIdx.x;
            bool has = i < n_queue;
            const vid_t v = has ? queue[i] : (vid_t)0;
            if (has) {
                const i64 degree = (i64)(indptr[v + 1] - indptr[v]);
                if (degree > HUB_CHUNK) {
                    const i64 n_chunks = (degree + HUB_CHUNK - 1) / HUB_CHUNK;
                    const u64 at = atomicAdd(chunk_tail, (u64)n_chunks);
                    for (i64 c = 0; c < n_chunks; ++c) {  // (row, chunk) pairs
                        chunks[2 * (at + c)] = (u64)v;
                        chunks[2 * (at + c) + 1] = (u64)c;
                    }
                    has = false;
                }
            }
            expand_gather<BLOCK>(scratch, indptr, indices, has, v, visit);
        }
    } else if (mode == MODE_BOTTOM_UP) {
        constexpr int BATCH = 2;
        const CsrAdjacency rows{indptr, indices};
        const i64 n_local = (i64)(hi - lo);
        const i64 stride = global_stride();
        for (i64 v0 = global_tid(); v0 < n_local; v0 += stride * BATCH) {
            unsigned open = 0u;
#pragma unroll
            for (int t = 0; t < BATCH; ++t) {
                const i64 v = v0 + t * stride;
                if (v < n_local && dist[v] < 0) open |= 1u << t;
            }
            const unsigned found = adopt_parents_batch<BATCH, 1>(rows, dist, parent, v0, stride,
                                                                 open, level, front);
#pragma unroll
            for (int t = 0; t < BATCH; ++t) {
                const bool mine = (found >> t) & 1u;
                const i64 v = v0 + t * stride;
                if (mine) set_bit(next_front, v + lo);
                warp_enqueue(queue_next, tail_next, mine, (vid_t)(mine ? v : 0));
            }
        }
    }
}

// Top-down levels only: the frontier's long rows, HUB_CHUNK entries per chunk, the chunks
// dealt over the blocks (bfs_level_expand listed them).
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_level_hubs(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
               vid_t lo, vid_t hi, int* dist, vid_t* parent, vid_t* queue_next,
               u64* tail_next, unsigned* next_front, unsigned* cand, unsigned* sent,
               vid_t* remote_parent, const u64* chunks, const u64* chunk_tail,
               const int* modes, int level) {
    if (modes[level % MODE_RING] != MODE_TOP_DOWN) return;
    const BitmapVisit visit{dist, parent, level + 1, queue_next, tail_next, lo, hi,
                            next_front, cand, sent, remote_parent};
    const i64 n_chunks = (i64)*chunk_tail;
    for (i64 i = blockIdx.x; i < n_chunks; i += gridDim.x) {
        const vid_t v = (vid_t)chunks[2 * i];
        const eid_t begin = indptr[v] + (eid_t)chunks[2 * i + 1] * HUB_CHUNK;
        const eid_t row_end = indptr[v + 1];
        const eid_t end = begin + HUB_CHUNK < row_end ? begin + HUB_CHUNK : row_end;
        for (eid_t k = begin + threadIdx.x; k < end; k += BLOCK) visit(v, indices[k]);
    }
}

// Top-down levels only: the candidates other parts sent here (n_rows slices of their
// maps, each n_words words from word word_lo, in part order) ORed; each unvisited one
// owned here is labelled, its parent marked -2 - r for the first row r holding it (that
// part kept the parent; bfs_level_parents reads it after the search).
extern "C" __global__ void bfs_level_merge(int* dist, vid_t* parent, vid_t lo, vid_t hi,
                                           unsigned* next_front, vid_t* queue_next,
                                           u64* tail_next, const u64* rows, int n_rows,
                                           i64 word_lo, i64 n_words, const int* modes,
                                           int level) {
    if (modes[level % MODE_RING] != MODE_TOP_DOWN) return;
    const i64 bits = n_words * 32;
    for (i64 t = global_tid(); t < bits; t += global_stride()) {
        const i64 k = t >> 5;
        const unsigned bit = 1u << (unsigned)(t & 31);
        int from = -1;
        for (int j = 0; j < n_rows && from < 0; ++j)
            if (reinterpret_cast<const unsigned*>(rows[j])[k] & bit) from = j;
        const i64 g = (word_lo + k) * 32 + (t & 31);
        const bool found = from >= 0 && g >= (i64)lo && g < (i64)hi && dist[g - lo] < 0;
        if (found) {
            dist[g - lo] = level + 1;
            if (parent) parent[g - lo] = (vid_t)(-2 - from);
            set_bit(next_front, g);
        }
        warp_enqueue(queue_next, tail_next, found, (vid_t)(found ? g - lo : 0));
    }
}

// After the search: a vertex labelled from row r's candidates (parent -2 - r) takes the
// parent that part kept for it (rows[r]: that part's remote_parent over this part's
// vertices, indexed by local id).
extern "C" __global__ void bfs_level_parents(vid_t* parent, i64 n_local, const u64* rows) {
    for (i64 v = global_tid(); v < n_local; v += global_stride()) {
        const vid_t p = parent[v];
        if (p <= (vid_t)-2) parent[v] = reinterpret_cast<const vid_t*>(rows[-2 - (i64)p])[v];
    }
}
