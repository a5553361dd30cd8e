// Bitmaps of one bit per vertex in 32-bit words (visited sets, frontiers, the partitioned
// search's "sent" and candidate maps): the word of v is v >> 5, its bit v & 31.
//
// I is the caller's index type (vid_t, i64, a tile's local int): the word offset is
// computed in it, as the callers computed it before these helpers were shared.
#pragma once
#include <morphgpu/common.cuh>

namespace mg {

template <typename I>
__device__ __forceinline__ unsigned bit_mask(I v) {
    return 1u << ((unsigned)v & 31u);
}

// Plain load: a bitmap rewritten within one launch is read after a grid barrier, whose
// acquire makes plain loads see the new words (never __ldg).
template <typename I>
__device__ __forceinline__ bool test_bit(const unsigned* bits, I v) {
    return (bits[v >> 5] >> ((unsigned)v & 31u)) & 1u;
}

template <typename I>
__device__ __forceinline__ bool test_bit_volatile(const unsigned* bits, I v) {
    return (load_volatile(bits + (v >> 5)) >> ((unsigned)v & 31u)) & 1u;
}

template <typename I>
__device__ __forceinline__ void set_bit(unsigned* bits, I v) {
    atomicOr(bits + (v >> 5), bit_mask(v));
}

// Test-and-set: true for the one thread that set the bit.
template <typename I>
__device__ __forceinline__ bool test_and_set_bit(unsigned* bits, I v) {
    const unsigned bit = bit_mask(v);
    return (atomicOr(bits + (v >> 5), bit) & bit) == 0u;
}

// Test-and-set behind a plain read, which spares the atomic where the bit is set already.
template <typename I>
__device__ __forceinline__ bool first_to_set(unsigned* bits, I v) {
    const unsigned bit = bit_mask(v);
    unsigned* word = bits + (v >> 5);
    return (load_volatile(word) & bit) == 0u && (atomicOr(word, bit) & bit) == 0u;
}

}  // namespace mg
