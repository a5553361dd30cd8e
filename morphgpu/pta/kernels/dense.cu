// Points-to analysis of small programs in one persistent launch (morphgpu/pta/dense.py).
//
// On a program of ten thousand nodes the round solver (pta.cu and gpu.py) spends its time
// on per-round fixed costs: launches, sorts and host reads, twenty-odd rounds of them. Here
// the copy graph is a dense bit matrix too, so the whole fixpoint is bit operations on two
// matrices and the loop never leaves the device:
//   P[v]  points-to row of node v (W words; bit b = object objects[b]);
//   E[v]  in-edges of node v (WE words; bit u = a copy edge u -> v).
// Each iteration re-applies every rule to the current state: the complex constraints
// (load, store, gep) against every object their pointer holds, adding bits to E and P, and
// the copy edges, each node ORing the rows of its in-neighbours into its own. Rules only
// ever set bits (monotone), so reading a row while another thread adds to it gives a value
// between the iteration's start and its end, which any order of rule application allows.
// An iteration that set no bit read only the state the previous barrier published and
// changed nothing: the least fixpoint. One grid barrier per iteration (mg::grid_sync);
// `changed` rotates over three flags so block 0 can clear the next one while no block can
// still be reading it.
//
// No merging: offline HCD facts and cycle collapsing only make equal sets share a row,
// so the rows here are the same least solution, one per node.
#include <morphgpu/barrier.cuh>
#include <morphgpu/common.cuh>
#include <pta/kernels/fields.cuh>

using mg::i64;
typedef unsigned long long u64;

#ifndef PTA_DENSE_LANE_WORDS
#define PTA_DENSE_LANE_WORDS 8  // words of P per lane: W <= 32 * this (dense.py checks)
#endif

#define KIND_LOAD 0
#define KIND_STORE 1
#define KIND_GEP 2

__device__ __forceinline__ u64 load_word(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// Set bit `bit` of the row at `row`; true when it was not set before.
__device__ __forceinline__ bool set_bit(u64* row, i64 bit) {
    u64* word = row + (bit >> 6);
    const u64 mask = 1ull << (bit & 63);
    if (load_word(word) & mask) return false;
    return (atomicOr(word, mask) & mask) == 0;
}

extern "C" __global__ void pta_dense(
    i64 n_nodes, i64 words, i64 edge_words, u64* P, u64* E,
    i64 n_addr, const i64* __restrict__ addr_node, const i64* __restrict__ addr_bit,
    i64 n_copy, const i64* __restrict__ copy_src, const i64* __restrict__ copy_dst,
    i64 n_complex, const i64* __restrict__ kind, const i64* __restrict__ ptr,
    const i64* __restrict__ other, const i64* __restrict__ off,
    i64 n_vars, const i64* __restrict__ objects, const i64* __restrict__ obj_size,
    const i64* __restrict__ node_of_var, const i64* __restrict__ bit_of_var,
    i64 max_iterations, unsigned* changed, i64* outcome, unsigned* barrier_state)
{
    mg::GridBarrier bar(barrier_state);
    const i64 tid = mg::global_tid();
    const i64 stride = mg::global_stride();
    const int lane = (int)mg::lane_id();
    const i64 warp = tid >> 5;
    const i64 n_warps = stride >> 5;

    // The initial state: address-of bits and the input's copy edges.
    for (i64 i = tid; i < n_addr; i += stride) set_bit(P + addr_node[i] * words, addr_bit[i]);
    for (i64 i = tid; i < n_copy; i += stride) set_bit(E + copy_dst[i] * edge_words, copy_src[i]);
    if (tid == 0) { changed[0] = 0; changed[1] = 0; changed[2] = 0; }
    mg::grid_sync(bar);

    // outcome: iterations run, and 1 if the last one changed nothing (the fixpoint).
    i64 it = 0;
    bool fixpoint = false;
    for (; it < max_iterations; ++it) {
        unsigned* flag = changed + it % 3;
        if (tid == 0) changed[(it + 1) % 3] = 0;
        bool mine = false;
        // Complex constraints, one thread per (constraint, word of its pointer's row).
        for (i64 item = tid; item < n_complex * words; item += stride) {
            const i64 c = item / words;
            const i64 w = item - c * words;
            u64 bits = load_word(P + ptr[c] * words + w);
            const i64 k = kind[c];
            while (bits) {
                const i64 b = w * 64 + (__ffsll((long long)bits) - 1);
                bits &= bits - 1;
                const i64 obj = objects[b];
                if (k == KIND_GEP) {
                    const i64 tbit = pta::gep_bit(obj, off[c], obj_size, bit_of_var, n_vars);
                    if (tbit >= 0) mine |= set_bit(P + other[c] * words, tbit);
                } else {
                    // No self loops: a node's own row adds nothing to it.
                    const i64 node = pta::field_node(obj, off[c], k == KIND_STORE, obj_size,
                                                     node_of_var, n_vars);
                    if (node < 0 || node == other[c]) continue;
                    if (k == KIND_LOAD) mine |= set_bit(E + other[c] * edge_words, node);
                    else mine |= set_bit(E + node * edge_words, other[c]);
                }
            }
        }
        // Copy edges: one warp per node pulls its in-neighbours' rows; lane l holds words
        // l, l + 32, ... of the node's row.
        for (i64 v = warp; v < n_nodes; v += n_warps) {
            u64 acc[PTA_DENSE_LANE_WORDS];
            u64* row = P + v * words;
#pragma unroll
            for (int k = 0; k < PTA_DENSE_LANE_WORDS; ++k) {
                const i64 w = lane + 32 * k;
                acc[k] = w < words ? load_word(row + w) : 0ull;
            }
            const u64* in = E + v * edge_words;
            bool any_in = false;
            for (i64 e0 = 0; e0 < edge_words; e0 += 32) {
                u64 my = e0 + lane < edge_words ? load_word(in + e0 + lane) : 0ull;
                while (true) {
                    const unsigned holders = __ballot_sync(0xffffffffu, my != 0ull);
                    if (!holders) break;
                    const int src = __ffs(holders) - 1;
                    u64 word = __shfl_sync(0xffffffffu, my, src);
                    if (lane == src) my = 0ull;
                    while (word) {
                        const i64 u = (e0 + src) * 64 + (__ffsll((long long)word) - 1);
                        word &= word - 1;
                        any_in = true;
                        const u64* urow = P + u * words;
#pragma unroll
                        for (int k = 0; k < PTA_DENSE_LANE_WORDS; ++k) {
                            const i64 w = lane + 32 * k;
                            if (w < words) acc[k] |= load_word(urow + w);
                        }
                    }
                }
            }
            if (!any_in) continue;
#pragma unroll
            for (int k = 0; k < PTA_DENSE_LANE_WORDS; ++k) {
                const i64 w = lane + 32 * k;
                if (w < words) {
                    const u64 gain = acc[k] & ~load_word(row + w);
                    if (gain) { atomicOr(row + w, gain); mine = true; }
                }
            }
        }
        if (mine) atomicOr(flag, 1u);
        mg::grid_sync(bar);
        if (*(volatile unsigned*)flag == 0) { ++it; fixpoint = true; break; }
    }
    if (tid == 0) { outcome[0] = it; outcome[1] = fixpoint ? 1 : 0; }
}
