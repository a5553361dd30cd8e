// Direction-optimising BFS (Enterprise; Beamer's rule as the alternative) in one
// persistent kernel: the per-level direction choice is made by every block from the same
// frontier statistics, read after a grid barrier, so the host launches once instead of
// launching two kernels and reading the statistics back at every level.
//
// Per level L (frontier L in `queue` when top-down, labels dist == L in every case):
//   A. top-down: expand the queue with status writes (StatusVisit), the frontier's hubs
//      over the whole grid as one flat edge array (expand_rows_grid) where they fit its
//      table, or
//      bottom-up: every unvisited vertex looks for an in-neighbour at L;
//   -- grid barrier --
//   B. queue generation by scanning labels == L + 1 (queue_from_labels below): the next
//      queue (when a top-down level may follow), the hubs, and {vertices, edges, hubs};
//   -- grid barrier --
//   every block reads the statistics and applies the same rule.
// Statistics rotate over three slots: level L reads slot L % 3, fills (L + 1) % 3 and
// zeroes (L + 2) % 3, which nobody reads after level L - 1's decision and which level
// L + 1 fills (a fused level fills its slot in the same phase, so it must be zeroed one
// barrier earlier than phase A). Each block reads a slot once, after the barrier that
// completes it (block_stats), and keeps the figures for the next level.
//
// Fused levels (whenever the hub lists can be double-buffered, see below): a bottom-up
// level enqueues what it discovers itself instead of phase B re-scanning all n labels for
// L + 1. Only v's own thread can label v in a bottom-up step, so each thread remembers
// which of its vertices it labelled (one bit per grid-stride step) and then reserves their
// queue and hub slots; the level needs one grid barrier and no second pass over the
// labels. The next level's hubs are listed while this level may still read its own list,
// so the hub lists alternate between hub_queue[0, total_hubs) and [total_hubs, 2
// total_hubs) (a frontier holds at most total_hubs hubs; needs 2 total_hubs
// <= n, the buffer's length). A top-down level whose frontier has no hubs for the flat
// table claims each new vertex with an atomicCAS (ClaimVisit's rule: one winner, which sets
// the parent) and enqueues it at once, counting its out-edges and listing it if it is a
// hub, so again one grid barrier and no scan. Its queue cannot be the one it reads: the
// queues alternate between `queue` and the tail of hub_queue past the two hub lists, [2
// total_hubs, n), which is used only when the next frontier surely fits it (at most
// min(unvisited vertices, this frontier's out-edges) entries). Level 0's queue and
// statistics are written directly (the frontier is the source) instead of by a scan of all
// n labels. H200, 2026-11-22, Kronecker 21 ef16, beamer, 48 roots in one process: 170
// GTEPS without the three; fused bottom-up alone 1.073x, fused top-down 1.039x, source
// statistics 1.078x, all three 1.249x (212 GTEPS). Per level, phase B (the label scan) had
// cost 14-30 us, about half of each search; what is left is mostly the bottom-up levels
// (50-120 us for the largest) and the top-down level whose frontier has flat-table hubs
// (not fused).
// Measured and removed since (session 33 deleted the switches that kept them): a frontier
// bitmap written in phase B for the bottom-up probes (which disables the fused levels), a
// warp per long row in the bottom-up step (adopt_parent_warp), queue generation reserving
// slots per warp (reserve_two), no flat hub table, and dealing a top-down queue to blocks
// in runs of BLOCK entries instead of entry by entry (queue_index below).
// The map back (out_dist non-null): the search ran on a relabelled copy of the caller's
// graph (gpu/workspace.py, Workspace.degree_relabelled; new vertex i is old vertex
// out_perm[i], out_inverse[v] is old v's new id), and after the last level the same launch
// writes the labels, and the parents when out_parent is non-null, in the caller's ids
// (map_back.cuh; a second launch for it cost 1.047x, H200 Kronecker 21); the search's
// parents then need no initialisation.
// figures (non-null): after the last level block 0 writes {CSR entries out of reached
// vertices, largest label, 0}, what kernels/figures.cu's bfs_result_figures counts with a
// pass over all n labels, from the frontier statistics every level already sums (level
// 0's edges are the source's out-degree, each later level adds its frontier's m_f), so a
// search needs no second launch. H100 host, Kronecker 21: the second launch cost the
// caller 63 us of host time per search, more than a third of the search's GPU time.
// MG_BFS_PROFILE: block 0 stamps clock64() per level into mg_bfs_profile (read by
// benchmarks/bfs.py --profile-levels, in benchmarks/bfs_ab.py): row 0 the start, row L + 1
// level L (start, after phase A's barrier or 0 when fused, end, flags | n_f << 8); row 0
// column 3 when block 0 has done its share of the map back.
#include <morphgpu/adjacency.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/fingerprint.cuh>
#include <morphgpu/traversal/bottom_up.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/queue.cuh>
#include <morphgpu/traversal/visit.cuh>
#include <bfs/kernels/map_back.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 512
#endif
#ifndef MG_BFS_FLAT_HUBS
#define MG_BFS_FLAT_HUBS 1024
#endif
// A top-down level whose frontier's hubs go to the flat table is not fused: fusing it too
// (claims over the hubs' long rows instead of the scan of all n labels) was measured and
// removed (MG_BFS_FUSED_FLAT; Kronecker 21, H200: the scan it saved, ~8 us, went to the
// claims' atomics over the hubs' rows, and whole calls were no faster).
// Fused claims read the label before the atomicCAS (claim_label). Claiming without the
// read, always or only while fewer than half the vertices are labelled, was measured and
// removed (H200, 64 / 16 roots, one process): uniform 2^21 deg 32 1.26x / 1.10x faster,
// but uniform 2^22 deg 16 0.88x / 0.89x and 2^23 deg 8 0.82x / 0.82x, Kronecker equal.
// Dealing a top-down queue shorter than the grid out evenly over the blocks (instead of
// BLOCK entries each, which leaves blocks idle) was equal or slower everywhere (uniform
// 2^22 0.997x, Kronecker 21 / 22 0.99x / 1.00x).
// Fused bottom-up levels take a thread's unvisited vertices through the bottom-up step in
// batches of BU_BATCH, each probing BU_PROBE in-neighbours before the
// batch's rows without a hit are scanned side by side (adopt_parents_batch in
// traversal/bottom_up.cuh). 2 x 1 measured best (H100, 32 roots: 1.036x / 1.029x / 1.004x
// faster than 2 x 2 on Kronecker 21 / 22 / uniform 2^22; again with the rows side by
// side, session 35, H200: 2 x 2 0.97x-0.98x on Kronecker 20-23, 1.006x-1.014x on
// uniform). A pipeline that kept 4 vertices in flight per thread, each at its own
// stage (row bounds, an id, its label), was measured and deleted: H100, 32 roots, same
// process, the 2 x 1 batch 1.17x / 1.24x / 1.92x faster on Kronecker 21 / 22 / uniform
// 2^22 (uniform's widest bottom-up level 866-940 us against 282-297), and 4 x 2 or 6 x 1
// slots lost too, and so did a stream per lane (session 35, bu_stream.patch.txt: each
// lane's open rows one after another, 4 in-neighbours a round, the next row's bounds loaded
// ahead; H200, one process, against the batches: uniform 2^22 / 2^23 deg 8 0.79x / 0.61x,
// Kronecker 21 / 22 0.92x / 0.91x). So did Beamer's return with a second condition (back
// to top-down only where the frontier's out-edges also outnumber the unexplored ones):
// equal within noise, so the plain rule stays.
// (The batch and the probes were compile-time settings until session 36, which measured
// them once more, H200, 32 roots: a batch of 4 0.88x-0.96x on eight graphs, 2 probes
// 0.97x-1.00x.)
constexpr int BU_BATCH = 2;
constexpr int BU_PROBE = 1;
// bottom_up_end: bottom-up levels visit vertices [0, bottom_up_end) only; the caller
// passes one past the last vertex with an in-neighbour (gpu/workspace.py, Workspace.bottom_up_end),
// since a vertex without one can never adopt a parent. On a degree-relabelled symmetric
// graph that cuts off every isolated vertex (a Graph500 Kronecker graph has ~40 % of them).

using namespace mg;
using namespace mg::traversal;

// The queue entry a thread takes at loop position `base` (steps of gridDim.x * BLOCK, the
// same trip count for every block): a top-down level deals the queue out entry by entry
// (block b takes entries b, b + G, b + 2G, ... of each G * BLOCK stretch) rather than in
// runs of BLOCK, so a queue whose long rows sit together is shared by the grid: queue
// generation scans labels in id order, and a degree-relabelled graph numbers its hubs
// first, which put a level's heaviest rows on the first blocks (expand_gather gives a hub
// to the block that holds it).
__device__ __forceinline__ i64 queue_index(i64 base) {
    return base + (i64)threadIdx.x * gridDim.x + blockIdx.x;
}

constexpr int BLOCK = MG_BFS_BLOCK;

enum Rule { RULE_GAMMA = 0, RULE_BEAMER = 1, RULE_BOTTOM_UP = 2, RULE_TOP_DOWN = 3 };

#ifdef MG_BFS_PROFILE
constexpr int PROFILE_ROWS = 256;
__device__ unsigned long long mg_bfs_profile[PROFILE_ROWS][4];
__device__ __forceinline__ void profile_stamp(int row, int column, unsigned long long value) {
    if (blockIdx.x == 0 && threadIdx.x == 0 && row < PROFILE_ROWS)
        mg_bfs_profile[row][column] = value;
}
#else
__device__ __forceinline__ void profile_stamp(int, int, unsigned long long) {}
#endif

// A fused top-down level's visitor (see the header): ClaimVisit's claim, plus the
// statistics phase B would have gathered: the winner adds the new vertex's
// out-degree to its thread's *edges and lists it in hub_out if it is a hub (one atomic per
// hub; hubs are few); winners reserve queue slots per warp (warp_enqueue). (Collecting a
// block's claims in shared memory and reserving once per flush, MG_BFS_CLAIM_BUFFER, was
// measured and removed: H100, 32 roots, per-warp claims 1.026x / 1.015x faster on Kronecker
// 21 / 22, 0.977x on uniform 2^22. So were two short-row edges per thread per step, both
// labels read, then both claims, one reservation: session 35, claim_pairs.patch.txt; H200,
// one process, against one edge: uniform 2^22 1.027x, but 2^23 deg 8 / 2^21 deg 32 0.989x
// / 0.995x, Kronecker 21 / 22 / 20 ef32 / 23 1.003x / 0.988x / 1.009x / 0.998x.)
struct ClaimCountVisit {
    int* dist;
    vid_t* parent;  // may be null
    int next_level;
    vid_t* out_queue;
    u64* out_tail;
    Adjacency adj;
    i64 hub_degree;
    vid_t* hub_out;
    u64* hub_tail;
    i64* edges;  // the calling thread's running sum

    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const bool mine = claim_label(dist, dst, next_level);
        if (mine) {
            if (parent) parent[dst] = src;
            const i64 degree = adj.degree(dst);
            *edges += degree;
            if (degree > hub_degree) hub_out[atomicAdd(hub_tail, 1ull)] = dst;
        }
        warp_enqueue(out_queue, out_tail, mine, dst);
    }
};

// Steps of the grid-stride loop whose discoveries a thread remembers in one word before
// enqueueing them (longer loops go in chunks of this many steps), and how many label or
// degree loads a thread issues before using any.
constexpr int FUSED_STEPS = 64;
constexpr int LOAD_UNROLL = 8;
static_assert(LOAD_UNROLL % BU_BATCH == 0, "a batch never straddles two label loads");
static_assert(FUSED_STEPS % LOAD_UNROLL == 0 && FUSED_STEPS <= 64, "steps are bits of a u64");

// The out-degrees of the thread's vertices chunk + s * stride + threadIdx.x for the bits s
// of `found`, LOAD_UNROLL rows' bounds loaded before any is used: adds them to *edges and
// returns the bits of those above hub_degree.
__device__ __forceinline__ u64 found_degrees(const Adjacency& adj, u64 found, i64 chunk,
                                             i64 stride, i64 hub_degree, i64* edges) {
    u64 hub = 0ull;
    for (int s0 = 0; s0 < FUSED_STEPS; s0 += LOAD_UNROLL) {
        if (((found >> s0) & ((1ull << LOAD_UNROLL) - 1ull)) == 0ull) continue;
        i64 degree[LOAD_UNROLL];
#pragma unroll
        for (int t = 0; t < LOAD_UNROLL; ++t) {
            const i64 v = chunk + (s0 + t) * stride + threadIdx.x;
            degree[t] = (found >> (s0 + t)) & 1ull ? adj.degree(v) : 0;
        }
#pragma unroll
        for (int t = 0; t < LOAD_UNROLL; ++t) {
            *edges += degree[t];
            if (degree[t] > hub_degree) hub |= 1ull << (s0 + t);
        }
    }
    return hub;
}

// Block-wide. Lists the thread's vertices chunk + s * stride + threadIdx.x for the bits s
// of `found` in `queue` at slots below queue_cap (all of them are counted in
// next->vertices; queue_cap 0: no queue)
// and those of `hub` in hub_out, with ONE reservation per block for both lists: a prefix
// sum of the packed counts (a thread's are <= 64, a block's < 2^32) and two independent
// atomics. (Reserving at every grid step, reserve_two, cost two __syncthreads and a global
// atomic round trip per step: ~10 round trips per thread on Kronecker 21, ~30 on uniform
// 2^22, in every level that lists its frontier.) Within a block's stretch the entries are
// in thread-major order: any order is a valid queue, and top-down levels deal the queue
// out entry by entry (queue_index).
template <int BLOCK>
__device__ void list_found(u64 found, u64 hub, i64 chunk, i64 stride, vid_t* queue,
                          i64 queue_cap, vid_t* hub_out, FrontierStats* next) {
    __shared__ u64 block_base[2];
    const u64 packed = ((u64)__popcll(found) << 32) | (u64)__popcll(hub);
    u64 total;
    const u64 offset = block_exclusive_sum<BLOCK, u64>(packed, &total);
    if (threadIdx.x == 0) {
        const u64 n_found = total >> 32, n_hubs = total & 0xffffffffull;
        block_base[0] = n_found ? atomicAdd(&next->vertices, n_found) : 0ull;
        block_base[1] = n_hubs ? atomicAdd(&next->hubs, n_hubs) : 0ull;
    }
    __syncthreads();
    i64 slot = (i64)(block_base[0] + (offset >> 32));
    i64 hub_slot = (i64)(block_base[1] + (offset & 0xffffffffull));
    const bool write_queue = slot < queue_cap;
    for (u64 bits = write_queue ? found : hub; bits != 0ull; bits &= bits - 1ull) {
        const int s = __ffsll((long long)bits) - 1;
        const vid_t v = (vid_t)(chunk + s * stride + threadIdx.x);
        if (write_queue && slot < queue_cap) queue[slot] = v;
        ++slot;
        if ((hub >> s) & 1ull) hub_out[hub_slot++] = v;
    }
    __syncthreads();  // block_base is rewritten by the next call
}

// Block-wide. One bottom-up level that also builds the next frontier (see the header):
// pass 1 reads the labels of the thread's vertices, LOAD_UNROLL at a time, and runs the
// bottom-up step over the unvisited ones with no block barrier (a long row delays only its
// own warp), setting bit s for each vertex it labelled; pass 2 sums their out-degrees and
// lists them (list_found).
template <int BLOCK>
__device__ void bottom_up_enqueue(const Adjacency& adj, const Adjacency& rev, int* dist,
                                  vid_t* parent, i64 end, int level,
                                  vid_t* queue, i64 queue_cap, vid_t* hub_out,
                                  FrontierStats* next, i64 hub_degree) {
    const i64 stride = (i64)gridDim.x * BLOCK;
    i64 edges = 0;
    for (i64 chunk = (i64)blockIdx.x * BLOCK; chunk < end; chunk += FUSED_STEPS * stride) {
        u64 open = 0ull;
        for (int s0 = 0; s0 < FUSED_STEPS; s0 += LOAD_UNROLL) {
            if (chunk + s0 * stride >= end) break;  // block-uniform
            int label[LOAD_UNROLL];
#pragma unroll
            for (int t = 0; t < LOAD_UNROLL; ++t) {
                const i64 v = chunk + (s0 + t) * stride + threadIdx.x;
                label[t] = v < end ? __ldcg(dist + v) : 0;
            }
#pragma unroll
            for (int t = 0; t < LOAD_UNROLL; ++t)
                if (label[t] == -1) open |= 1ull << (s0 + t);
        }
        const i64 v0 = chunk + threadIdx.x;
        u64 labelled = 0ull;
        constexpr int BATCH = BU_BATCH;
        for (int t = 0; t < FUSED_STEPS && (open >> t) != 0ull; t += BATCH) {
            const unsigned mine = (unsigned)(open >> t) & ((1u << BATCH) - 1u);
            if (mine == 0u) continue;
            labelled |= (u64)adopt_parents_batch<BATCH, BU_PROBE>(
                            rev, dist, parent, v0 + t * stride, stride, mine, level,
                            (const unsigned*)nullptr)
                        << t;
        }
        const u64 hub = found_degrees(adj, labelled, chunk, stride, hub_degree, &edges);
        list_found<BLOCK>(labelled, hub, chunk, stride, queue, queue_cap, hub_out, next);
    }
    i64 block_edges;
    block_exclusive_sum<BLOCK, i64>(edges, &block_edges);
    if (threadIdx.x == 0 && block_edges) atomicAdd(&next->edges, (u64)block_edges);
}

// Block-wide. Phase B: lists the vertices labelled `level` (in `queue` below queue_cap,
// always counted in next->vertices), the hubs among them in hub_out, and sums their
// out-degrees. The scan it replaced (queue_from_status, since deleted) reserved slots at
// every grid step (per step: a label load, the degree loads, two __syncthreads and a
// global atomic round trip by thread 0), which made the scan a chain of ~50 round trips
// per thread on Kronecker 21 (17-20 us of the level, H100). Here a thread loads the
// labels of up to FUSED_STEPS of its vertices LOAD_UNROLL at a time, then their degrees,
// and lists them with one reservation per block (list_found).
template <int BLOCK>
__device__ void queue_from_labels(const int* dist, const Adjacency& adj, i64 n, int level,
                                  vid_t* queue, i64 queue_cap, vid_t* hub_out,
                                  FrontierStats* next, i64 hub_degree) {
    const i64 stride = (i64)gridDim.x * BLOCK;
    i64 edges = 0;
    for (i64 chunk = (i64)blockIdx.x * BLOCK; chunk < n; chunk += FUSED_STEPS * stride) {
        u64 in = 0ull;
        for (int s0 = 0; s0 < FUSED_STEPS; s0 += LOAD_UNROLL) {
            if (chunk + s0 * stride >= n) break;  // block-uniform
            int label[LOAD_UNROLL];
#pragma unroll
            for (int t = 0; t < LOAD_UNROLL; ++t) {
                const i64 v = chunk + (s0 + t) * stride + threadIdx.x;
                label[t] = v < n ? __ldcg(dist + v) : -1;
            }
#pragma unroll
            for (int t = 0; t < LOAD_UNROLL; ++t)
                if (label[t] == level) in |= 1ull << (s0 + t);
        }
        const u64 hub = found_degrees(adj, in, chunk, stride, hub_degree, &edges);
        list_found<BLOCK>(in, hub, chunk, stride, queue, queue_cap, hub_out, next);
    }
    i64 block_edges;
    block_exclusive_sum<BLOCK, i64>(edges, &block_edges);
    if (threadIdx.x == 0 && block_edges) atomicAdd(&next->edges, (u64)block_edges);
}

// A frontier's statistics as every thread of the block sees them: thread 0 reads the
// slot (its words are summed by global atomics during the level, complete after the grid
// barrier) and hands it on through shared memory. Every thread reading the slot itself
// made each word a load by every warp of the grid to one address: ~4,200 warps x 6 words
// per top-down level, served one after another by one L2 slice. Called right after a grid
// barrier (which ends with a __syncthreads, so no thread still reads the previous
// broadcast).
__device__ __forceinline__ FrontierStats block_stats(const FrontierStats* slot) {
    __shared__ u64 words[3];
    if (threadIdx.x == 0) {
        words[0] = load_volatile(&slot->vertices);
        words[1] = load_volatile(&slot->edges);
        words[2] = load_volatile(&slot->hubs);
    }
    __syncthreads();
    return FrontierStats{words[0], words[1], words[2]};
}

// Two blocks per SM, as before the warp bottom-up existed: without the minimum ptxas
// squeezes the kernel to 40 registers and spills.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK, 2)
bfs_direction_persistent(MG_ADJ_PARAMS(graph), MG_ADJ_PARAMS(reverse), int* dist, vid_t* parent,
                         vid_t* queue, vid_t* hub_queue, u64* stats_slots, i64 n,
                         vid_t source, i64 hub_degree, i64 total_hubs, i64 total_edges,
                         int rule, float gamma, float alpha, float beta,
                         i64 bottom_up_end,
                         const vid_t* __restrict__ out_perm,
                         const vid_t* __restrict__ out_inverse, int* out_dist,
                         vid_t* out_parent, u64* figures,
                         const mg::FingerprintCheck* __restrict__ check, u64 check_seq,
                         unsigned* barrier_state) {
    __shared__ GatherScratch<BLOCK> gather;
    __shared__ FlatRows<MG_BFS_FLAT_HUBS> flat_rows;  // the top-down levels' hub rows
    // A cached CuPy matrix's fingerprint check (graph_cache), when the caller passes one:
    // run first and published to the host by the last block through it, so the host's
    // wait for the answer ends while the levels run, and the check needs no launch of its
    // own ahead of this cooperative one.
    if (check) mg::fingerprint_run<BLOCK>(check, check_seq);
    GridBarrier bar(barrier_state);
    FrontierStats* stats = reinterpret_cast<FrontierStats*>(stats_slots);
    const Adjacency adj = MG_ADJ(graph);  // out-edges (CSR, or the paged layout: MG_PAGED)
    const Adjacency rev = MG_ADJ(reverse);  // in-edges (the same graph when symmetric)

#ifdef MG_BFS_PROFILE
    profile_stamp(0, 0, clock64());
#endif
    // Hub lists of frontier L: hubs_of(L) (alternating halves when double-buffered, which
    // the fused levels need; see the header).
    const bool double_hubs = 2 * total_hubs <= n;
    auto hubs_of = [&](int level) {
        return double_hubs && (level & 1) ? hub_queue + total_hubs : hub_queue;
    };
    // The second queue of fused top-down levels, and where the current frontier is.
    vid_t* const queue_b = hub_queue + 2 * total_hubs;
    const i64 queue_b_cap = double_hubs ? n - 2 * total_hubs : 0;
    vid_t* cur_queue = queue;
    i64 visited = 1;  // vertices labelled so far (each is in exactly one frontier)
    // With the map back, only reached vertices' parents are read (by the tail), so the
    // search's parent array needs no initialisation beyond the source.
    const bool init_parents = parent && !out_parent;
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        dist[v] = v == (i64)source ? 0 : -1;
        if (init_parents) parent[v] = v == (i64)source ? source : (vid_t)-1;
    }
    if (parent && !init_parents && global_tid() == 0) parent[source] = source;
    if (blockIdx.x == 0 && threadIdx.x < 9) {
        u64 word = 0ull;  // slot 0 = {vertices, edges, hubs} of level 0: the source alone
        if (threadIdx.x < 3) {
            const i64 degree = adj.degree(source);
            word = threadIdx.x == 0 ? 1ull
                 : threadIdx.x == 1 ? (u64)degree : (u64)(degree > hub_degree);
            if (threadIdx.x == 0) queue[0] = source;
            if (threadIdx.x == 2 && degree > hub_degree) hubs_of(0)[0] = source;
        }
        stats_slots[threadIdx.x] = word;
    }
    grid_sync(bar);
#ifdef MG_BFS_PROFILE
    profile_stamp(0, 2, clock64());
#endif

    bool bottom_up = rule == RULE_BOTTOM_UP;
    // The current frontier's statistics, carried from the read after the level that made it.
    FrontierStats frontier = block_stats(&stats[0]);
    i64 reached_edges = (i64)frontier.edges;
    i64 unexplored = total_edges - reached_edges;
    int last_level = 0;
    for (int level = 0;; ++level) {
        FrontierStats* next = &stats[(level + 1) % 3];
        FrontierStats* after_next = &stats[(level + 2) % 3];
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            after_next->vertices = 0ull;
            after_next->edges = 0ull;
            after_next->hubs = 0ull;
        }
#ifdef MG_BFS_PROFILE
        profile_stamp(level + 1, 0, clock64());
#endif
        // A top-down level may follow unless Enterprise's one-way switch has happened.
        const bool keep_queue = rule == RULE_TOP_DOWN || rule == RULE_BEAMER || !bottom_up;
        // The slots of frontier L + 1 that a later level can read. After a bottom-up level
        // under Beamer's rule only a frontier below n / beta sends the search back to
        // top-down, and then it fits below ceil(n / beta); a wider one is never read as a
        // queue, so its entries past that are not written. (Uniform 2^22's widest bottom-up
        // level finds 3.1M vertices, 13x the cap. H200, 16-32 roots, one process, against
        // writing them all: uniform 2^22 / 2^21 deg 32 / 2^23 deg 8 1.063x / 1.024x /
        // 1.072x, Kronecker 21 / 22 1.042x / 1.071x, Kronecker 20 ef32 / 23 ef8 1.002x /
        // 1.079x faster.)
        i64 queue_cap = keep_queue && rule != RULE_BOTTOM_UP ? n : 0;
        if (bottom_up && rule == RULE_BEAMER) {
            const double bound = (double)n / beta;
            if (bound >= 0.0 && bound < (double)n) queue_cap = (i64)ceil(bound);
        }
        bool fused = bottom_up && double_hubs;
        vid_t* written_queue = queue;  // where this level's frontier L + 1 goes
        if (!bottom_up) {
            const StatusVisit visit{dist, parent, level + 1};
            const i64 n_queue = (i64)frontier.vertices;
            // The frontier's hubs (degree > hub_degree, listed in hub_queue by the same
            // queue generation that wrote the queue) go to the whole grid at once when
            // they fit the flat table; the queue's other rows to expand_gather.
            const i64 n_hubs = (i64)frontier.hubs;
            const bool flat = n_hubs > 0 && n_hubs <= MG_BFS_FLAT_HUBS;
            if (double_hubs && !flat) {
                const i64 out_edges = (i64)frontier.edges;
                const i64 bound = n - visited < out_edges ? n - visited : out_edges;
                fused = cur_queue != queue || bound <= queue_b_cap;
            }
            if (fused) {
                written_queue = cur_queue == queue ? queue_b : queue;
                i64 edges = 0;
                const ClaimCountVisit claim{dist, parent, level + 1, written_queue,
                                            &next->vertices, adj, hub_degree,
                                            hubs_of(level + 1), &next->hubs, &edges};
                for (i64 base = 0; base < n_queue; base += (i64)gridDim.x * BLOCK) {
                    const i64 i = queue_index(base);
                    const bool has = i < n_queue;
                    const vid_t v = has ? cur_queue[i] : (vid_t)0;
                    expand_gather<BLOCK>(gather, adj, has, v, claim);
                }
                i64 block_edges;
                block_exclusive_sum<BLOCK, i64>(edges, &block_edges);
                if (threadIdx.x == 0 && block_edges) atomicAdd(&next->edges, (u64)block_edges);
            } else {
                if (flat)
                    expand_rows_grid<BLOCK, MG_BFS_FLAT_HUBS>(flat_rows, adj,
                                                              hubs_of(level), n_hubs, visit);
                for (i64 base = 0; base < n_queue; base += (i64)gridDim.x * BLOCK) {
                    const i64 i = queue_index(base);
                    bool has = i < n_queue;
                    const vid_t v = has ? cur_queue[i] : (vid_t)0;
                    if (flat && has) has = adj.degree(v) <= hub_degree;
                    expand_gather<BLOCK>(gather, adj, has, v, visit);
                }
            }
        } else {
            if (fused) {
                bottom_up_enqueue<BLOCK>(adj, rev, dist, parent, bottom_up_end, level,
                                         queue, queue_cap,
                                         hubs_of(level + 1), next, hub_degree);
            } else {
                for (i64 v = global_tid(); v < bottom_up_end; v += global_stride()) {
                    if (__ldcg(dist + v) == -1)
                        adopt_parent(rev, dist, parent, (vid_t)v, level);
                }
            }
        }
        if (!fused) {
            grid_sync(bar);
#ifdef MG_BFS_PROFILE
            profile_stamp(level + 1, 1, clock64());
#endif
            queue_from_labels<BLOCK>(dist, adj, n, level + 1, queue, queue_cap,
                                     hubs_of(level + 1), next, hub_degree);
        }
        grid_sync(bar);
        frontier = block_stats(next);
        const i64 n_f = (i64)frontier.vertices;
        const i64 m_f = (i64)frontier.edges;
        const i64 hubs = (i64)frontier.hubs;
#ifdef MG_BFS_PROFILE
        profile_stamp(level + 1, 2, clock64());
        profile_stamp(level + 1, 3, (unsigned long long)(bottom_up ? 1 : 0) | (fused ? 2ull : 0ull)
                                        | ((unsigned long long)n_f << 8));
#endif
        if (n_f == 0) {
            last_level = level;
            break;
        }
        cur_queue = written_queue;
        visited += n_f;
        unexplored -= m_f;
        reached_edges += m_f;
        if (rule == RULE_GAMMA) {
            if (!bottom_up && total_hubs > 0 && (double)hubs > gamma * (double)total_hubs)
                bottom_up = true;
        } else if (rule == RULE_BEAMER) {
            if (!bottom_up && (double)m_f > (double)unexplored / alpha) bottom_up = true;
            else if (bottom_up && (double)n_f < (double)n / beta) bottom_up = false;
        }
    }
    // The map back (see the header): every block left the loop after the same barrier, so
    // every label and parent is written.
    if (out_dist)
        bfs::map_back(dist, parent, out_perm, out_inverse, n, bottom_up_end, source, out_dist,
                      out_parent);
#ifdef MG_BFS_PROFILE
    profile_stamp(0, 3, clock64());  // block 0's share of the map back done
#endif
    if (figures && blockIdx.x == 0 && threadIdx.x == 0) {
        figures[0] = (u64)reached_edges;
        figures[1] = (u64)last_level;
        figures[2] = 0ull;
    }
}
