// Integer mixers shared by kernels that need reproducible pseudo-randomness: claim
// priorities (conflict.cuh), sample positions (MST), counter-based generators. Each has a
// NumPy/CuPy twin in morphgpu/hashing.py computing the same bits, so a host path and a
// device path that hash the same counters make the same choices.
#pragma once
#include <morphgpu/common.cuh>

namespace mg {

// The "lowbias32" xorshift-multiply finaliser: a bijection on 32-bit words.
__device__ __host__ __forceinline__ unsigned mix32(unsigned h) {
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

// SplitMix64's finaliser: a bijection on 64-bit words.
__device__ __host__ __forceinline__ u64 mix64(u64 z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

}  // namespace mg
