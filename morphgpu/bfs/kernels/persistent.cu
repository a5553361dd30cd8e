// The whole BFS in one persistent kernel: levels are separated by mg::grid_sync, so the
// host launches once and reads nothing until the end (deep graphs: roads, meshes, grids
// with hundreds to thousands of levels, where a launch plus a host read per level would
// cost more than the level's work).
//
// Frontier classification by size (Enterprise §4.2; the dynamic-parallelism paper's
// small/large split): a frontier of at most `enter_local` vertices is served by block 0
// alone, which runs level after level with __syncthreads and its queues in shared memory
// while the rest of the grid waits at the barrier; it hands back to the grid when the next
// level's edges would overflow its shared queue. Wider frontiers run across the grid with
// the scan+warp+CTA expand and one grid barrier per level.
//
// Round bookkeeping (a round is one grid-wide step: one grid level or one local stretch):
// round r writes the next frontier's length to tails[r % 3] and its level and "local mode
// gave up" flag to ctrl[2 (r % 3) .. +1]; block 0 zeroes tails[(r + 1) % 3] during round r.
// A slot is rewritten only two barriers after everyone read it.
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/visit.cuh>
#include <morphgpu/worklist.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 512
#endif
#ifndef MG_BFS_LOCAL_CAP
#define MG_BFS_LOCAL_CAP 4096
#endif

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;
constexpr int LOCAL_CAP = MG_BFS_LOCAL_CAP;

struct LocalQueues {
    vid_t items[2][LOCAL_CAP];
    int count[2];
};

// Block 0 only (block-wide). Runs levels from the frontier in[0, n_in) at `level` while
// each level's edges fit the shared queue; writes the frontier it stops at to out and its
// length to *out_tail. Returns (level reached) and sets *gave_up when it stopped because a
// level would not fit (so the grid must take the next level).
__device__ int local_levels(LocalQueues& q, const eid_t* __restrict__ indptr,
                            const vid_t* __restrict__ indices, int* dist, vid_t* parent,
                            const vid_t* in, i64 n_in, vid_t* out, u64* out_tail, int level,
                            int* gave_up) {
    for (i64 i = threadIdx.x; i < n_in; i += BLOCK) q.items[0][i] = in[i];
    if (threadIdx.x == 0) q.count[0] = (int)n_in;
    __syncthreads();
    int src = 0;
    int progressed = 0;
    *gave_up = 0;
    while (true) {
        const int n = q.count[src];
        i64 edges = 0;
        for (int i = threadIdx.x; i < n; i += BLOCK) {
            const vid_t v = q.items[src][i];
            edges += (i64)(indptr[(i64)v + 1] - indptr[v]);
        }
        i64 total;
        block_exclusive_sum<BLOCK, i64>(edges, &total);
        if (n == 0) break;
        if (total > LOCAL_CAP) {
            *gave_up = 1;
            break;
        }
        const int dst = src ^ 1;
        if (threadIdx.x == 0) q.count[dst] = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += BLOCK) {
            const vid_t v = q.items[src][i];
            const eid_t end = indptr[(i64)v + 1];
            for (eid_t k = indptr[v]; k < end; ++k) {
                const vid_t w = indices[k];
                if (claim_label(dist, w, level + 1)) {
                    if (parent) parent[w] = v;
                    q.items[dst][atomicAdd(&q.count[dst], 1)] = w;
                }
            }
        }
        __syncthreads();
        ++level;
        ++progressed;
        src = dst;
    }
    (void)progressed;
    const int n = q.count[src];
    for (int i = threadIdx.x; i < n; i += BLOCK) out[i] = q.items[src][i];
    if (threadIdx.x == 0) *out_tail = (u64)n;
    return level;
}

// Labels start here too (every vertex -1, the source 0 and its own parent), so one launch
// is the whole search.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_persistent(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices, int* dist,
               vid_t* parent, vid_t* queue0, vid_t* queue1, u64* tails, int* ctrl, i64 n,
               vid_t source, int enter_local, unsigned* barrier_state) {
    __shared__ GatherScratch<BLOCK> gather;
    __shared__ LocalQueues local;
    GridBarrier bar(barrier_state);
    for (i64 v = global_tid(); v < n; v += global_stride()) {
        dist[v] = v == (i64)source ? 0 : -1;
        if (parent) parent[v] = v == (i64)source ? source : (vid_t)-1;
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        queue0[0] = source;
        tails[0] = 0ull;
    }
    grid_sync(bar);
    int level = 0;
    int cur = 0;
    int force_grid = 0;
    i64 n_cur = 1;
    unsigned round = 0;
    while (n_cur > 0) {
        const vid_t* in = cur ? queue1 : queue0;
        vid_t* out = cur ? queue0 : queue1;
        u64* out_tail = tails + (round % 3);
        int* slot = ctrl + 2 * (round % 3);
        if (n_cur <= enter_local && !force_grid) {
            if (blockIdx.x == 0) {
                int gave_up;
                const int reached = local_levels(local, indptr, indices, dist, parent, in, n_cur,
                                                 out, out_tail, level, &gave_up);
                if (threadIdx.x == 0) {
                    slot[0] = reached;
                    slot[1] = gave_up;
                }
            }
        } else {
            const ClaimVisit visit{dist, parent, level + 1, out, out_tail};
            for (i64 base = (i64)blockIdx.x * BLOCK; base < n_cur;
                 base += (i64)gridDim.x * BLOCK) {
                const i64 i = base + threadIdx.x;
                const bool has = i < n_cur;
                expand_gather<BLOCK>(gather, indptr, indices, has, has ? in[i] : (vid_t)0,
                                     visit);
            }
            if (blockIdx.x == 0 && threadIdx.x == 0) {
                slot[0] = level + 1;
                slot[1] = 0;
            }
        }
        if (blockIdx.x == 0 && threadIdx.x == 0) tails[(round + 1) % 3] = 0ull;
        grid_sync(bar);
        n_cur = (i64)load_volatile(out_tail);
        level = load_volatile(slot);
        force_grid = load_volatile(slot + 1);
        cur ^= 1;
        ++round;
    }
}
