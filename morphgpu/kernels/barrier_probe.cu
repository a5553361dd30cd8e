// Probe and benchmark kernels for include/morphgpu/barrier.cuh.
#include <morphgpu/barrier.cuh>

// PAYLOAD words per block are rewritten every round with plain stores and read back with
// plain loads by every other block after the barrier: that checks the ordering (fences)
// as well as the rendezvous.
#define PAYLOAD 8

__device__ __forceinline__ unsigned payload_value(unsigned round, unsigned block, unsigned k) {
    return round * 2654435761u ^ (block * 40503u + k);
}

// For `rounds` rounds each block publishes its round number (and payload) before the
// barrier; after it, each block checks every block's slot holds this round or the next
// (a block can be at most one round ahead: it cannot pass the next barrier without us).
// Anything else increments *violations.
extern "C" __global__ void barrier_rounds(int rounds, unsigned* block_round, unsigned* payload,
                                          unsigned long long* violations, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    unsigned long long bad = 0;
    for (unsigned r = 1; r <= (unsigned)rounds; ++r) {
        if (threadIdx.x == 0) block_round[blockIdx.x] = r;
        if (threadIdx.x < PAYLOAD) {
            payload[blockIdx.x * PAYLOAD + threadIdx.x] = payload_value(r, blockIdx.x, threadIdx.x);
        }
        mg::grid_sync(bar);
        for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
            const unsigned seen = block_round[b];
            if (seen != r && seen != r + 1) ++bad;
            // Read the payload only when its block is still at round r: a block one round
            // ahead may be halfway through rewriting it.
            for (unsigned k = 0; k < PAYLOAD && seen == r; ++k) {
                const unsigned v = payload[b * PAYLOAD + k];
                if (v != payload_value(r, b, k) && v != payload_value(r + 1, b, k)) ++bad;
            }
        }
    }
    if (bad) atomicAdd(violations, bad);
}

// Only barriers: the cost of one round of mg::grid_sync (benchmark).
extern "C" __global__ void barrier_only(int rounds, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    for (int r = 0; r < rounds; ++r) mg::grid_sync(bar);
}

// Nothing at all: the cost of a launch (benchmark).
extern "C" __global__ void empty_kernel() {}
