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
//   B. queue generation by scanning labels == L + 1 (queue_from_status): the next queue
//      (when a top-down level may follow), the hubs, and {vertices, edges, hubs};
//   -- grid barrier --
//   every block reads the statistics and applies the same rule.
// warp_reserve: queue generation reserves slots per warp (traversal/queue.cuh).
// flat_hubs: a top-down level expands the frontier's hubs over the whole grid as one flat
// edge array (expand_rows_grid) instead of one block per hub.
// warp_bottom_up selects adopt_parent_warp (a warp finishes each long row) over one thread
// per vertex. With frontier_bits non-null (`bitmap` on the host), phase B also writes the new
// frontier as a bitmap and the bottom-up probes read it instead of the labels (see
// traversal/bottom_up.cuh, on_frontier). The bitmap is written only in phase B and read
// only in phase A, so the grid barriers between the phases order every access to it.
// Statistics rotate over three slots: level L reads slot L % 3, fills (L + 1) % 3 and
// zeroes nothing it or anyone still reads (slot (L + 1) % 3 is zeroed during phase A).
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/bottom_up.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/queue.cuh>
#include <morphgpu/traversal/visit.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 512
#endif
#ifndef MG_BFS_HUB_SLOTS
#define MG_BFS_HUB_SLOTS 1024
#endif
#ifndef MG_BFS_FLAT_HUBS
#define MG_BFS_FLAT_HUBS 1024
#endif

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;

enum Rule { RULE_GAMMA = 0, RULE_BEAMER = 1, RULE_BOTTOM_UP = 2, RULE_TOP_DOWN = 3 };

// Two blocks per SM, as before the warp bottom-up existed: without the minimum ptxas
// squeezes the kernel to 40 registers and spills.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK, 2)
bfs_direction_persistent(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                         const eid_t* __restrict__ rev_indptr,
                         const vid_t* __restrict__ rev_indices, int* dist, vid_t* parent,
                         vid_t* queue, vid_t* hub_queue, u64* stats_slots, i64 n,
                         vid_t source, i64 hub_degree, i64 total_hubs, i64 total_edges,
                         int rule, int use_cache, float gamma, float alpha, float beta,
                         int warp_bottom_up, int flat_hubs, int warp_reserve,
                         unsigned* frontier_bits, unsigned* barrier_state) {
    __shared__ GatherScratch<BLOCK> gather;
    // The cache lives in bottom-up levels, the flat hub rows in top-down ones.
    __shared__ union {
        HubCache<MG_BFS_HUB_SLOTS> cache;
        FlatRows<MG_BFS_FLAT_HUBS> flat;
    } level_scratch;
    HubCache<MG_BFS_HUB_SLOTS>& cache = level_scratch.cache;
    GridBarrier bar(barrier_state);
    FrontierStats* stats = reinterpret_cast<FrontierStats*>(stats_slots);

    for (i64 v = global_tid(); v < n; v += global_stride()) {
        dist[v] = v == (i64)source ? 0 : -1;
        if (parent) parent[v] = v == (i64)source ? source : (vid_t)-1;
    }
    if (blockIdx.x == 0 && threadIdx.x < 9) stats_slots[threadIdx.x] = 0ull;
    grid_sync(bar);
    queue_from_status<BLOCK>(dist, indptr, n, 0, queue, &stats[0], hub_degree, true,
                             hub_queue, frontier_bits, warp_reserve != 0);
    grid_sync(bar);

    bool bottom_up = rule == RULE_BOTTOM_UP;
    i64 unexplored = total_edges - (i64)load_volatile(&stats[0].edges);
    for (int level = 0;; ++level) {
        FrontierStats* here = &stats[level % 3];
        FrontierStats* next = &stats[(level + 1) % 3];
        if (blockIdx.x == 0 && threadIdx.x == 0) {
            next->vertices = 0ull;
            next->edges = 0ull;
            next->hubs = 0ull;
        }
        if (!bottom_up) {
            const StatusVisit visit{dist, parent, level + 1};
            const i64 n_queue = (i64)load_volatile(&here->vertices);
            // The frontier's hubs (degree > hub_degree, listed in hub_queue by the same
            // queue generation that wrote the queue) go to the whole grid at once when
            // they fit the flat table; the queue's other rows to expand_gather.
            const i64 n_hubs = (i64)load_volatile(&here->hubs);
            const bool flat = flat_hubs && n_hubs > 0 && n_hubs <= MG_BFS_FLAT_HUBS;
            if (flat)
                expand_rows_grid<BLOCK, MG_BFS_FLAT_HUBS>(level_scratch.flat, indptr, indices,
                                                          hub_queue, n_hubs, visit);
            for (i64 base = (i64)blockIdx.x * BLOCK; base < n_queue;
                 base += (i64)gridDim.x * BLOCK) {
                const i64 i = base + threadIdx.x;
                bool has = i < n_queue;
                const vid_t v = has ? queue[i] : (vid_t)0;
                if (flat && has) has = (i64)(indptr[(i64)v + 1] - indptr[v]) <= hub_degree;
                expand_gather<BLOCK>(gather, indptr, indices, has, v, visit);
            }
        } else {
            if (use_cache) {
                const i64 hubs = (i64)load_volatile(&here->hubs);
                cache.fill(hub_queue, hubs < MG_BFS_HUB_SLOTS ? hubs : MG_BFS_HUB_SLOTS);
            }
            const HubCache<MG_BFS_HUB_SLOTS>* c = use_cache ? &cache : nullptr;
            if (warp_bottom_up) {
                // Whole warps per step (the warp phase needs every lane): the warp's first
                // thread index and the stride are multiples of 32.
                for (i64 base = global_tid() - lane_id(); base < n; base += global_stride()) {
                    const i64 v = base + lane_id();
                    const bool has = v < n && __ldcg(dist + v) == -1;
                    adopt_parent_warp<4>(rev_indptr, rev_indices, dist, parent, has,
                                         (vid_t)(has ? v : 0), level, c, frontier_bits);
                }
            } else {
                for (i64 v = global_tid(); v < n; v += global_stride()) {
                    if (__ldcg(dist + v) == -1)
                        adopt_parent(rev_indptr, rev_indices, dist, parent, (vid_t)v, level, c,
                                     frontier_bits);
                }
            }
        }
        grid_sync(bar);
        // A top-down level may follow unless Enterprise's one-way switch has happened.
        const bool keep_queue = rule == RULE_TOP_DOWN || rule == RULE_BEAMER || !bottom_up;
        queue_from_status<BLOCK>(dist, indptr, n, level + 1, queue, next, hub_degree,
                                 keep_queue && rule != RULE_BOTTOM_UP, hub_queue, frontier_bits,
                                 warp_reserve != 0);
        grid_sync(bar);
        const i64 n_f = (i64)load_volatile(&next->vertices);
        const i64 m_f = (i64)load_volatile(&next->edges);
        const i64 hubs = (i64)load_volatile(&next->hubs);
        if (n_f == 0) break;
        unexplored -= m_f;
        if (rule == RULE_GAMMA) {
            if (!bottom_up && total_hubs > 0 && (double)hubs > gamma * (double)total_hubs)
                bottom_up = true;
        } else if (rule == RULE_BEAMER) {
            if (!bottom_up && (double)m_f > (double)unexplored / alpha) bottom_up = true;
            else if (bottom_up && (double)n_f < (double)n / beta) bottom_up = false;
        }
    }
}
