// Content fingerprints of device arrays (morphgpu/graph_cache.py): the definition and the
// block-wide pass are in include/morphgpu/fingerprint.cuh, shared with the search kernels
// that run the check inside their first phase (bfs/kernels/direction.cu). The host twin is
// graph_cache.fingerprint_host.
#include <morphgpu/fingerprint.cuh>

#define FP_BLOCK 256

using mg::block_fingerprint;

// out[slot] += the fingerprint of n_bytes bytes at `bytes` (8-byte aligned): one atomic
// per block. (fingerprint_check below does a whole check in one launch.)
extern "C" __global__ void __launch_bounds__(FP_BLOCK)
fingerprint_bytes(const unsigned char* __restrict__ bytes, unsigned long long n_bytes,
                  unsigned long long* out, int slot) {
    const unsigned long long acc = block_fingerprint<FP_BLOCK>(bytes, n_bytes);
    if (threadIdx.x == 0 && acc != 0) atomicAdd(out + slot, acc);
}

// A cached matrix's whole check (graph_cache._Probe) in one launch, where it took four
// (zeroing the output, a launch per array, the copy to the host): mg::fingerprint_run over
// up to three arrays (a_i, n_i bytes; n_arrays of them), whose last block also writes the
// fingerprints to out[i] (device) and host_out[i] (page-locked, written by the kernel).
// accum and blocks_done are zero before and after.
extern "C" __global__ void __launch_bounds__(FP_BLOCK)
fingerprint_check(const unsigned char* __restrict__ a0, unsigned long long n0,
                  const unsigned char* __restrict__ a1, unsigned long long n1,
                  const unsigned char* __restrict__ a2, unsigned long long n2, int n_arrays,
                  unsigned long long* accum, unsigned int* blocks_done,
                  unsigned long long* out, volatile unsigned long long* host_out) {
    const mg::FingerprintCheck check{{a0, a1, a2}, {n0, n1, n2}, (mg::u64)n_arrays, accum,
                                     blocks_done, host_out, {0ull, 0ull, 0ull}};
    mg::fingerprint_run<FP_BLOCK>(&check, 0ull, out);
}
