// Content fingerprints of device arrays (morphgpu/graph_cache.py): the sum, modulo 2^64,
// of mg::mix64(word_k + k * FP_WEYL) over the array's bytes read as little-endian 64-bit
// words (the last, partial word zero-padded). mix64 is a bijection, so changing one word
// always changes the sum; the host twin is graph_cache.fingerprint_host.
#include <morphgpu/hash.cuh>

#define FP_WEYL 0x9E3779B97F4A7C15ull
#define FP_BLOCK 256

// out[0] += the fingerprint of n_bytes bytes at `bytes` (8-byte aligned). One thread per
// word, grid-stride; a block sums its threads' terms and adds them with one atomic.
extern "C" __global__ void __launch_bounds__(FP_BLOCK)
fingerprint_bytes(const unsigned char* __restrict__ bytes, unsigned long long n_bytes,
                  unsigned long long* out) {
    __shared__ unsigned long long warp_sums[FP_BLOCK / 32];
    const unsigned long long* words = reinterpret_cast<const unsigned long long*>(bytes);
    const unsigned long long n_full = n_bytes / 8;
    const unsigned long long n_words = (n_bytes + 7) / 8;
    unsigned long long acc = 0;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         k < n_words; k += stride) {
        unsigned long long w;
        if (k < n_full) {
            w = __ldg(words + k);
        } else {  // the partial last word, zero-padded
            w = 0;
            for (unsigned long long b = 8 * k; b < n_bytes; ++b) {
                w |= (unsigned long long)bytes[b] << (8 * (b - 8 * k));
            }
        }
        acc += mg::mix64(w + k * FP_WEYL);
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (int)(blockDim.x / 32) ? warp_sums[lane] : 0;
        for (int offset = 16; offset > 0; offset >>= 1) {
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
        }
        if (lane == 0 && acc != 0) atomicAdd(out, acc);
    }
}
