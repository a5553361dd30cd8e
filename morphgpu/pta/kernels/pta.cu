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
//                  changes nothing
// Pull-based propagation: only the warp that owns node v writes row v, so no atomics on the
// sets; a reader may see a row mid-update, which is safe because sets only grow and the
// writer's change stamp makes every reader pull again in the next sweep.
#include <morphgpu/common.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/worklist.cuh>

using mg::i64;
using mg::u64;

namespace {

constexpr int WARP = 32;

__device__ __forceinline__ i64 warp_global_id() { return mg::global_tid() / WARP; }
__device__ __forceinline__ i64 warp_count() { return mg::global_stride() / WARP; }

}  // namespace

// rows[row[i]] |= bit bit[i]: the address-of constraints.
extern "C" __global__ void set_bits(u64* rows, const i64* row, const i64* bit, i64 n, i64 words,
                                    int* changed_at, int stamp) {
    for (i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        const i64 b = bit[i];
        atomicOr(&rows[row[i] * words + (b >> 6)], 1ull << (b & 63));
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
    const int* clock) {
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
                                      const int* clock) {
    const i64 total = n_members * words;
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        const i64 m = member[i / words], L = leader[i / words], w = i % words;
        atomicOr(&P[L * words + w], P[m * words + w]);
        atomicAnd(&seen[L * words + w], seen[m * words + w]);
        if (w == 0) {
            changed_at[L] = *clock;
            force[L] = 1;
        }
    }
}

// Pull sweeps to the fixed point of the copy edges. in_ptr/in_src: incoming CSR (sorted by
// destination). A node is pulled in a sweep when it is forced (new in-edges this round: all
// of its in-edges are read once) or when an in-neighbour changed in the previous or current
// sweep (changed_at >= stamp - 1); only those in-neighbours are read. Three rotating
// counters detect the sweep with no change (see the comment at the reset).
extern "C" __global__ void propagate(
    u64* P, i64 words, const i64* active, i64 n_active, const i64* in_ptr, const i64* in_src,
    int* force, int* changed_at, int* clock, unsigned* changes, int max_sweeps,
    int* error, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    const unsigned lane = mg::lane_id();
    const int base = mg::load_volatile(clock);
    int sweep = 0;
    for (;; ++sweep) {
        const int stamp = base + 1 + sweep;
        for (i64 a = warp_global_id(); a < n_active; a += warp_count()) {
            const i64 v = active[a];
            const bool forced = sweep == 0 && force[v];
            const i64 e_begin = in_ptr[v], e_end = in_ptr[v + 1];
            bool changed = false;
            u64* vrow = P + v * words;
            // Each recent in-neighbour's row is ORed straight into v's row (only this warp
            // writes it), so the edge list is scanned once whatever the row length.
            for (i64 e0 = e_begin; e0 < e_end; e0 += WARP) {
                const i64 e = e0 + lane;
                i64 u = -1;
                bool recent = false;
                if (e < e_end) {
                    u = in_src[e];
                    recent = forced || mg::load_volatile(changed_at + u) >= stamp - 1;
                }
                unsigned mask = __ballot_sync(0xffffffffu, recent);
                while (mask) {
                    const int j = __ffs(mask) - 1;
                    mask &= mask - 1;
                    const u64* urow = P + __shfl_sync(0xffffffffu, u, j) * words;
                    for (i64 w = lane; w < words; w += WARP) {
                        const u64 x = mg::load_volatile(urow + w);
                        if (x) {
                            const u64 old = vrow[w];
                            const u64 grown = x & ~old;
                            if (grown) {
                                vrow[w] = old | grown;
                                changed = true;
                            }
                        }
                    }
                }
            }
            if (__any_sync(0xffffffffu, changed) && lane == 0) {
                changed_at[v] = stamp;
                atomicAdd(&changes[sweep % 3], 1u);
            }
            if (forced && lane == 0) force[v] = 0;
        }
        mg::grid_sync(bar);
        const unsigned n_changed = mg::load_volatile(changes + sweep % 3);
        // Counter (sweep+2)%3 was last written in sweep-1 and read by everyone before this
        // barrier; it is next written in sweep+2, after another barrier: safe to clear now.
        if (mg::global_tid() == 0) changes[(sweep + 2) % 3] = 0u;
        if (n_changed == 0u) break;
        if (sweep + 1 >= max_sweeps) {
            if (mg::global_tid() == 0) mg::report_error(error, 1);
            break;
        }
    }
    // Every block read `clock` before its first barrier; advancing it now is safe.
    if (mg::global_tid() == 0) {
        *clock = base + sweep + 2;
        changes[sweep % 3] = 0u;
        changes[(sweep + 1) % 3] = 0u;
    }
}
