// Types and small helpers every morphgpu kernel shares.
//
// Index types are chosen per compile by the loader (kernels.index_defines): vertex ids are
// 32-bit until a graph passes 2^31 vertices, edge offsets 64-bit once it passes 2^31 edges.
// Kernels write vid_t/eid_t and never a bare `int` for something that can grow that large.
#pragma once

#ifndef MG_VID_T
#define MG_VID_T int
#endif
#ifndef MG_EID_T
#define MG_EID_T long long
#endif

namespace mg {

typedef MG_VID_T vid_t;
typedef MG_EID_T eid_t;
typedef unsigned long long u64;
typedef long long i64;

// The smallest b with 2^b >= x, at compile time (sizes of shared tables and lane groups).
__host__ __device__ constexpr int ceil_log2(int x) {
    int b = 0;
    while ((1 << b) < x) ++b;
    return b;
}

// Global thread index and stride in 64 bits: grids of 2^31 threads exist on these parts.
__device__ __forceinline__ i64 global_tid() {
    return (i64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ i64 global_stride() {
    return (i64)gridDim.x * blockDim.x;
}

// A kernel that finds a broken invariant records a code here instead of trapping, so the
// host can report which check failed (a trap would poison the context for the process).
__device__ __forceinline__ void report_error(int* error_flag, int code) {
    if (error_flag) atomicCAS(error_flag, 0, code);
}

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned warp_id() { return threadIdx.x >> 5; }

// Sum of v over the 32 lanes of a full warp (lane 0 holds it; the others partial sums).
__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    return v;
}

template <typename T>
__device__ __forceinline__ T load_volatile(const T* p) {
    return *(const volatile T*)p;
}

}  // namespace mg
