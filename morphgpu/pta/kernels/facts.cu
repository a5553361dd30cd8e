// Points-to facts counted where the rows are: the GPU path's solution stays on the device
// until a caller asks for its rows (solution.py), and its fact count (the CLI's summary, the
// benchmark's check) costs two launches and an 8-byte read instead of copying every row
// (gigabytes on php or mplayer) to the host first.
#include <morphgpu/common.cuh>

using mg::i64;
using mg::u64;

namespace {
constexpr int WARP = 32;
}

// size[r] = the number of set bits of row r. One warp per row.
extern "C" __global__ void row_sizes(const u64* rows, i64 n_rows, i64 words, i64* size) {
    const i64 warp = mg::global_tid() / WARP, n_warps = mg::global_stride() / WARP;
    const unsigned lane = mg::lane_id();
    for (i64 r = warp; r < n_rows; r += n_warps) {
        u64 count = 0;
        for (i64 w = lane; w < words; w += WARP) count += __popcll(rows[r * words + w]);
        count = mg::warp_sum(count);
        if (lane == 0) size[r] = (i64)count;
    }
}

// var_size[v] = size[row_of_var[v]], and *total (zeroed by the host) += their sum.
extern "C" __global__ void var_sizes(const i64* size, const i64* row_of_var, i64 n_vars,
                                     i64* var_size, unsigned long long* total) {
    u64 mine = 0;
    for (i64 v = mg::global_tid(); v < n_vars; v += mg::global_stride()) {
        const i64 s = size[row_of_var[v]];
        var_size[v] = s;
        mine += (u64)s;
    }
    mine = mg::warp_sum(mine);
    if (mg::lane_id() == 0 && mine) atomicAdd(total, (unsigned long long)mine);
}
