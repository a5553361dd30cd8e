// Frontier classes (Enterprise §4.2; Schmidt et al. §III-B with immediate classification):
// one launch per level serves the four class queues of the frontier in turn, small rows
// by one thread each, medium by one warp, large by one block, huge by the whole grid, and
// every discovered vertex goes straight into the next level's queue of its class
// (include/morphgpu/traversal/classes.cuh). Enterprise runs four kernels concurrently
// under Hyper-Q; here the four phases share one launch, which costs one launch per level
// instead of four and needs no barrier between phases (they only claim labels).
//
// Queues: class c of a level lives at queues + c * stride (stride >= n); counts[c] its
// length. The host launches levels back to back and reads the counts only every few.
#include <morphgpu/common.cuh>
#include <morphgpu/traversal/classes.cuh>

#ifndef MG_BFS_BLOCK
#define MG_BFS_BLOCK 256
#endif

using namespace mg;
using namespace mg::traversal;

constexpr int BLOCK = MG_BFS_BLOCK;
constexpr int WARPS = BLOCK / 32;
constexpr int THREAD_CAP = 32;  // a small row (degree < bounds.warp <= 32) in one run
constexpr int WARP_CAP = 8;     // a medium row (degree < bounds.block <= 256): 8 per lane
constexpr int WIDE_CAP = 4;     // large and huge rows: 4 edges per thread per step

// Error codes (error[0]): a row longer than its class allows (bounds the host did not
// check), so edges would have been skipped.
constexpr int ERROR_ROW_TOO_LONG = 1;

extern "C" __global__ void __launch_bounds__(MG_BFS_BLOCK)
bfs_frontier_classes(const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
                     int* dist, vid_t* parent, const vid_t* in_queues, const u64* in_counts,
                     vid_t* out_queues, u64* out_tails, i64 stride, int next_level,
                     i64 warp_bound, i64 block_bound, i64 grid_bound, int* error) {
    const ClassBounds bounds{warp_bound, block_bound, grid_bound};

    // Small: one thread per vertex, the whole row in one run.
    {
        const vid_t* queue = in_queues;
        const i64 n = (i64)in_counts[0];
        for (i64 base = (i64)blockIdx.x * BLOCK; base < n; base += (i64)gridDim.x * BLOCK) {
            ClassBuffer<THREAD_CAP> buffer;
            const i64 i = base + threadIdx.x;
            if (i < n) {
                const vid_t v = queue[i];
                const i64 b = (i64)indptr[v], e = (i64)indptr[(i64)v + 1];
                if (e - b > THREAD_CAP) report_error(error, ERROR_ROW_TOO_LONG);
                claim_run(buffer, indptr, indices, dist, parent, v, b, 1, e, next_level, bounds);
            }
            flush_classes<BLOCK>(buffer, out_queues, stride, out_tails);
        }
    }
    // Medium: one warp per vertex, lanes strided by 32.
    {
        const vid_t* queue = in_queues + stride;
        const i64 n = (i64)in_counts[1];
        for (i64 base = (i64)blockIdx.x * WARPS; base < n; base += (i64)gridDim.x * WARPS) {
            ClassBuffer<WARP_CAP> buffer;
            const i64 i = base + warp_id();
            if (i < n) {
                const vid_t v = queue[i];
                const i64 b = (i64)indptr[v], e = (i64)indptr[(i64)v + 1];
                if (e - b > 32 * WARP_CAP) report_error(error, ERROR_ROW_TOO_LONG);
                claim_run(buffer, indptr, indices, dist, parent, v, b + (i64)lane_id(), 32, e,
                          next_level, bounds);
            }
            flush_classes<BLOCK>(buffer, out_queues, stride, out_tails);
        }
    }
    // Large: one block per vertex, BLOCK * WIDE_CAP edges per step.
    {
        const vid_t* queue = in_queues + 2 * stride;
        const i64 n = (i64)in_counts[2];
        for (i64 i = blockIdx.x; i < n; i += gridDim.x) {
            const vid_t v = queue[i];
            const i64 b = (i64)indptr[v], e = (i64)indptr[(i64)v + 1];
            for (i64 base = b; base < e; base += BLOCK * WIDE_CAP) {  // uniform
                ClassBuffer<WIDE_CAP> buffer;
                claim_run(buffer, indptr, indices, dist, parent, v, base + threadIdx.x, BLOCK,
                          e, next_level, bounds);
                flush_classes<BLOCK>(buffer, out_queues, stride, out_tails);
            }
        }
    }
    // Huge: every block of the grid on each vertex's row in turn.
    {
        const vid_t* queue = in_queues + 3 * stride;
        const i64 n = (i64)in_counts[3];
        const i64 grid_step = (i64)gridDim.x * (BLOCK * WIDE_CAP);
        for (i64 i = 0; i < n; ++i) {
            const vid_t v = queue[i];
            const i64 b = (i64)indptr[v], e = (i64)indptr[(i64)v + 1];
            for (i64 base = b + (i64)blockIdx.x * (BLOCK * WIDE_CAP); base < e;
                 base += grid_step) {  // uniform
                ClassBuffer<WIDE_CAP> buffer;
                claim_run(buffer, indptr, indices, dist, parent, v, base + threadIdx.x, BLOCK,
                          e, next_level, bounds);
                flush_classes<BLOCK>(buffer, out_queues, stride, out_tails);
            }
        }
    }
}
