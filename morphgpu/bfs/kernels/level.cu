// Level-synchronous BFS kernels: one level per launch (or two, for two-phase), launched
// back to back by morphgpu/bfs/gpu/level.py, which reads a frontier count only where a
// decision needs it. Every kernel is a grid-stride loop over a frontier whose length it reads from
// device memory, so the host never has to size a launch from a count.
//
// Built from the shared operators in include/morphgpu/traversal: expand (scan+warp+CTA
// gathering) and visitors (label claim / edge collection); the direction-optimising levels
// live in direction.cu.
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/contract.cuh>
#include <morphgpu/traversal/expand.cuh>
#include <morphgpu/traversal/visit.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 256
#endif
#ifndef MG_BFS_HISTORY_SLOTS
#define MG_BFS_HISTORY_SLOTS 1024
#endif

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;

template <typename Visit>
__device__ __forceinline__ void expand_queue(const eid_t* indptr, const vid_t* indices,
                                             const vid_t* queue, i64 n_queue,
                                             const Visit& visit) {
    __shared__ GatherScratch<BLOCK> scratch;
    // Block-uniform trip count: expand_gather is block-wide.
    for (i64 base = (i64)blockIdx.x * BLOCK; base < n_queue; base += (i64)gridDim.x * BLOCK) {
        const i64 i = base + threadIdx.x;
        const bool has = i < n_queue;
        const vid_t v = has ? queue[i] : (vid_t)0;
        expand_gather<BLOCK>(scratch, indptr, indices, has, v, visit);
    }
}

// Merrill's expand-contract: gather, label check + claim, warp-aggregated enqueue.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_expand_contract(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                    int* dist, vid_t* parent, const vid_t* in_queue, const u64* in_count,
                    vid_t* out_queue, u64* out_tail, int next_level) {
    const ClaimVisit visit{dist, parent, next_level, out_queue, out_tail};
    expand_queue(indptr, indices, in_queue, (i64)*in_count, visit);
}

// expand-contract with Merrill's culling options in front of the claim (contract.cuh):
// `cull` is a mask of CULL_BITMASK / CULL_WARP / CULL_HISTORY; visited_bits (n bits,
// zeroed before the search) may be null without CULL_BITMASK.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_expand_contract_culled(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                           int* dist, vid_t* parent, const vid_t* in_queue, const u64* in_count,
                           vid_t* out_queue, u64* out_tail, int next_level, int cull,
                           unsigned* visited_bits) {
    __shared__ CullHistory<MG_BFS_HISTORY_SLOTS> history;
    if (cull & CULL_HISTORY) history.clear();  // cull is uniform: clear() is block-wide
    const CullingClaimVisit<MG_BFS_HISTORY_SLOTS> visit{
        dist, parent, next_level, out_queue, out_tail, cull,
        (cull & CULL_HISTORY) ? &history : nullptr, visited_bits};
    expand_queue(indptr, indices, in_queue, (i64)*in_count, visit);
}

// Two-phase, expand half: every neighbour that looks unvisited goes to the edge queue.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_two_phase_expand(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                     const int* dist, const vid_t* in_queue, const u64* in_count,
                     vid_t* edge_dst, vid_t* edge_src, u64* edge_tail) {
    const CollectVisit visit{dist, edge_dst, edge_src, edge_tail};
    expand_queue(indptr, indices, in_queue, (i64)*in_count, visit);
}

// Two-phase, contract half: claim labels (duplicates lose the atomicCAS) and enqueue.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_two_phase_contract(const vid_t* edge_dst, const vid_t* edge_src, const u64* edge_count,
                       int* dist, vid_t* parent, vid_t* out_queue, u64* out_tail,
                       int next_level) {
    const i64 n_edges = (i64)*edge_count;
    for (i64 i = global_tid(); i < n_edges; i += global_stride()) {
        const vid_t w = edge_dst[i];
        const bool mine = claim_label(dist, w, next_level);
        if (mine && parent) parent[w] = edge_src[i];
        warp_enqueue(out_queue, out_tail, mine, w);
    }
}

// Two-phase contract with the culling options: the edge queue holds every neighbour that
// looked unvisited, duplicates included, which is where Merrill's culling pays.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_two_phase_contract_culled(const vid_t* edge_dst, const vid_t* edge_src,
                              const u64* edge_count, int* dist, vid_t* parent,
                              vid_t* out_queue, u64* out_tail, int next_level, int cull,
                              unsigned* visited_bits) {
    __shared__ CullHistory<MG_BFS_HISTORY_SLOTS> history;
    if (cull & CULL_HISTORY) history.clear();
    CullHistory<MG_BFS_HISTORY_SLOTS>* h = (cull & CULL_HISTORY) ? &history : nullptr;
    const i64 n_edges = (i64)*edge_count;
    for (i64 i = global_tid(); i < n_edges; i += global_stride()) {
        const vid_t w = edge_dst[i];
        const bool mine = cull_and_claim(dist, w, next_level, cull, h, visited_bits);
        if (mine && parent) parent[w] = edge_src[i];
        warp_enqueue(out_queue, out_tail, mine, w);
    }
}

// Contract-expand (Merrill et al.): the queue holds (vertex, discoverer) pairs; each pair
// is contracted (label check + claim: duplicates and visited vertices drop out) and the
// winners' rows are expanded straight into the next pair queue, in one kernel.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_contract_expand(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                    int* dist, vid_t* parent, const vid_t* in_dst, const vid_t* in_src,
                    const u64* in_count, vid_t* out_dst, vid_t* out_src, u64* out_tail,
                    int level) {
    __shared__ GatherScratch<BLOCK> scratch;
    const CollectVisit visit{dist, out_dst, out_src, out_tail};
    const i64 n = (i64)*in_count;
    for (i64 base = (i64)blockIdx.x * BLOCK; base < n; base += (i64)gridDim.x * BLOCK) {
        const i64 i = base + threadIdx.x;
        const vid_t w = i < n ? in_dst[i] : (vid_t)0;
        const bool mine = i < n && claim_label(dist, w, level);
        if (mine && parent) parent[w] = in_src[i];
        expand_gather<BLOCK>(scratch, indptr, indices, mine, w, visit);
    }
}

// Contract-expand with the culling options of contract.cuh in front of the claim.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_contract_expand_culled(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                           int* dist, vid_t* parent, const vid_t* in_dst, const vid_t* in_src,
                           const u64* in_count, vid_t* out_dst, vid_t* out_src, u64* out_tail,
                           int level, int cull, unsigned* visited_bits) {
    __shared__ GatherScratch<BLOCK> scratch;
    __shared__ CullHistory<MG_BFS_HISTORY_SLOTS> history;
    if (cull & CULL_HISTORY) history.clear();
    CullHistory<MG_BFS_HISTORY_SLOTS>* h = (cull & CULL_HISTORY) ? &history : nullptr;
    const CollectVisit visit{dist, out_dst, out_src, out_tail};
    const i64 n = (i64)*in_count;
    for (i64 base = (i64)blockIdx.x * BLOCK; base < n; base += (i64)gridDim.x * BLOCK) {
        const i64 i = base + threadIdx.x;
        const vid_t w = i < n ? in_dst[i] : (vid_t)0;
        const bool mine = i < n && cull_and_claim(dist, w, level, cull, h, visited_bits);
        if (mine && parent) parent[w] = in_src[i];
        expand_gather<BLOCK>(scratch, indptr, indices, mine, w, visit);
    }
}

// Edge-balanced expand (the load-balanced BFS paper's merge-path partition, one edge per
// thread): `scan` is the inclusive prefix sum of the frontier's degrees, so edge k of the
// level belongs to the first frontier vertex whose scan exceeds k (a binary search);
// every thread gets the same number of edges whatever the degree distribution.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_merge_path_expand(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                      int* dist, vid_t* parent, const vid_t* in_queue, const i64* scan,
                      const u64* in_count, vid_t* out_queue, u64* out_tail, int next_level) {
    const i64 n = (i64)*in_count;
    if (n == 0) return;
    const i64 total = scan[n - 1];
    const i64 stride = global_stride();
    // Every lane of a warp runs the same trip count, so the warp-aggregated enqueue sees
    // whole warps except in the last round.
    for (i64 k = global_tid(); k < total; k += stride) {
        i64 lo = 0, hi = n - 1;
        while (lo < hi) {
            const i64 mid = (lo + hi) >> 1;
            if (scan[mid] > k) hi = mid; else lo = mid + 1;
        }
        const vid_t v = in_queue[lo];
        const i64 row_start = scan[lo] - (i64)(indptr[(i64)v + 1] - indptr[v]);
        const vid_t w = indices[indptr[v] + (eid_t)(k - row_start)];
        const bool mine = claim_label(dist, w, next_level);
        if (mine && parent) parent[w] = v;
        warp_enqueue(out_queue, out_tail, mine, w);
    }
}
