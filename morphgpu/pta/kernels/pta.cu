// Andersen points-to analysis: the device half of morphgpu/pta/gpu.py.
//
// Points-to sets are dense bit rows over the compacted object universe (layout.py):
// row v holds `words` 64-bit words. One round is
//   take_delta     D = P & ~seen; seen |= D   (what the complex rules have not read yet)
//   eval_complex   loads/stores turn each new object of their pointer into a copy edge
//                  (appended as a sorted-CSR key dst*n+src, one atomicAdd per warp step);
//                  geps set the field's bit in their target row directly
//   (host: merge the new keys into the incoming-edge CSR by a sort)
//   propagate      persistent kernel: pull sweeps separated by mg::grid_sync until a sweep
//                  changes nothing; after the first sweep each puller reads only the blocks
//                  of words its in-neighbours gained in the previous sweep
// Pull-based propagation: only the warp that owns node v writes row v, so no atomics on the
// sets; a reader may see a row mid-update, which is safe because sets only grow and the
// writer's gained-block bitmap makes every reader pull those blocks again next sweep.
#include <morphgpu/common.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/worklist.cuh>

using mg::i64;
using mg::u64;

#ifndef PTA_BLOCK
#define PTA_BLOCK 256  // threads per block of propagate: gpu.py's BLOCK
#endif
#ifndef PTA_QUEUE_CAP
#define PTA_QUEUE_CAP 1024  // nodes a block queues in shared memory before spilling
#endif

namespace {

constexpr int WARP = 32;

__device__ __forceinline__ i64 warp_global_id() { return mg::global_tid() / WARP; }
__device__ __forceinline__ i64 warp_count() { return mg::global_stride() / WARP; }

constexpr int SCAN_GROUPS = 4;  // warp-widths of in-edges whose loads are issued together
constexpr int PULL_BATCH = 8;   // in-neighbour words loaded back to back per lane

// OR of a 64-bit value over the 32 lanes of a full warp.
__device__ __forceinline__ u64 warp_or(u64 x) {
    const unsigned lo = __reduce_or_sync(0xffffffffu, (unsigned)x);
    const unsigned hi = __reduce_or_sync(0xffffffffu, (unsigned)(x >> 32));
    return ((u64)hi << 32) | lo;
}

// Marks the block of word `word` of row `row` as holding a bit (occupied: one bitmap of
// bitmap_words words per row, bit b for words [b * block_words, (b + 1) * block_words)).
__device__ __forceinline__ void mark_occupied(u64* occupied, i64 row, i64 word, i64 block_words,
                                              i64 bitmap_words) {
    const i64 b = word / block_words;
    const u64 bit = 1ull << (b & 63);
    u64* slot = occupied + row * bitmap_words + (b >> 6);
    if (!(mg::load_volatile(slot) & bit)) atomicOr(slot, bit);
}

// Warp-wide: ORs words [w_begin, w_end) of the row of every lane j in `from` (its node is
// lane j's `u`) into `vrow`; true on every lane when some word grew. The neighbours' words
// are loaded PULL_BATCH at a time before any is used, so a node with many changed
// in-neighbours waits for one memory round trip per batch, not per neighbour, and reads
// and writes its own word once per block. Only the warp that owns vrow writes it.
__device__ bool pull_block(const u64* P, u64* vrow, i64 words, i64 w_begin, i64 w_end,
                           unsigned from, i64 u) {
    bool grew = false;
    for (i64 w0 = w_begin; w0 < w_end; w0 += WARP) {
        const i64 w = w0 + mg::lane_id();
        const bool in_row = w < w_end;
        u64 acc = 0ull;
        unsigned m = from;
        while (m) {
            i64 src[PULL_BATCH];
#pragma unroll
            for (int k = 0; k < PULL_BATCH; ++k) {
                src[k] = -1;
                if (m) {  // warp-uniform
                    const int j = __ffs(m) - 1;
                    m &= m - 1;
                    src[k] = __shfl_sync(0xffffffffu, u, j);
                }
            }
            u64 x[PULL_BATCH];
#pragma unroll
            for (int k = 0; k < PULL_BATCH; ++k)
                x[k] = (in_row && src[k] >= 0) ? mg::load_volatile(P + src[k] * words + w) : 0ull;
#pragma unroll
            for (int k = 0; k < PULL_BATCH; ++k) acc |= x[k];
        }
        if (acc) {
            const u64 old = mg::load_volatile(vrow + w);
            if (acc & ~old) {
                *(volatile u64*)(vrow + w) = old | acc;
                grew = true;
            }
        }
    }
    return __any_sync(0xffffffffu, grew);
}

}  // namespace

// rows[row[i]] |= bit bit[i]: the address-of constraints.
extern "C" __global__ void set_bits(u64* rows, const i64* row, const i64* bit, i64 n, i64 words,
                                    int* changed_at, int stamp, u64* occupied, i64 block_words,
                                    i64 bitmap_words) {
    for (i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        const i64 b = bit[i];
        atomicOr(&rows[row[i] * words + (b >> 6)], 1ull << (b & 63));
        mark_occupied(occupied, row[i], b >> 6, block_words, bitmap_words);
        changed_at[row[i]] = stamp;
    }
}

// D = P & ~seen; seen |= D, over every word.
extern "C" __global__ void take_delta(const u64* P, u64* seen, u64* D, i64 n_words_total) {
    for (i64 i = mg::global_tid(); i < n_words_total; i += mg::global_stride()) {
        const u64 p = P[i];
        const u64 d = p & ~seen[i];
        D[i] = d;
        if (d) seen[i] = p;
    }
}

// The node of field `off` of `obj`, or -1 when there is none: the object is too small
// (offset 0 always names the object itself), or a store would write the null object 1.
__device__ __forceinline__ i64 field_node(i64 obj, i64 off, bool is_store, const i64* obj_size,
                                          const i64* node_of_var, i64 n_vars) {
    const i64 target = obj + off;
    if (off != 0 && obj_size[obj] <= off) return -1;
    if (target >= n_vars) return -1;
    if (is_store && target == 1) return -1;
    return node_of_var[target];
}

// One warp per complex constraint (kind 2 load, 3 store, 4 gep, 5 online HCD fact with
// src = x, dst = y). Each lane walks its words of the pointer's delta row; keys are
// reserved with one atomicAdd per warp step. Keys >= n_nodes^2 are merge requests
// (y, node of an object x points to), not edges; the null object 1 is never merged.
// Keys past `capacity` are counted but not written: the host grows the buffer and reruns
// (the kernel is idempotent: D is unchanged and gep bits are ORed).
extern "C" __global__ void eval_complex(
    const int* kind, const i64* c_src, const i64* c_dst, const i64* c_off, i64 n_complex,
    const u64* D, u64* P, i64 words, const i64* objects, const i64* obj_size,
    const i64* node_of_var, const i64* bit_of_var, i64 n_vars, i64 n_nodes,
    i64* keys, u64* n_keys, i64 capacity, int* gep_changed, int* changed_at,
    const int* clock, u64* occupied, i64 block_words, i64 bitmap_words) {
    const unsigned lane = mg::lane_id();
    const int stamp = *clock;
    for (i64 c = warp_global_id(); c < n_complex; c += warp_count()) {
        const int k = kind[c];
        const i64 src = c_src[c], dst = c_dst[c], off = c_off[c];
        const i64 ptr = (k == 3) ? dst : src;
        const u64* drow = D + ptr * words;
        for (i64 w0 = 0; w0 < words; w0 += WARP) {
            const i64 w = w0 + lane;
            u64 d = (w < words) ? drow[w] : 0ull;
            if (__all_sync(0xffffffffu, d == 0ull)) continue;
            if (k == 4) {
                while (d) {
                    const int b = __ffsll((long long)d) - 1;
                    d &= d - 1;
                    const i64 obj = objects[w * 64 + b];
                    if (obj_size[obj] <= off || obj + off >= n_vars) continue;
                    const i64 tbit = bit_of_var[obj + off];
                    if (tbit < 0) continue;  // cannot happen: layout closes objects under geps
                    const u64 mask = 1ull << (tbit & 63);
                    const u64 old = atomicOr(&P[dst * words + (tbit >> 6)], mask);
                    if (!(old & mask)) {
                        mark_occupied(occupied, dst, tbit >> 6, block_words, bitmap_words);
                        changed_at[dst] = stamp;
                        *gep_changed = 1;
                    }
                }
                continue;
            }
            // The warp's keys of this step get consecutive slots: a warp prefix sum of the
            // per-lane counts (the shared worklist scan) and one atomicAdd by lane 0.
            const unsigned count = __popcll(d);
            unsigned before = mg::warp_inclusive_sum(count);
            const unsigned total = __shfl_sync(0xffffffffu, before, WARP - 1);
            before -= count;
            u64 base = 0;
            if (lane == 0) base = atomicAdd(n_keys, (u64)total);
            base = __shfl_sync(0xffffffffu, base, 0) + before;
            while (d) {
                const int b = __ffsll((long long)d) - 1;
                d &= d - 1;
                const i64 obj = objects[w * 64 + b];
                const i64 t = field_node(obj, off, k == 3, obj_size, node_of_var, n_vars);
                i64 key = -1;
                if (k == 2 && t >= 0) key = dst * n_nodes + t;       // t -> dst
                else if (k == 3 && t >= 0) key = t * n_nodes + src;  // src -> t
                else if (k == 5 && obj != 1)                         // merge obj with y
                    key = n_nodes * n_nodes + dst * n_nodes + node_of_var[obj];
                if ((i64)base < capacity) keys[base] = key;
                ++base;
            }
        }
    }
}

// Merged nodes: each member's row is ORed into its leader's, the leader's `seen` keeps
// only what every member had seen (so each moved constraint still sees every object),
// and the leader is marked changed (readers pull it) and forced (it pulls all in-edges,
// which now include its members'). One thread per (member, word).
extern "C" __global__ void merge_rows(u64* P, u64* seen, const i64* member, const i64* leader,
                                      i64 n_members, i64 words, int* changed_at, int* force,
                                      const int* clock, u64* occupied, i64 bitmap_words) {
    const i64 total = n_members * words;
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        const i64 m = member[i / words], L = leader[i / words], w = i % words;
        atomicOr(&P[L * words + w], P[m * words + w]);
        atomicAnd(&seen[L * words + w], seen[m * words + w]);
        if (w < bitmap_words)  // bitmap_words <= words
            atomicOr(&occupied[L * bitmap_words + w], occupied[m * bitmap_words + w]);
        if (w == 0) {
            changed_at[L] = *clock;
            force[L] = 1;
        }
    }
}

// Pull sweeps to the fixed point of the copy edges, with difference propagation over
// blocks of `block_words` words (a multiple of the warp width: one coalesced warp step per
// 32 words) and a worklist of the nodes to pull. in_ptr/in_src: incoming CSR (sorted by
// destination), in_new flags the edges added this round; out_ptr/out_dst: the same edges
// by source.
//
// Sweep 0 pulls every node in `active` and reads whole rows (every block the row's
// `occupied` bitmap names: each kernel that sets a bit marks its block there) of an
// in-neighbour whose row the complex rules, merges or address-of constraints grew since
// the last propagation (changed_at == the clock at launch), along a new edge, or for a
// forced node (a merged leader). A block an owner fills during sweep 0 after the reader
// read its bitmap is in the owner's gained blocks, read in sweep 1. Every later sweep
// pulls only the nodes queued by the previous one and reads only the blocks an
// in-neighbour gained in the previous sweep: node u that gains in sweep s writes the bitmap of its gained blocks to gained_blocks[s & 1][u], stamps
// swept_at[s & 1][u] and queues its out-neighbours (once each per sweep: queued_at) for
// sweep s + 1. A puller in sweep s + 1 reads the other parity, which nobody writes in that
// sweep, so the bitmaps are exact. The words themselves are read from P (which its owner
// may be growing in the same sweep): sets only grow, so a stale word is a subset of the
// final one and still covers the block's gain as of the end of the previous sweep;
// anything the reader missed is in the owner's bitmap of this sweep, read next sweep.
// Invariant at every barrier: P[v] holds P[u] minus u's last gained blocks for every edge
// u -> v, so a sweep that queues nobody ends at the fixed point. Only the warp that owns v
// writes row v and its bitmaps, so the rows need no atomics. A warp pulls the in-edges 32
// at a time, block by block over the union of the blocks they offer, loading the 32
// neighbours' words of a block in batches (pull_block), so a node with many changed
// in-neighbours costs memory round trips per block and batch, not per neighbour.
//
// Queues: sweep s pulls list s % 3 and fills list (s + 1) % 3 through a shared-memory
// BlockWorklist flushed once per block before the barrier; list (s + 2) % 3 was read in
// sweep s - 1 and is next filled in sweep s + 1, so it is emptied during sweep s. Each list
// holds at most n_nodes items (queued_at), so none overflows. The host zeroes todo_tail
// before each launch.
extern "C" __global__ void __launch_bounds__(PTA_BLOCK) propagate(
    u64* P, i64 words, i64 block_words, i64 bitmap_words, const i64* active, i64 n_active,
    i64 n_nodes, const i64* in_ptr, const i64* in_src, const unsigned char* in_new,
    const i64* out_ptr, const i64* out_dst, int* force, const int* changed_at, int* swept_at,
    u64* gained_blocks, u64* occupied, int* queued_at, i64* todo, u64* todo_tail, int* clock,
    int max_sweeps, int* error, unsigned* barrier_state) {
    __shared__ mg::BlockWorklist<i64, PTA_QUEUE_CAP, PTA_BLOCK> queue;
    mg::GridBarrier bar(barrier_state);
    queue.init();
    const unsigned lane = mg::lane_id();
    const int base = mg::load_volatile(clock);
    int sweep = 0;
    for (;; ++sweep) {
        const int stamp = base + 1 + sweep;
        const i64 cur = sweep & 1, prev = cur ^ 1;
        const i64* items = sweep == 0 ? active : todo + (sweep % 3) * n_nodes;
        const i64 n_items = sweep == 0 ? n_active
                                       : (i64)mg::load_volatile(todo_tail + sweep % 3);
        i64* next = todo + ((sweep + 1) % 3) * n_nodes;
        u64* next_tail = todo_tail + (sweep + 1) % 3;
        if (mg::global_tid() == 0) todo_tail[(sweep + 2) % 3] = 0ull;
        for (i64 a = warp_global_id(); a < n_items; a += warp_count()) {
            // Volatile reads for everything other SMs wrote in earlier sweeps of this launch:
            // L1 is not coherent, and a node's owner warp changes from sweep to sweep.
            const i64 v = mg::load_volatile(items + a);
            const bool forced = sweep == 0 && force[v];
            const i64 e_begin = in_ptr[v], e_end = in_ptr[v + 1];
            u64* vrow = P + v * words;
            // Lane q holds bits q*64 .. q*64+63 of v's gained-block bitmap (the host keeps
            // bitmap_words <= 32).
            u64 gained = 0ull;
            // In-edges are read SCAN_GROUPS warp-widths at a time (their loads in flight
            // together); each group of 32 is then pulled block by block.
            for (i64 e0 = e_begin; e0 < e_end; e0 += SCAN_GROUPS * WARP) {
                i64 u[SCAN_GROUPS];
                bool whole[SCAN_GROUPS], partial[SCAN_GROUPS];
#pragma unroll
                for (int g = 0; g < SCAN_GROUPS; ++g) {
                    const i64 e = e0 + g * WARP + lane;
                    u[g] = e < e_end ? in_src[e] : -1;
                }
#pragma unroll
                for (int g = 0; g < SCAN_GROUPS; ++g) {
                    const i64 e = e0 + g * WARP + lane;
                    whole[g] = partial[g] = false;
                    if (u[g] < 0) continue;
                    if (sweep == 0)
                        whole[g] = forced || in_new[e] ||
                                   mg::load_volatile(changed_at + u[g]) == base;
                    else
                        partial[g] = mg::load_volatile(swept_at + prev * n_nodes + u[g]) ==
                                     stamp - 1;
                }
#pragma unroll
                for (int g = 0; g < SCAN_GROUPS; ++g) {
                    if (!__any_sync(0xffffffffu, whole[g] || partial[g])) continue;
                    const u64* bits = gained_blocks +
                                      (prev * n_nodes + (partial[g] ? u[g] : 0)) * bitmap_words;
                    for (i64 q = 0; q < bitmap_words; ++q) {
                        // The blocks this lane's in-neighbour offers, and their union.
                        u64 mine = 0ull;
                        if (whole[g]) mine = mg::load_volatile(occupied + u[g] * bitmap_words + q);
                        else if (partial[g]) mine = mg::load_volatile(bits + q);
                        u64 wanted = warp_or(mine);
                        while (wanted) {
                            const int t = __ffsll((long long)wanted) - 1;
                            wanted &= wanted - 1;
                            const i64 b = q * 64 + t;
                            const unsigned from = __ballot_sync(0xffffffffu, (mine >> t) & 1ull);
                            if (pull_block(P, vrow, words, b * block_words,
                                           min(words, (b + 1) * block_words), from, u[g]) &&
                                lane == (unsigned)(b >> 6))
                                gained |= 1ull << (b & 63);
                        }
                    }
                }
            }
            if (__any_sync(0xffffffffu, gained != 0ull)) {
                if ((i64)lane < bitmap_words) {
                    gained_blocks[(cur * n_nodes + v) * bitmap_words + lane] = gained;
                    u64* occ = occupied + v * bitmap_words + lane;
                    *(volatile u64*)occ = mg::load_volatile(occ) | gained;
                }
                if (lane == 0) swept_at[cur * n_nodes + v] = stamp;
                for (i64 e = out_ptr[v] + lane; e < out_ptr[v + 1]; e += WARP) {
                    const i64 w = out_dst[e];
                    if (atomicMax(queued_at + w, stamp) < stamp)
                        queue.push_or_spill(w, next, next_tail, (u64)n_nodes);
                }
            }
            if (forced && lane == 0) force[v] = 0;
        }
        queue.flush(next, next_tail, (u64)n_nodes);
        mg::grid_sync(bar);
        if (mg::load_volatile(todo_tail + (sweep + 1) % 3) == 0ull) break;
        if (sweep + 1 >= max_sweeps) {
            if (mg::global_tid() == 0) mg::report_error(error, 1);
            break;
        }
    }
    // Every block read `clock` before its first barrier; advancing it now is safe.
    if (mg::global_tid() == 0) *clock = base + sweep + 2;
}
