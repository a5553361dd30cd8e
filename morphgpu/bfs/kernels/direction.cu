// Direction-optimising BFS (Enterprise; Beamer's rule as the alternative) in one
// persistent kernel: the per-level direction choice is made by every block from the same
// frontier statistics, read after a grid barrier, so the host launches once instead of
// launching two kernels and reading the statistics back at every level.
//
// Per level L (frontier L in `queue` when top-down, labels dist == L in every case):
//   A. top-down: expand the queue with status writes (StatusVisit), or
//      bottom-up: every unvisited vertex looks for an in-neighbour at L, with the
//      frontier's hubs cached in shared memory (HubCache);
//   -- grid barrier --
//   B. queue generation by scanning labels == L + 1 (queue_from_labels below): the next
//      queue (when a top-down level may follow), the hubs, and {vertices, edges, hubs};
//   -- grid barrier --
//   every block reads the statistics and applies the same rule.
// flat_hubs: a top-down level expands the frontier's hubs over the whole grid as one flat
// edge array (expand_rows_grid) instead of one block per hub.
// The frontier bitmap: every level also writes its new frontier as a bitmap (bit v % 32 of
// word v / 32), and bottom-up probes test an in-neighbour's bit instead of its label
// (traversal/bottom_up.cuh, on_frontier): n / 8 bytes instead of 4 n (512 KB against 16 MB
// on uniform 2^22), so a probe's word is often in the SM's L1 (plain loads; the barrier's
// acquire fence drops stale lines) and always in L2, where the labels, scattered over 16 MB
// while the rows stream 200+ MB through L2, are not. Writers: a fused top-down claim sets
// its vertex's bit (atomicOr, no return); a fused bottom-up level and the label scan store
// one ballot word per warp and grid step (a warp's lanes hold 32 consecutive vertices).
// Three buffers rotate like the statistics: level L reads bits_of(L), sets bits_of(L + 1)
// and zeroes bits_of(L + 2), which level L - 1 read and level L + 1 sets, each access
// ordered by the grid barriers between levels. (Measured before the fused levels existed,
// a bitmap written by a separate label scan cost 18 % on Kronecker 21: the scan, not the
// probes; it was then an option and off, and the fused levels skipped it.)
// Statistics rotate over three slots: level L reads slot L % 3, fills (L + 1) % 3 and
// zeroes (L + 2) % 3, which nobody reads after level L - 1's decision and which level
// L + 1 fills (a fused level fills its slot in the same phase, so it must be zeroed one
// barrier earlier than phase A). Each block reads a slot once, after the barrier that
// completes it (block_stats), and keeps the figures for the next level.
//
// MG_BFS_FUSED_BOTTOM_UP (when the hub lists can be double-buffered, see below, and neither
// the bitmap nor the warp bottom-up is on): a bottom-up level enqueues what it discovers
// itself instead of phase B re-scanning all n labels for L + 1. Only v's own thread can
// label v in a bottom-up step, so each thread remembers which of its vertices it labelled
// (one bit per grid-stride step) and then reserves their queue and hub slots; the level
// needs one grid barrier and no second pass over the labels. The next level's hubs must
// not overwrite the list this level's caches are still being filled from, so the hub lists
// alternate between hub_queue[0, total_hubs) and [total_hubs, 2 total_hubs) (a frontier
// holds at most total_hubs hubs; needs 2 total_hubs <= n, the buffer's length).
// MG_BFS_FUSED_TOP_DOWN (double-buffered hubs, no bitmap): a top-down level whose frontier
// has no hubs for the flat table claims each new vertex with an atomicCAS (ClaimVisit's
// rule: one winner, which sets the parent) and enqueues it at once, counting its out-edges
// and listing it if it is a hub, so again one grid barrier and no scan. Its queue cannot
// be the one it reads: the queues alternate between `queue` and the tail of hub_queue past
// the two hub lists, [2 total_hubs, n), which is used only when the next frontier surely
// fits it (at most min(unvisited vertices, this frontier's out-edges) entries).
// Level 0's queue and statistics are written directly (the frontier is the source) instead
// of by a scan of all n labels (MG_BFS_SOURCE_STATS, now always).
// The three were measured against the path before them (0 gave it). H200, 2026-11-22,
// Kronecker 21 ef16, beamer, 48 roots in one process (scripts/bfs_profile.py): 170 GTEPS without
// them; fused bottom-up alone 1.073x, fused top-down 1.039x, source statistics 1.078x, all
// three 1.249x (212 GTEPS). Per level, phase B (the label scan) had cost 14-30 us, about
// half of each search; what is left is mostly the bottom-up levels (50-120 us for the
// largest) and the top-down level whose frontier has flat-table hubs (not fused).
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
#include <morphgpu/traversal/bottom_up.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/queue.cuh>
#include <morphgpu/traversal/visit.cuh>
#include <bfs/kernels/map_back.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 512
#endif
#ifndef MG_BFS_HUB_SLOTS
#define MG_BFS_HUB_SLOTS 1024
#endif
#ifndef MG_BFS_FLAT_HUBS
#define MG_BFS_FLAT_HUBS 1024
#endif
#ifndef MG_BFS_FUSED_BOTTOM_UP
#define MG_BFS_FUSED_BOTTOM_UP 1
#endif
#ifndef MG_BFS_FUSED_TOP_DOWN
#define MG_BFS_FUSED_TOP_DOWN 1
#endif
// A top-down level whose frontier's hubs go to the flat table is not fused: fusing it too
// (claims over the hubs' long rows instead of the scan of all n labels) was measured and
// removed (MG_BFS_FUSED_FLAT; Kronecker 21, H200: the scan it saved, ~8 us, went to the
// claims' atomics over the hubs' rows, and whole calls were no faster).
// Fused bottom-up levels take a thread's unvisited vertices through the bottom-up step in
// batches of MG_BFS_BU_BATCH, each probing MG_BFS_BU_PROBE in-neighbours before finishing
// its row alone (adopt_parents_batch in traversal/bottom_up.cuh). 2 x 1 measured best
// (H100, 32 roots: 1.036x / 1.029x / 1.004x faster than 2 x 2 on Kronecker 21 / 22 /
// uniform 2^22). A pipeline that kept 4 vertices in flight per thread, each at its own
// stage (row bounds, an id, its label), was measured and deleted: H100, 32 roots, same
// process, the 2 x 1 batch 1.17x / 1.24x / 1.92x faster on Kronecker 21 / 22 / uniform
// 2^22 (uniform's widest bottom-up level 866-940 us against 282-297), and 4 x 2 or 6 x 1
// slots lost too. So did Beamer's return with a second condition (back to top-down only
// where the frontier's out-edges also outnumber the unexplored ones): equal within noise,
// so the plain rule stays.
#ifndef MG_BFS_BU_BATCH
#define MG_BFS_BU_BATCH 2
#endif
#ifndef MG_BFS_BU_PROBE
#define MG_BFS_BU_PROBE 1
#endif
// bottom_up_end: bottom-up levels visit vertices [0, bottom_up_end) only; the caller
// passes one past the last vertex with an in-neighbour (gpu/workspace.py, Workspace.bottom_up_end),
// since a vertex without one can never adopt a parent. On a degree-relabelled symmetric
// graph that cuts off every isolated vertex (a Graph500 Kronecker graph has ~40 % of them).
// MG_BFS_SPREAD_QUEUE=1: a top-down level deals the queue out entry by entry (block b takes
// entries b, b + G, b + 2G, ... of each G * BLOCK stretch) instead of in runs of BLOCK, so a
// queue whose long rows sit together is shared by the grid: queue generation scans labels
// in id order, and a degree-relabelled graph (gpu.RELABEL) numbers its hubs first, which
// put a level's heaviest rows on the first blocks (expand_gather gives a hub to the block
// that holds it).
#ifndef MG_BFS_SPREAD_QUEUE
#define MG_BFS_SPREAD_QUEUE 0
#endif

using namespace mg;
using namespace mg::traversal;

// The first loop position of this block over a queue, and the entry its thread takes at
// loop position `base` (steps of gridDim.x * BLOCK; block-uniform trip counts either way).
__device__ __forceinline__ i64 queue_start() {
    return MG_BFS_SPREAD_QUEUE ? 0 : (i64)blockIdx.x * MG_BFS_BLOCK;
}
__device__ __forceinline__ i64 queue_index(i64 base) {
    return MG_BFS_SPREAD_QUEUE ? base + (i64)threadIdx.x * gridDim.x + blockIdx.x
                               : base + threadIdx.x;
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

// A fused top-down level's visitor for the rows of 32 edges or more (see the header;
// shorter rows go to claim_short_rows): ClaimVisit's claim, plus the statistics the label
// scan would have gathered: the winner sets its bit in the next frontier's bitmap, adds the
// new vertex's out-degree to its thread's *edges and lists it in hub_out if it is a hub
// (one atomic per hub; hubs are few); winners reserve queue slots per warp (warp_enqueue).
// (Collecting a block's claims in shared memory and reserving once per flush,
// MG_BFS_CLAIM_BUFFER, was measured and removed: H100, 32 roots, per-warp claims 1.026x /
// 1.015x faster on Kronecker 21 / 22, 0.977x on uniform 2^22.)
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
    unsigned* next_bits;  // the next frontier's bitmap (zeroed before the level)

    __device__ __forceinline__ void operator()(vid_t src, vid_t dst) const {
        const bool mine = claim_label(dist, dst, next_level);
        if (mine) {
            if (parent) parent[dst] = src;
            set_frontier_bit(next_bits, dst);
            const i64 degree = adj.degree(dst);
            *edges += degree;
            if (degree > hub_degree) hub_out[atomicAdd(hub_tail, 1ull)] = dst;
        }
        warp_enqueue(out_queue, out_tail, mine, dst);
    }
};

// Edges a thread of a fused top-down level claims together in claim_short_rows.
#ifndef MG_BFS_CLAIM_BATCH
#define MG_BFS_CLAIM_BATCH 4
#endif

// Block-wide, after gather_long_rows (so every row left is shorter than 32 edges): the
// short rows of a fused top-down level laid end to end by a block-wide prefix sum, as in
// expand_gather's scan phase, but each thread claims MG_BFS_CLAIM_BATCH edges per pass with
// each memory step issued for all of them before any is used: their ids, their labels
// (the plain read that filters visited vertices), the atomicCAS of those still unvisited,
// the winners' row bounds; then one queue reservation per warp for all its winners. One
// edge per pass (expand_gather) made a level a chain of ~10 passes per thread, each ~5
// dependent global round trips plus a same-address atomic per warp: uniform 2^22's
// top-down level of 1.27M edges took 132 us (H100) while moving ~100 MB. What a winner
// does is ClaimCountVisit's; duplicates among a thread's edges are settled by the CAS
// (the thread's own atomics on one address are ordered).
template <int BLOCK>
__device__ void claim_short_rows(GatherScratch<BLOCK>& s, const Adjacency& adj, eid_t b,
                                 eid_t e, vid_t v, const ClaimCountVisit& c) {
    constexpr int BATCH = MG_BFS_CLAIM_BATCH;
    static_assert(BATCH >= 1 && BATCH <= 8, "a thread's winners are bits of a byte");
    i64 total;
    const i64 offset = block_exclusive_sum<BLOCK, i64>((i64)(e - b), &total);
    s.offset[threadIdx.x] = offset;
    s.begin[threadIdx.x] = b;
    s.src[threadIdx.x] = v;
    __syncthreads();
    const unsigned lane = lane_id();
    for (i64 base = 0; base < total; base += (i64)BATCH * BLOCK) {  // block-uniform
        vid_t src[BATCH], dst[BATCH];
        unsigned live = 0u;
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            const i64 k = base + (i64)j * BLOCK + threadIdx.x;
            src[j] = dst[j] = 0;
            if (k < total) {
                // The last thread whose offset is <= k owns edge k (empty rows share the
                // offset of the next row, so the search skips past them).
                int lo = 0, hi = BLOCK - 1;
                while (lo < hi) {
                    const int mid = (lo + hi + 1) >> 1;
                    if (s.offset[mid] <= k) lo = mid; else hi = mid - 1;
                }
                src[j] = s.src[lo];
                dst[j] = adj.at(s.begin[lo] + (eid_t)(k - s.offset[lo]));
                live |= 1u << j;
            }
        }
        int seen[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; ++j)
            seen[j] = (live >> j) & 1u ? load_volatile(c.dist + dst[j]) : 0;
        unsigned won = 0u;
#pragma unroll
        for (int j = 0; j < BATCH; ++j)
            if (seen[j] == -1 && atomicCAS(c.dist + dst[j], -1, c.next_level) == -1)
                won |= 1u << j;
        i64 degree[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; ++j) degree[j] = (won >> j) & 1u ? adj.degree(dst[j]) : 0;
#pragma unroll
        for (int j = 0; j < BATCH; ++j) {
            if (!((won >> j) & 1u)) continue;
            if (c.parent) c.parent[dst[j]] = src[j];
            set_frontier_bit(c.next_bits, dst[j]);
            *c.edges += degree[j];
            if (degree[j] > c.hub_degree) c.hub_out[atomicAdd(c.hub_tail, 1ull)] = dst[j];
        }
        // The warp's winners: an inclusive scan of the lanes' counts, one reservation.
        const unsigned count = (unsigned)__popc(won);
        unsigned upto = count;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned below = __shfl_up_sync(0xffffffffu, upto, d);
            if ((int)lane >= d) upto += below;
        }
        const unsigned warp_total = __shfl_sync(0xffffffffu, upto, 31);
        u64 first = 0ull;
        if (lane == 31u && warp_total) first = atomicAdd(c.out_tail, (u64)warp_total);
        first = __shfl_sync(0xffffffffu, first, 31);
        u64 slot = first + (upto - count);
#pragma unroll
        for (int j = 0; j < BATCH; ++j)
            if ((won >> j) & 1u) c.out_queue[slot++] = dst[j];
    }
    __syncthreads();
}

// Steps of the grid-stride loop whose discoveries a thread remembers in one word before
// enqueueing them (longer loops go in chunks of this many steps), and how many label or
// degree loads a thread issues before using any.
constexpr int FUSED_STEPS = 64;
constexpr int LOAD_UNROLL = 8;
static_assert(LOAD_UNROLL % MG_BFS_BU_BATCH == 0, "a batch never straddles two label loads");
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
// of `found` in `queue` (when write_queue; they are counted in next->vertices either way)
// and in the bitmap next_bits (one ballot word per warp and step: chunk and stride are
// multiples of 32, so a warp's lanes hold the 32 vertices of one word, which no other
// warp writes in this level), and those of `hub` in hub_out, with ONE reservation per
// block for both lists: a prefix
// sum of the packed counts (a thread's are <= 64, a block's < 2^32) and two independent
// atomics. (Reserving at every grid step, reserve_two, cost two __syncthreads and a global
// atomic round trip per step: ~10 round trips per thread on Kronecker 21, ~30 on uniform
// 2^22, in every level that lists its frontier.) Within a block's stretch the entries are
// in thread-major order: any order is a valid queue, and top-down levels deal the queue
// out entry by entry (MG_BFS_SPREAD_QUEUE).
template <int BLOCK>
__device__ void list_found(u64 found, u64 hub, i64 chunk, i64 stride, vid_t* queue,
                          bool write_queue, vid_t* hub_out, FrontierStats* next,
                          unsigned* next_bits) {
    static_assert(BLOCK % 32 == 0, "a warp's lanes are one bitmap word");
    __shared__ u64 block_base[2];
    // The steps where some lane of the warp found a vertex (a butterfly OR), one word each.
    u64 any = found;
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) any |= __shfl_xor_sync(0xffffffffu, any, d);
    for (; any != 0ull; any &= any - 1ull) {  // warp-uniform
        const int s = __ffsll((long long)any) - 1;
        const unsigned word = __ballot_sync(0xffffffffu, (found >> s) & 1ull);
        if (lane_id() == 0u) next_bits[(chunk + s * stride + threadIdx.x) >> 5] = word;
    }
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
    for (u64 bits = write_queue ? found : hub; bits != 0ull; bits &= bits - 1ull) {
        const int s = __ffsll((long long)bits) - 1;
        const vid_t v = (vid_t)(chunk + s * stride + threadIdx.x);
        if (write_queue) queue[slot++] = v;
        if ((hub >> s) & 1ull) hub_out[hub_slot++] = v;
    }
    __syncthreads();  // block_base is rewritten by the next call
}

// Block-wide. One bottom-up level that also builds the next frontier (see the header):
// pass 1 reads the labels of the thread's vertices, LOAD_UNROLL at a time, and runs the
// bottom-up step over the unvisited ones with no block barrier (a long row delays only its
// own warp), setting bit s for each vertex it labelled; pass 2 sums their out-degrees and
// lists them (list_found).
template <int BLOCK, typename Cache>
__device__ void bottom_up_enqueue(const Adjacency& adj, const Adjacency& rev, int* dist,
                                  vid_t* parent, i64 end, int level, const Cache* cache,
                                  const unsigned* frontier_bits, unsigned* next_bits,
                                  vid_t* queue, bool write_queue, vid_t* hub_out,
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
        constexpr int BATCH = MG_BFS_BU_BATCH;
        for (int t = 0; t < FUSED_STEPS && (open >> t) != 0ull; t += BATCH) {
            const unsigned mine = (unsigned)(open >> t) & ((1u << BATCH) - 1u);
            if (mine == 0u) continue;
            labelled |= (u64)adopt_parents_batch<BATCH, MG_BFS_BU_PROBE>(
                            rev, dist, parent, v0 + t * stride, stride, mine, level, cache,
                            frontier_bits)
                        << t;
        }
        const u64 hub = found_degrees(adj, labelled, chunk, stride, hub_degree, &edges);
        list_found<BLOCK>(labelled, hub, chunk, stride, queue, write_queue, hub_out, next,
                          next_bits);
    }
    i64 block_edges;
    block_exclusive_sum<BLOCK, i64>(edges, &block_edges);
    if (threadIdx.x == 0 && block_edges) atomicAdd(&next->edges, (u64)block_edges);
}

// Block-wide. Phase B: lists the vertices labelled `level` (in `queue` when write_queue,
// always counted in next->vertices, always in the bitmap next_bits), the hubs among them
// in hub_out, and sums their out-degrees. The scan before it (queue_from_status, deleted
// with the bitmap option) reserved slots at every grid step (per step: a label load, the
// degree loads, two __syncthreads and a global atomic round trip by thread 0), which made
// the scan a chain of ~50 round trips per thread on Kronecker 21 (17-20 us of the level,
// H100). Here a thread loads the labels of up to
// FUSED_STEPS of its vertices LOAD_UNROLL at a time, then their degrees, and lists them
// with one reservation per block (list_found).
template <int BLOCK>
__device__ void queue_from_labels(const int* dist, const Adjacency& adj, i64 n, int level,
                                  vid_t* queue, bool write_queue, vid_t* hub_out,
                                  FrontierStats* next, i64 hub_degree, unsigned* next_bits) {
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
        list_found<BLOCK>(in, hub, chunk, stride, queue, write_queue, hub_out, next,
                          next_bits);
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
                         int rule, int use_cache, float gamma, float alpha, float beta,
                         int flat_hubs, unsigned* frontier_bits, i64 bottom_up_end,
                         const vid_t* __restrict__ out_perm,
                         const vid_t* __restrict__ out_inverse, int* out_dist,
                         vid_t* out_parent, u64* figures, unsigned* barrier_state) {
    __shared__ GatherScratch<BLOCK> gather;
    // The cache lives in bottom-up levels, the flat hub rows in top-down ones.
    __shared__ union {
        HubCache<MG_BFS_HUB_SLOTS> cache;
        FlatRows<MG_BFS_FLAT_HUBS> flat;
    } level_scratch;
    HubCache<MG_BFS_HUB_SLOTS>& cache = level_scratch.cache;
    GridBarrier bar(barrier_state);
    FrontierStats* stats = reinterpret_cast<FrontierStats*>(stats_slots);
    const Adjacency adj = MG_ADJ(graph);  // out-edges (CSR, or the paged layout: MG_PAGED)
    const Adjacency rev = MG_ADJ(reverse);  // in-edges (the same graph when symmetric)

#ifdef MG_BFS_PROFILE
    profile_stamp(0, 0, clock64());
#endif
    // Hub lists of frontier L: hubs_of(L) (alternating halves when double-buffered).
    const bool double_hubs = MG_BFS_FUSED_BOTTOM_UP && 2 * total_hubs <= n;
    auto hubs_of = [&](int level) {
        return double_hubs && (level & 1) ? hub_queue + total_hubs : hub_queue;
    };
    const bool fuse_bottom_up = double_hubs;
    const bool fuse_top_down = MG_BFS_FUSED_TOP_DOWN && double_hubs;
    // The bitmap of frontier L: bits_of(L), one of three buffers of ceil(n / 32) words
    // (recomputed where used: no registers held across a level for it).
    auto bits_of = [&](int level) { return frontier_bits + (i64)(level % 3) * ((n + 31) >> 5); };
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
    // bits_of(0) = {source}; bits_of(1), which level 0 sets, zeroed (bits_of(2): level 0).
    for (i64 w = global_tid(); w < 2 * ((n + 31) >> 5); w += global_stride())
        frontier_bits[w] = w == ((i64)source >> 5) ? 1u << ((unsigned)source & 31u) : 0u;
    if (blockIdx.x == 0 && threadIdx.x < 9) {
        u64 word = 0ull;  // slot 0 = {vertices, edges, hubs} of level 0: the source
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
        {
            unsigned* const after_next_bits = bits_of(level + 2);
            for (i64 w = global_tid(); w < ((n + 31) >> 5); w += global_stride())
                after_next_bits[w] = 0u;
        }
#ifdef MG_BFS_PROFILE
        profile_stamp(level + 1, 0, clock64());
#endif
        // A top-down level may follow unless Enterprise's one-way switch has happened.
        const bool keep_queue = rule == RULE_TOP_DOWN || rule == RULE_BEAMER || !bottom_up;
        bool fused = bottom_up && fuse_bottom_up;
        vid_t* written_queue = queue;  // where this level's frontier L + 1 goes
        if (!bottom_up) {
            const StatusVisit visit{dist, parent, level + 1};
            const i64 n_queue = (i64)frontier.vertices;
            // The frontier's hubs (degree > hub_degree, listed in hub_queue by the same
            // queue generation that wrote the queue) go to the whole grid at once when
            // they fit the flat table; the queue's other rows to expand_gather.
            const i64 n_hubs = (i64)frontier.hubs;
            const bool flat = flat_hubs && n_hubs > 0 && n_hubs <= MG_BFS_FLAT_HUBS;
            if (fuse_top_down && !flat) {
                const i64 out_edges = (i64)frontier.edges;
                const i64 bound = n - visited < out_edges ? n - visited : out_edges;
                fused = cur_queue != queue || bound <= queue_b_cap;
            }
            if (fused) {
                written_queue = cur_queue == queue ? queue_b : queue;
                i64 edges = 0;
                const ClaimCountVisit claim{dist, parent, level + 1, written_queue,
                                            &next->vertices, adj, hub_degree,
                                            hubs_of(level + 1), &next->hubs, &edges,
                                            bits_of(level + 1)};
                for (i64 base = queue_start(); base < n_queue;
                     base += (i64)gridDim.x * BLOCK) {
                    const i64 i = queue_index(base);
                    const bool has = i < n_queue;
                    const vid_t v = has ? cur_queue[i] : (vid_t)0;
                    eid_t b = 0, e = 0;
                    if (has) {
                        b = adj.begin(v);
                        e = adj.end(v);
                    }
                    gather_long_rows<BLOCK>(gather, adj, b, e, v, claim);
                    claim_short_rows<BLOCK>(gather, adj, b, e, v, claim);
                }
                i64 block_edges;
                block_exclusive_sum<BLOCK, i64>(edges, &block_edges);
                if (threadIdx.x == 0 && block_edges) atomicAdd(&next->edges, (u64)block_edges);
            } else {
                if (flat)
                    expand_rows_grid<BLOCK, MG_BFS_FLAT_HUBS>(level_scratch.flat, adj,
                                                              hubs_of(level), n_hubs, visit);
                for (i64 base = queue_start(); base < n_queue;
                     base += (i64)gridDim.x * BLOCK) {
                    const i64 i = queue_index(base);
                    bool has = i < n_queue;
                    const vid_t v = has ? cur_queue[i] : (vid_t)0;
                    if (flat && has) has = adj.degree(v) <= hub_degree;
                    expand_gather<BLOCK>(gather, adj, has, v, visit);
                }
            }
        } else {
            if (use_cache) {
                const i64 hubs = (i64)frontier.hubs;
                cache.fill(hubs_of(level), hubs < MG_BFS_HUB_SLOTS ? hubs : MG_BFS_HUB_SLOTS);
            }
            const HubCache<MG_BFS_HUB_SLOTS>* c = use_cache ? &cache : nullptr;
            if (fused) {
                bottom_up_enqueue<BLOCK>(adj, rev, dist, parent, bottom_up_end, level, c,
                                         bits_of(level), bits_of(level + 1), queue,
                                         keep_queue && rule != RULE_BOTTOM_UP,
                                         hubs_of(level + 1), next, hub_degree);
            } else {
                for (i64 v = global_tid(); v < bottom_up_end; v += global_stride()) {
                    if (__ldcg(dist + v) == -1)
                        adopt_parent(rev, dist, parent, (vid_t)v, level, c, bits_of(level));
                }
            }
        }
        if (!fused) {
            grid_sync(bar);
#ifdef MG_BFS_PROFILE
            profile_stamp(level + 1, 1, clock64());
#endif
            queue_from_labels<BLOCK>(dist, adj, n, level + 1, queue,
                                     keep_queue && rule != RULE_BOTTOM_UP, hubs_of(level + 1),
                                     next, hub_degree, bits_of(level + 1));
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
