// Content fingerprints of device arrays, for morphgpu/graph_cache.py's check that a cached
// CuPy matrix is unchanged: the sum, modulo 2^64, of mg::mix64(word_k + k * FP_WEYL) over
// an array's bytes read as little-endian 64-bit words (the last, partial word
// zero-padded). mix64 is a bijection, so changing one word always changes the sum; the host
// twin is graph_cache.fingerprint_host. kernels/fingerprint.cu launches it on its own; a
// search kernel can take a FingerprintCheck and run it where it starts (fingerprint_run),
// so the check costs no launch of its own and the host learns the answer before the
// search ends.
#pragma once
#include <morphgpu/hash.cuh>

namespace mg {

constexpr u64 FP_WEYL = 0x9E3779B97F4A7C15ull;

// Words each thread has in flight per step: one 8-byte load each would leave an H100 at
// about half its memory bandwidth (too few bytes outstanding per SM); four reach it.
constexpr int FP_UNROLL = 4;

__device__ __forceinline__ u64 fp_term(u64 w, u64 k) { return mix64(w + k * FP_WEYL); }

// This block's share of the fingerprint of n_bytes bytes at `bytes` (8-byte aligned),
// valid in thread 0. A block reads FP_UNROLL * BLOCK consecutive words per step (each load
// coalesced over the warp), grid-stride; the shares of all blocks sum to the fingerprint
// whatever the grid. Streaming loads (ld.global.cs, evict-first): the pass reads each word
// once, and the search after it reuses what it leaves in L2. H200, 2026-11-29, bfs() on a
// cupyx matrix against __ldg, 12 roots interleaved: Kronecker 22 1.07x, Kronecker 21 1.01x,
// uniform 2^22 1.00x faster (benchmarks/results/2026-11-29-s28/s28-run7-*). Block-wide
// (every thread calls it, with blockDim.x == BLOCK).
template <int BLOCK>
__device__ u64 block_fingerprint(const unsigned char* __restrict__ bytes, u64 n_bytes) {
    __shared__ u64 warp_sums[BLOCK / 32];
    const u64* words = reinterpret_cast<const u64*>(bytes);
    const u64 n_full = n_bytes / 8;
    const u64 step = (u64)FP_UNROLL * BLOCK;
    const u64 stride = (u64)gridDim.x * step;
    u64 acc = 0;
    for (u64 base = (u64)blockIdx.x * step + threadIdx.x; base < n_full; base += stride) {
        u64 w[FP_UNROLL];
#pragma unroll
        for (int i = 0; i < FP_UNROLL; ++i) {  // every load issued before any is used
            const u64 k = base + (u64)i * BLOCK;
            w[i] = k < n_full ? __ldcs(words + k) : 0;
        }
#pragma unroll
        for (int i = 0; i < FP_UNROLL; ++i) {
            const u64 k = base + (u64)i * BLOCK;
            if (k < n_full) acc += fp_term(w[i], k);
        }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0 && n_full * 8 < n_bytes) {
        u64 w = 0;  // the partial last word, zero-padded
        for (u64 b = 8 * n_full; b < n_bytes; ++b) w |= (u64)bytes[b] << (8 * (b - 8 * n_full));
        acc += fp_term(w, n_full);
    }
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < BLOCK / 32 ? warp_sums[lane] : 0;
        for (int offset = 16; offset > 0; offset >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, offset);
    }
    __syncthreads();  // warp_sums is reused by the caller's next call
    return acc;
}

// One cached matrix's check, laid out by graph_cache._Probe in device memory (thirteen
// 64-bit words): up to three arrays, the accumulators and a count of blocks done (zero
// between checks), the page-locked host words the answer goes to, and the fingerprints
// the matrix had when its graph was cached.
struct FingerprintCheck {
    const unsigned char* bytes[3];
    u64 n_bytes[3];
    u64 n_arrays;
    u64* accum;
    unsigned* blocks_done;
    volatile u64* host_out;
    u64 expected[3];
};

// The whole check run by the blocks of a kernel, with no grid barrier of its own: each
// block adds its share of every array's fingerprint to the accumulators (one atomic per
// block and array) and counts itself done; the last block to count reads the sums and
// zeroes the accumulators and the count for the next check. Block-wide (every thread of
// every block calls it).
// - seq == 0 (kernels/fingerprint.cu's own launch): the sums go to host_out[i] and to
//   device_out[i]; the host reads them after the stream.
// - seq > 0 (a search kernel's check, graph_cache.check_inside): one word goes to
//   host_out[n_arrays], seq * 2 + 1 if any sum differs from `expected`, else seq * 2.
//   One 8-byte store, so the host, spinning on it, never sees a number without its
//   verdict, and nothing has to be fenced before it.
// Inlined where the search kernel starts: so placed, and published by the last block
// rather than after the kernel's first grid barrier, direction.cu's builds keep the
// spills they had without it (ptxas sm_90: none in the default build, against 54 bytes
// of spill stores with the barrier's publish).
template <int BLOCK>
__device__ __forceinline__ void fingerprint_run(const FingerprintCheck* __restrict__ check,
                                                u64 seq, u64* device_out = nullptr) {
    const int k = (int)check->n_arrays;
    for (int i = 0; i < k; ++i) {
        const u64 acc = block_fingerprint<BLOCK>(check->bytes[i], check->n_bytes[i]);
        if (threadIdx.x == 0 && acc != 0) atomicAdd(check->accum + i, acc);
    }
    if (threadIdx.x == 0) {
        __threadfence();  // this block's sums before its count
        if (atomicAdd(check->blocks_done, 1u) == gridDim.x - 1) {
            __threadfence();  // every block's sums, counted before ours, are visible now
            u64 sums[3];  // (unrolled over the three slots: registers, loads in flight together)
#pragma unroll
            for (int i = 0; i < 3; ++i) sums[i] = i < k ? __ldcg(check->accum + i) : 0ull;
            bool changed = false;
#pragma unroll
            for (int i = 0; i < 3; ++i) {
                if (i >= k) break;
                check->accum[i] = 0ull;
                if (seq) {
                    changed |= sums[i] != check->expected[i];
                } else {
                    check->host_out[i] = sums[i];
                    if (device_out) device_out[i] = sums[i];
                }
            }
            *check->blocks_done = 0u;
            if (seq) check->host_out[k] = 2 * seq + (changed ? 1ull : 0ull);
        }
    }
}

}  // namespace mg
