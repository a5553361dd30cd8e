// Whole-array reductions with one build per device (morphgpu/device_reduce.py).
//
// Why not CuPy's own: CuPy compiles its reductions with launch parameters in the source
// (the CUB block size from the array's length, its index type from whether the length
// passes 2^31), so a reduction over an array of a new size can compile again on a user's
// first call (issue 19). These kernels take the length and stride as arguments and are
// launched with a fixed block; only the grid (a launch argument) follows the size.
//
// Each takes (array, n, stride in elements, result words) and accumulates with atomics
// into result words the host zeroed; grid-stride loops with 64-bit indices.
#include <morphgpu/common.cuh>

namespace {

template <typename T>
__device__ __forceinline__ void count_nonzero_impl(const T* a, mg::i64 n, mg::i64 stride,
                                                   mg::u64* out) {
    mg::u64 count = 0;
    for (mg::i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        count += a[i * stride] != T(0);
    }
    count = mg::warp_sum(count);
    if (mg::lane_id() == 0 && count) atomicAdd(out, count);
}

// A double as an unsigned key in the same order (NaN excluded): negative values have
// every bit flipped, others only the sign bit. -0.0 orders below +0.0.
__device__ __forceinline__ mg::u64 ordered_key(double v) {
    const mg::u64 bits = (mg::u64)__double_as_longlong(v);
    return (bits >> 63) ? ~bits : (bits | 0x8000000000000000ull);
}

}  // namespace

// out[0] += the number of nonzero bytes (bool arrays viewed as uint8).
extern "C" __global__ void count_nonzero_u8(const unsigned char* a, mg::i64 n, mg::i64 stride,
                                            mg::u64* out) {
    count_nonzero_impl(a, n, stride, out);
}

// out[0] += the number of nonzero 32-bit words (int32 or uint32).
extern "C" __global__ void count_nonzero_i32(const int* a, mg::i64 n, mg::i64 stride,
                                             mg::u64* out) {
    count_nonzero_impl(a, n, stride, out);
}

// out[0] = max over nonzero bytes of (n - index), so the host reads the first one as
// n - out[0] (out[0] == 0: none).
extern "C" __global__ void first_nonzero_u8(const unsigned char* a, mg::i64 n,
                                            mg::i64 stride, mg::u64* out) {
    for (mg::i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        if (a[i * stride]) {
            atomicMax(out, (mg::u64)(n - i));
            break;  // this thread's later elements come after i
        }
    }
}

// out[0] = max of ~key (the minimum), out[1] = max of key (the maximum), out[2] += NaNs:
// the host decodes the keys; any NaN makes both results NaN (NumPy's min and max).
extern "C" __global__ void min_max_f64(const double* a, mg::i64 n, mg::i64 stride,
                                       mg::u64* out) {
    mg::u64 lo = 0, hi = 0, nans = 0;  // lo holds ~key, so 0 is "nothing yet"
    for (mg::i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        const double v = a[i * stride];
        if (v != v) {
            ++nans;
            continue;
        }
        const mg::u64 key = ordered_key(v);
        lo = max(lo, ~key);
        hi = max(hi, key);
    }
    for (int d = 16; d > 0; d >>= 1) {
        lo = max(lo, (mg::u64)__shfl_down_sync(0xffffffffu, lo, d));
        hi = max(hi, (mg::u64)__shfl_down_sync(0xffffffffu, hi, d));
    }
    nans = mg::warp_sum(nans);
    if (mg::lane_id() == 0) {
        if (lo) atomicMax(out, lo);
        if (hi) atomicMax(out + 1, hi);
        if (nans) atomicAdd(out + 2, nans);
    }
}
