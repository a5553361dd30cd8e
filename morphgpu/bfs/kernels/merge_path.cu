// The load-balanced BFS paper's couplings of work redistribution and neighbour gathering
// (§4), over the merge-path operators of include/morphgpu/traversal/merge_path.cuh. One
// level is: the frontier's degree scan (bfs_mp_scan_chunks, bfs_mp_scan_write), then
//
// - separate (§4.1, perfect balance + global data movement): bfs_mp_redistribute writes
//   each item's edge position and source to global arrays over diagonal tiles, and
//   bfs_mp_gather reads them back, one item per thread;
// - fused (bfs_mp_coupled): imbalanced redistribution + balanced gathering (§4.2, item
//   tiles), balanced redistribution + imbalanced gathering (§4.3, diagonal tiles), or the
//   hybrid (§4.4) that picks §4.3 when the level's expand factor (items / frontier
//   vertices) exceeds f0 and §4.2 otherwise, decided on the device from the scan.
//
// Every kernel reads the frontier length from device memory and loops over tiles with a
// block-uniform trip count, so the host launches a fixed grid back to back.
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/merge_path.cuh>
#include <morphgpu/traversal/queue.cuh>
#include <morphgpu/traversal/visit.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 256
#endif
#ifndef MG_BFS_TILE
#define MG_BFS_TILE 1024
#endif

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;
constexpr int TILE = MG_BFS_TILE;

enum : int { COUPLE_ITEM_TILES = 1, COUPLE_DIAGONAL_TILES = 2, COUPLE_HYBRID = 3 };

extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_mp_scan_chunks(const eid_t* __restrict__ indptr, const vid_t* queue, const u64* count,
                   i64* block_sums) {
    degree_scan_chunks<BLOCK>(indptr, queue, (i64)*count, block_sums);
}

extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_mp_scan_write(const eid_t* __restrict__ indptr, const vid_t* queue, const u64* count,
                  const i64* block_sums, i64* ends) {
    degree_scan_write<BLOCK>(indptr, queue, (i64)*count, block_sums, ends);
}

// Hands (source, edge position) to a claim visitor: neighbour = indices[position].
struct GatherClaim {
    const vid_t* indices;
    ClaimVisit claim;
    __device__ __forceinline__ void operator()(vid_t src, eid_t position) const {
        claim(src, indices[position]);
    }
};

extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_mp_coupled(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices, int* dist,
               vid_t* parent, const vid_t* in_queue, const i64* ends, const u64* in_count,
               vid_t* out_queue, u64* out_tail, int next_level, int coupling, float f0) {
    __shared__ MergeTile<TILE> tile;
    const i64 n = (i64)*in_count;
    if (n == 0) return;
    const i64 total = ends[n - 1];
    if (total == 0) return;
    // Every block reads the same n and total, so every block takes the same branch.
    bool diagonal = coupling == COUPLE_DIAGONAL_TILES;
    if (coupling == COUPLE_HYBRID) diagonal = (double)total > (double)f0 * (double)n;
    const i64 steps = diagonal ? n + total : total;
    const i64 tiles = (steps + TILE - 1) / TILE;
    const GatherClaim gather{indices, ClaimVisit{dist, parent, next_level, out_queue, out_tail}};
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {  // block-uniform
        if (diagonal) balanced_tile(tile, ends, in_queue, indptr, n, total, t);
        else item_tile(tile, ends, in_queue, indptr, n, total, t);
        visit_tile_items(tile, ends, in_queue, indptr, gather);
        __syncthreads();  // the tile is rewritten by the next setup
    }
}

// Separate kernels, redistribution half: item k's edge position and source, over diagonal
// tiles (balanced; a diagonal tile always fits the stage), written to positions[k] /
// sources[k].
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_mp_redistribute(const eid_t* __restrict__ indptr, const vid_t* in_queue, const i64* ends,
                    const u64* in_count, eid_t* positions, vid_t* sources) {
    __shared__ MergeTile<TILE> tile;
    const i64 n = (i64)*in_count;
    if (n == 0) return;
    const i64 total = ends[n - 1];
    const i64 tiles = (n + total + TILE - 1) / TILE;
    for (i64 t = blockIdx.x; t < tiles; t += gridDim.x) {  // block-uniform
        balanced_tile(tile, ends, in_queue, indptr, n, total, t);
        for (i64 k = tile.first_item + threadIdx.x; k < tile.end_item; k += BLOCK) {
            const i64 x = owning_row(tile.end, 0, tile.n_rows, k);
            positions[k] = (eid_t)(k + tile.shift[x]);
            sources[k] = tile.src[x];
        }
        __syncthreads();
    }
}

// Separate kernels, gathering half: one item per thread, perfectly balanced.
extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_mp_gather(const vid_t* __restrict__ indices, int* dist, vid_t* parent, const i64* ends,
              const u64* in_count, const eid_t* positions, const vid_t* sources,
              vid_t* out_queue, u64* out_tail, int next_level) {
    const i64 n = (i64)*in_count;
    if (n == 0) return;
    const i64 total = ends[n - 1];
    const ClaimVisit claim{dist, parent, next_level, out_queue, out_tail};
    for (i64 k = global_tid(); k < total; k += global_stride())
        claim(sources[k], indices[positions[k]]);
}
