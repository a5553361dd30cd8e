// Content fingerprints of device arrays (morphgpu/graph_cache.py): the sum, modulo 2^64,
// of mg::mix64(word_k + k * FP_WEYL) over the array's bytes read as little-endian 64-bit
// words (the last, partial word zero-padded). mix64 is a bijection, so changing one word
// always changes the sum; the host twin is graph_cache.fingerprint_host.
#include <morphgpu/hash.cuh>

#define FP_WEYL 0x9E3779B97F4A7C15ull
#define FP_BLOCK 256

// Words each thread has in flight per step: one 8-byte load each would leave an H100 at
// about half its memory bandwidth (too few bytes outstanding per SM); four reach it.
#define FP_UNROLL 4

// Streaming loads (ld.global.cs, evict-first): the pass reads each word once, and the
// caller's next kernel (a search) reuses what it leaves in L2. H200, 2026-11-29, bfs() on a
// cupyx matrix against __ldg, 12 roots interleaved: Kronecker 22 1.07x, Kronecker 21 1.01x,
// uniform 2^22 1.00x faster (benchmarks/results/2026-11-29-s28/s28-run7-*).

__device__ __forceinline__ unsigned long long fp_term(unsigned long long w, unsigned long long k) {
    return mg::mix64(w + k * FP_WEYL);
}

// This block's share of the fingerprint of n_bytes bytes at `bytes` (8-byte aligned),
// valid in thread 0. A block reads FP_UNROLL * FP_BLOCK consecutive words per step (each
// load coalesced over the warp), grid-stride; the shares of all blocks sum to the
// fingerprint whatever the grid. Block-wide (every thread calls it).
__device__ unsigned long long block_fingerprint(const unsigned char* __restrict__ bytes,
                                                unsigned long long n_bytes) {
    __shared__ unsigned long long warp_sums[FP_BLOCK / 32];
    const unsigned long long* words = reinterpret_cast<const unsigned long long*>(bytes);
    const unsigned long long n_full = n_bytes / 8;
    const unsigned long long step = (unsigned long long)FP_UNROLL * FP_BLOCK;
    const unsigned long long stride = (unsigned long long)gridDim.x * step;
    unsigned long long acc = 0;
    for (unsigned long long base = (unsigned long long)blockIdx.x * step + threadIdx.x;
         base < n_full; base += stride) {
        unsigned long long w[FP_UNROLL];
#pragma unroll
        for (int i = 0; i < FP_UNROLL; ++i) {  // every load issued before any is used
            const unsigned long long k = base + (unsigned long long)i * FP_BLOCK;
            w[i] = k < n_full ? __ldcs(words + k) : 0;
        }
#pragma unroll
        for (int i = 0; i < FP_UNROLL; ++i) {
            const unsigned long long k = base + (unsigned long long)i * FP_BLOCK;
            if (k < n_full) acc += fp_term(w[i], k);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && n_full * 8 < n_bytes) {
        unsigned long long w = 0;  // the partial last word, zero-padded
        for (unsigned long long b = 8 * n_full; b < n_bytes; ++b) {
            w |= (unsigned long long)bytes[b] << (8 * (b - 8 * n_full));
        }
        acc += fp_term(w, n_full);
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
    }
    __syncthreads();  // warp_sums is reused by the caller's next call
    return acc;
}

// out[slot] += the fingerprint of n_bytes bytes at `bytes` (8-byte aligned): one atomic
// per block. (fingerprint_check below does a whole check in one launch.)
extern "C" __global__ void __launch_bounds__(FP_BLOCK)
fingerprint_bytes(const unsigned char* __restrict__ bytes, unsigned long long n_bytes,
                  unsigned long long* out, int slot) {
    const unsigned long long acc = block_fingerprint(bytes, n_bytes);
    if (threadIdx.x == 0 && acc != 0) atomicAdd(out + slot, acc);
}

// A cached matrix's whole check (graph_cache._Probe) in one launch, where it took four
// (zeroing the output, a launch per array, the copy to the host): the fingerprints of up
// to three arrays (a_i, n_i bytes; n_arrays of them) summed into accum[i], then the last
// block to finish writes them to out[i] (device) and host_out[i] (page-locked host memory,
// which the kernel writes directly) and zeroes accum and blocks_done for the next launch
// (both zero before the first). The last block is found by a counter incremented after
// each block's atomics, fenced, so it sees every block's sums.
extern "C" __global__ void __launch_bounds__(FP_BLOCK)
fingerprint_check(const unsigned char* __restrict__ a0, unsigned long long n0,
                  const unsigned char* __restrict__ a1, unsigned long long n1,
                  const unsigned char* __restrict__ a2, unsigned long long n2, int n_arrays,
                  unsigned long long* accum, unsigned int* blocks_done,
                  unsigned long long* out, volatile unsigned long long* host_out) {
    for (int i = 0; i < n_arrays; ++i) {  // (selects, not an indexed array: no stack frame)
        const unsigned long long acc = block_fingerprint(i == 0 ? a0 : i == 1 ? a1 : a2,
                                                         i == 0 ? n0 : i == 1 ? n1 : n2);
        if (threadIdx.x == 0 && acc != 0) atomicAdd(accum + i, acc);
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence();  // this block's sums before its count
        last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    __threadfence();  // every block's sums, counted before ours, are visible now
    for (int i = 0; i < n_arrays; ++i) {
        const unsigned long long v = atomicExch(accum + i, 0ull);
        out[i] = v;
        host_out[i] = v;
    }
    *blocks_done = 0u;
    __threadfence_system();
}
