// Andersen points-to analysis: the device half of morphgpu/pta/gpu.py.
//
// Points-to sets are dense bit rows over the compacted object universe (layout.py):
// row v holds `words` 64-bit words. One round is
//   take_delta     for the pointer rows changed since the last round: D = P & ~seen;
//                  seen |= D, and a bitmap of the blocks where D is non-zero
//   eval_complex   loads/stores turn each new object of their pointer into a copy edge
//                  key dst*n+src, kept only if the key table did not hold it yet (so the
//                  host receives distinct new edges); geps set the field's bit directly
//   (host: sort the few new keys, merge_batch them into the sorted in and out lists)
//   propagate      persistent kernel: pull sweeps separated by mg::grid_sync until a sweep
//                  changes nothing; after the first sweep each puller reads only the blocks
//                  of words its in-neighbours gained in the previous sweep
// Pull-based propagation: only the warp that owns node v writes row v, so no atomics on the
// sets; a reader may see a row mid-update, which is safe because sets only grow and the
// writer's gained-block bitmap makes every reader pull those blocks again next sweep.
#include <morphgpu/common.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/worklist.cuh>
#include <morphgpu/hash.cuh>
#include <pta/kernels/fields.cuh>

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
// shared_row (warp-uniform): several warps pull into vrow in this sweep (the chunks of a
// hub's in-edges), so the word is ORed atomically and only what this OR added counts.
__device__ bool pull_block(const u64* P, u64* vrow, i64 words, i64 w_begin, i64 w_end,
                           unsigned from, i64 u, bool shared_row) {
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
                if (shared_row) {
                    grew |= (acc & ~atomicOr(vrow + w, acc)) != 0ull;
                } else {
                    *(volatile u64*)(vrow + w) = old | acc;
                    grew = true;
                }
            }
        }
    }
    return __any_sync(0xffffffffu, grew);
}

}  // namespace

// rows[row[i]] |= bit bit[i]: the address-of constraints.
extern "C" __global__ void set_bits(u64* rows, const i64* row, const i64* bit, i64 n, i64 words,
                                    int* changed_at, int stamp, u64* occupied, i64 block_words,
                                    i64 bitmap_words, u64* ext_blocks) {
    for (i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        const i64 b = bit[i];
        atomicOr(&rows[row[i] * words + (b >> 6)], 1ull << (b & 63));
        mark_occupied(occupied, row[i], b >> 6, block_words, bitmap_words);
        mark_occupied(ext_blocks, row[i], b >> 6, block_words, bitmap_words);
        changed_at[row[i]] = stamp;
    }
}

// Rows that have changed since `since` (a clock value): a gep, merge or address-of rule
// stamped changed_at, or a propagation sweep stamped swept_at (either parity).
__device__ __forceinline__ bool changed_since(i64 v, int since, const int* changed_at,
                                              const int* swept_at, i64 n_nodes) {
    return changed_at[v] >= since || swept_at[v] >= since || swept_at[n_nodes + v] >= since;
}

// For every pointer node v (is_ptr[v]: the pointer of some load, store, gep or HCD fact,
// in the layout's numbering, never relabelled): D[v] = P[leader[v]] & ~seen[v];
// seen[v] |= D[v], over the blocks the leader's occupied bitmap names (bits only ever lie
// there), and dblocks[v] = the blocks where D[v] is non-zero (what eval_complex reads).
// seen and D stay with the pointer node after it is merged into another (gpu.py, merge),
// so each constraint reads every object of its pointer's set exactly once; a seen shared
// by a merged group would have to keep only what every member had seen (the objects one
// member had read went to all the others' constraints again: with cycles merged every
// round, 25-85 % more objects read from deltas on mplayer, php, svn; H100). A pointer
// whose leader is unchanged since the previous take has an empty delta and is not read
// at all. take_clock is a two-slot ring indexed by round parity: this launch reads the
// clock value of the previous take and records the current one in the other slot.
// One warp per row; blocks are warp multiples, so each step is one coalesced word per lane.
extern "C" __global__ void take_delta(const u64* P, u64* seen, u64* D, i64 words,
                                      const unsigned char* is_ptr, const i64* leader,
                                      const u64* occupied, u64* dblocks, i64 block_words,
                                      i64 bitmap_words, const int* changed_at,
                                      const int* swept_at, i64 n_nodes, int* take_clock,
                                      int parity, const int* clock) {
    const unsigned lane = mg::lane_id();
    const int since = take_clock[parity ^ 1];
    if (mg::global_tid() == 0) take_clock[parity] = *clock;
    for (i64 v = warp_global_id(); v < n_nodes; v += warp_count()) {
        if (!is_ptr[v]) continue;  // warp-uniform
        const i64 L = leader[v];
        const bool fresh = changed_since(L, since, changed_at, swept_at, n_nodes);
        u64 mine = 0ull;  // lane q: word q of L's occupied bitmap (bitmap_words <= 32)
        if (fresh && (i64)lane < bitmap_words) mine = occupied[L * bitmap_words + lane];
        u64 got = 0ull;   // lane q: word q of v's delta-block bitmap
        for (i64 q = 0; q < bitmap_words; ++q) {
            u64 bits = __shfl_sync(0xffffffffu, mine, (int)q);
            while (bits) {
                const int t = __ffsll((long long)bits) - 1;
                bits &= bits - 1;
                const i64 b = q * 64 + t;
                bool any = false;
                const i64 w_end = min(words, (b + 1) * block_words);
                for (i64 w = b * block_words + lane; w < w_end; w += WARP) {
                    const i64 i = v * words + w;
                    const u64 p = P[L * words + w];
                    const u64 d = p & ~seen[i];
                    D[i] = d;
                    if (d) {
                        seen[i] = p;
                        any = true;
                    }
                }
                if (__any_sync(0xffffffffu, any) && lane == (unsigned)q) got |= 1ull << t;
            }
        }
        if ((i64)lane < bitmap_words) dblocks[v * bitmap_words + lane] = got;
    }
}

// Open-addressing set of edge keys (linear probing, EMPTY_KEY marks a free slot, entries
// are never removed: the host rebuilds the table from the edge list when merges relabel
// nodes or it fills). True when `key` was absent and this call inserted it. A slot only
// ever goes from empty to a key, so a stale read of a slot is either right or empty, and
// the CAS settles the empty case. After `max_probes` probes the key is reported absent and
// *overflow set: the caller keeps it, and the host then deduplicates the round's keys
// itself.
constexpr i64 EMPTY_KEY = -1;

__device__ __forceinline__ bool table_insert(i64* table, u64 mask, i64 key, int max_probes,
                                             u64* overflow) {
    u64 h = mg::mix64((u64)key) & mask;
    for (int probe = 0; probe < max_probes; ++probe) {
        i64 cur = mg::load_volatile(table + h);
        if (cur == EMPTY_KEY) {
            cur = (i64)atomicCAS((unsigned long long*)(table + h), (unsigned long long)EMPTY_KEY,
                                 (unsigned long long)key);
            if (cur == EMPTY_KEY) return true;
        }
        if (cur == key) return false;
        h = (h + 1) & mask;
    }
    *overflow = 1ull;
    return true;
}

// Probes before giving up (the host keeps the table at most half full, where a run of 32
// occupied slots is very unlikely; a full table must not cost hundreds per key).
constexpr int MAX_PROBES = 32;

// Inserts keys[0, n) into the table (the host's rebuild after merges or growth).
extern "C" __global__ void insert_keys(i64* table, u64 mask, const i64* keys, i64 n,
                                       u64* overflow) {
    for (i64 i = mg::global_tid(); i < n; i += mg::global_stride())
        table_insert(table, mask, keys[i], MAX_PROBES, overflow);
}

// Reserves consecutive slots of counter `*count` for the lanes of a full warp whose `want`
// is set: one atomicAdd per warp step instead of one per key (the counter is shared by the
// whole grid). Returns this lane's slot (meaningful where want is set).
__device__ __forceinline__ u64 warp_reserve(u64* count, bool want) {
    const unsigned m = __ballot_sync(0xffffffffu, want);
    if (!m) return 0;
    const int first = __ffs(m) - 1;
    u64 base = 0;
    if (mg::lane_id() == (unsigned)first) base = atomicAdd(count, (u64)__popc(m));
    base = __shfl_sync(0xffffffffu, base, first);
    return base + __popc(m & ((1u << mg::lane_id()) - 1u));
}

// One warp per complex constraint (kind 2 load, 3 store, 4 gep, 5 online HCD fact with
// src = x, dst = y), reading only the blocks of the pointer's delta row that take_delta
// flagged; each step every lane handles one object of its word, so the warp stays
// converged for the slot reservations. Edge keys (dst*n+src) go through the key table
// first, so the buffer receives only keys that no earlier round or other constraint
// produced: the rounds produce the same edges again and again (constraints that merges
// made identical, objects a merged leader sees anew). Self loops are dropped too.
// HCD facts: every object a (not the null object 1) of pts(x) joins y's node. One php round
// makes 8 million such (y, a) pairs, whose union on the host took 1.7 s; claim[a] (reset
// each round) keeps the smallest y that asked for a, and only pairs that add a link go out:
// (y, a) when y is the first or a smaller claimant, (y, old claimant) otherwise (y ~ old ~
// a, deduplicated by the table), so the host unions about one pair per merged node.
// counters: [0] edge keys written, [1] low word: a gep added a bit, [2] merge pairs
// written (y * n + a), [3] objects read from deltas, [4] the table overflowed (a key may
// repeat; set by table_insert and sticky until the host rebuilds the table).
// Keys past a buffer's capacity are counted but not written: the host grows the buffer,
// rebuilds the table from the known edges and reruns (D is unchanged, gep bits are ORed).
extern "C" __global__ void eval_complex(
    const int* kind, const i64* c_src, const i64* c_dst, const i64* c_off, i64 n_complex,
    const u64* D, const u64* dblocks, u64* P, i64 words, const i64* objects,
    const i64* node_of_bit, i64 null_bit,
    const i64* obj_size, const i64* node_of_var, const i64* bit_of_var, i64 n_vars,
    i64 n_nodes, i64* table, u64 mask, i64* keys, i64 capacity, i64* merges,
    i64 merge_capacity, u64* counters, i64* claim, int* changed_at, const int* clock,
    u64* occupied, i64 block_words, i64 bitmap_words, u64* ext_blocks) {
    const unsigned lane = mg::lane_id();
    const int stamp = *clock;
    int* gep_changed = (int*)(counters + 1);
    u64* overflow = counters + 4;
    u64 raw = 0;
    for (i64 c = warp_global_id(); c < n_complex; c += warp_count()) {
        const int k = kind[c];
        const i64 src = c_src[c], dst = c_dst[c], off = c_off[c];
        const i64 ptr = (k == 3) ? dst : src;
        i64 hot = -1;  // warp-uniform: the node this constraint handled last (see below)
        const u64* drow = D + ptr * words;
        const u64 mine = (i64)lane < bitmap_words ? dblocks[ptr * bitmap_words + lane] : 0ull;
        for (i64 q = 0; q < bitmap_words; ++q) {
            u64 bits = __shfl_sync(0xffffffffu, mine, (int)q);
            while (bits) {
                const int t = __ffsll((long long)bits) - 1;
                bits &= bits - 1;
                const i64 b = q * 64 + t;
                const i64 w_begin = b * block_words, w_end = min(words, (b + 1) * block_words);
                for (i64 w0 = w_begin; w0 < w_end; w0 += WARP) {  // warp-uniform bounds
                    const i64 w = w0 + lane;
                    u64 d = w < w_end ? drow[w] : 0ull;
                    raw += __popcll(d);
                    while (__any_sync(0xffffffffu, d != 0ull)) {
                        i64 key = -1;  // this lane's edge key or merge pair, if any
                        i64 tag = -1;  // loads, stores, HCD facts: the object's node
                        if (d) {
                            const int bit = __ffsll((long long)d) - 1;
                            d &= d - 1;
                            const i64 b = w * 64 + bit;
                            // Offset 0 (most loads and stores, every HCD fact) needs only
                            // the object's node: one read of node_of_bit instead of the
                            // object, its size and its node.
                            const bool whole = k != 4 && off == 0;
                            const i64 obj = whole ? -1 : objects[b];
                            if (k == 4) {
                                const i64 tbit = pta::gep_bit(obj, off, obj_size, bit_of_var,
                                                              n_vars);
                                if (tbit >= 0) {  // always: layout closes objects under geps
                                    const u64 m = 1ull << (tbit & 63);
                                    const u64 old = atomicOr(&P[dst * words + (tbit >> 6)], m);
                                    if (!(old & m)) {
                                        mark_occupied(occupied, dst, tbit >> 6, block_words,
                                                      bitmap_words);
                                        mark_occupied(ext_blocks, dst, tbit >> 6, block_words,
                                                      bitmap_words);
                                        changed_at[dst] = stamp;
                                        *gep_changed = 1;
                                    }
                                }
                            } else if (k == 5) {
                                const i64 a = b == null_bit ? dst : node_of_bit[b];
                                tag = a != dst ? a : -1;
                            } else {
                                const i64 tn =
                                    !whole ? pta::field_node(obj, off, k == 3, obj_size,
                                                             node_of_var, n_vars)
                                    : (k == 3 && b == null_bit) ? -1 : node_of_bit[b];
                                tag = tn >= 0 && tn != (k == 2 ? dst : src) ? tn : -1;
                            }
                        }
                        if (k == 4) continue;  // warp-uniform
                        // Objects whose nodes this constraint has just handled give nothing
                        // new: merged cycles put thousands of objects under one node (svn:
                        // 18.5 M (load or store, object) visits make 28 k distinct (constraint,
                        // node) keys). A node repeated in this step goes to its lowest lane,
                        // and the node of the last step's highest lane (hot) is skipped, so
                        // runs of one node cost no table probes.
                        const unsigned peers = __match_any_sync(0xffffffffu,
                                                                (unsigned long long)tag);
                        const bool first = tag >= 0 && tag != hot &&
                                           !(peers & ((1u << lane) - 1u));
                        const unsigned tagged = __ballot_sync(0xffffffffu, tag >= 0);
                        if (tagged) hot = __shfl_sync(0xffffffffu, tag, 31 - __clz(tagged));
                        if (first && k == 5) {
                            // claim is reset to ~0 (unclaimed) by the host.
                            const u64 old = atomicMin((unsigned long long*)(claim + tag),
                                                      (unsigned long long)dst);
                            const i64 other = (u64)dst < old ? tag : (i64)old;
                            if (other != dst) {
                                const i64 pair = dst * n_nodes + other;
                                if (table_insert(table, mask, n_nodes * n_nodes + pair,
                                                 MAX_PROBES, overflow))
                                    key = pair;
                            }
                        } else if (first) {
                            const i64 from = k == 2 ? tag : src, to = k == 2 ? dst : tag;
                            if (table_insert(table, mask, to * n_nodes + from, MAX_PROBES,
                                             overflow))
                                key = to * n_nodes + from;
                        }
                        const u64 slot = warp_reserve(counters + (k == 5 ? 2 : 0), key >= 0);
                        if (key >= 0 && (i64)slot < (k == 5 ? merge_capacity : capacity))
                            (k == 5 ? merges : keys)[slot] = key;
                    }
                }
            }
        }
    }
    if (raw) atomicAdd(counters + 3, raw);
}

// Merges a sorted batch of distinct keys, none of them in `old` (sorted), into `out`:
// every key finds its place by one binary search in the other list (no ties: the lists are
// disjoint), so a round that adds a few thousand edges to a list of 10^5-10^6 costs one
// launch instead of a sort of the whole list. The batch holds its keys plus `bias` (the
// round's in- and out-keys are sorted as one list, the out-keys biased past every
// in-key: pair_keys). flag (optional): 1 for a batch key, 0 for an old one;
// low = key % n_nodes (the CSR's neighbour column). One thread per key.
__device__ __forceinline__ i64 lower_bound(const i64* a, i64 n, i64 key) {
    i64 lo = 0, hi = n;
    while (lo < hi) {
        const i64 mid = (lo + hi) >> 1;
        if (a[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

extern "C" __global__ void merge_batch(const i64* old, i64 n_old, const i64* batch, i64 n_batch,
                                       i64 bias, i64* out, unsigned char* flag, i64* low,
                                       i64 n_nodes) {
    const i64 total = n_old + n_batch;
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        i64 key, pos;
        unsigned char f;
        if (i < n_old) {
            key = old[i];
            pos = i + lower_bound(batch, n_batch, key + bias);
            f = 0;
        } else {
            key = batch[i - n_old] - bias;
            pos = (i - n_old) + lower_bound(old, n_old, key);
            f = 1;
        }
        out[pos] = key;
        if (flag) flag[pos] = f;
        low[pos] = key % n_nodes;
    }
}

// The round's new edge keys (dst * n + src) and their reversed keys (src * n + dst) biased
// by n * n, in one list for one sort (the batch of both merge_batch calls): out[i] =
// keys[i], out[n_keys + i] = n * n + reversed. Keys stay below 2 n^2, as the table's merge
// pairs do.
extern "C" __global__ void pair_keys(const i64* keys, i64 n_keys, i64 n_nodes, i64* out) {
    for (i64 i = mg::global_tid(); i < n_keys; i += mg::global_stride()) {
        const i64 key = keys[i];
        out[i] = key;
        out[n_keys + i] = n_nodes * n_nodes + (key % n_nodes) * n_nodes + key / n_nodes;
    }
}

// Merged nodes: each member's row is ORed into its leader's, and the leader's ext_blocks
// name the blocks where the rows of the group were not all equal: an out-neighbour of the
// leader or of a member (all the leader's now) held one of those rows, so only there can
// the union hold something it lacks. (A thread whose OR found a word other than its
// member's marks the block; if the group's words differ, some member's thread finds one:
// the first to OR sees the leader's old word, a later one the union so far.) Every block
// was marked before: one merged node then sent its whole set down every out-edge. The
// leader pulls nothing extra: at the end of the last propagation every member held its
// in-neighbours' sets, and the leader now holds the members'. What the complex rules have
// read stays with each pointer node (take_delta), so nothing else moves. The leader also
// takes each member's own ext_blocks: blocks that a gep or address-of rule grew in the
// member since the last propagation have not reached the member's out-neighbours yet,
// and equal rows would not mark them (before: a gep grew a member, a cycle merged it into
// a leader that held the same row, and the member's out-neighbours never got the block;
// tests/test_pta_gpu_rounds.py's propagate stand-in checks this invariant).
// The members (current leaders) and their new leaders (current leaders that stay) are
// member[0, *count), root[0, *count), with the count on the device (written by
// list_merges or find_cycles: the host never reads it before the launch); leader[member]
// = root here, and relabel_labels then maps every label through `leader`. Grid-stride
// over (member, word); the host launches a fixed grid.
extern "C" __global__ void merge_rows(u64* P, const i64* member, const i64* root,
                                      const u64* count, i64 words, int* changed_at,
                                      u64* ext_blocks, const int* clock, u64* occupied,
                                      i64 block_words, i64 bitmap_words, i64* leader) {
    const i64 total = (i64)*count * words;
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        const i64 m = member[i / words], L = root[i / words], w = i % words;
        const u64 mine = P[m * words + w];
        if (atomicOr(&P[L * words + w], mine) != mine)
            mark_occupied(ext_blocks, L, w, block_words, bitmap_words);
        if (w < bitmap_words) {  // bitmap_words <= words
            atomicOr(&occupied[L * bitmap_words + w], occupied[m * bitmap_words + w]);
            const u64 grown = ext_blocks[m * bitmap_words + w];
            if (grown) atomicOr(&ext_blocks[L * bitmap_words + w], grown);
        }
        if (w == 0) {
            changed_at[L] = *clock;
            leader[m] = L;
        }
    }
}

// After merge_rows: every node label the solver keeps goes to its new leader, label =
// leader[label] (one step: a label is a leader of before the merge, and leader[] of such
// a node is now its new leader, which maps to itself; a thread reading leader[m] while m's
// own thread rewrites it reads the same value): leader itself, node_of_var, node_of_bit,
// and each complex constraint's end other than its pointer (the store's src, everyone
// else's dst: a pointer end keeps its node, see take_delta). Nothing to do when *count
// is 0 (most rounds' cycle-less or merge-less case costs one launch that returns).
extern "C" __global__ void relabel_labels(const u64* count, i64* leader, i64 n_nodes,
                                          i64* node_of_var, i64 n_vars, i64* node_of_bit,
                                          i64 n_bits, const int* kind, i64* c_src, i64* c_dst,
                                          i64 n_complex) {
    if (*count == 0ull) return;
    const i64 total = n_nodes + n_vars + n_bits + n_complex;
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        i64* label;
        if (i < n_nodes) label = leader + i;
        else if (i < n_nodes + n_vars) label = node_of_var + (i - n_nodes);
        else if (i < n_nodes + n_vars + n_bits) label = node_of_bit + (i - n_nodes - n_vars);
        else {
            const i64 c = i - n_nodes - n_vars - n_bits;
            label = kind[c] == 3 ? c_src + c : c_dst + c;
        }
        const i64 x = *label;
        const i64 to = mg::load_volatile(leader + x);
        if (to != x) *label = to;
    }
}

// HCD merges on the device: the round's merge pairs (y * n + a, counted in *n_pairs, at
// most `capacity` written) join their nodes; each group's smallest node leads it, as on
// the host path (layout.union_leaders). union_pairs links roots of `parent` (a forest over
// the nodes, every current leader its own root: members never come back as pair ends,
// so it needs no reset) by CAS, the larger root under the smaller: a root only ever goes
// under a smaller id, so the forest stays acyclic and each group's root ends as its
// smallest node. list_merges (a later launch: every link done) writes each pair end that
// is not its group's root once (listed[], likewise never reset) as (member, root), the
// number in *n_members: merge_rows' lists. Pairs are few (about one per merged node).
__device__ __forceinline__ i64 find_root(const i64* parent, i64 v) {
    for (i64 p = mg::load_volatile(parent + v); p != v; p = mg::load_volatile(parent + v)) v = p;
    return v;
}

extern "C" __global__ void union_pairs(const i64* pairs, const u64* n_pairs, i64 capacity,
                                       i64 n_nodes, i64* parent) {
    const i64 total = min((i64)*n_pairs, capacity);
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        i64 a = pairs[i] % n_nodes, b = pairs[i] / n_nodes;
        while (true) {
            a = find_root(parent, a);
            b = find_root(parent, b);
            if (a == b) break;
            const i64 hi = max(a, b), lo = min(a, b);
            if ((i64)atomicCAS((unsigned long long*)(parent + hi), (unsigned long long)hi,
                               (unsigned long long)lo) == hi)
                break;
        }
    }
}

extern "C" __global__ void list_merges(const i64* pairs, const u64* n_pairs, i64 capacity,
                                       i64 n_nodes, const i64* parent, int* listed,
                                       i64* member, i64* root, u64* n_members) {
    const i64 total = 2 * min((i64)*n_pairs, capacity);
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        const i64 pair = pairs[i >> 1];
        const i64 v = (i & 1) ? pair / n_nodes : pair % n_nodes;
        const i64 r = find_root(parent, v);
        if (r != v && atomicExch(listed + v, 1) == 0) {
            const i64 at = (i64)atomicAdd(n_members, 1ull);
            member[at] = v;
            root[at] = r;
        }
    }
}

// Relabelling the edge keys after merges, in three launches around one sort and one scan
// (gpu.py _relabel_keys): relabel_tag maps both ends of every known key (tag 0) and of the
// round's new keys (tag 1) through `relabel` and writes key * 2 + tag, or SELF_LOOP (sorts
// last) where both ends now share a node; after the sort, first_of_key flags the first of
// each run of equal keys (a known edge's tag 0 sorts ahead of a new one's), and
// scatter_kept writes the kept keys at their scanned positions with the new-edge flag, the
// in-CSR's source column and the key of the reversed edge (for the out-CSR's sort).
constexpr i64 SELF_LOOP = 0x7fffffffffffffffll;

extern "C" __global__ void relabel_tag(const i64* old, i64 n_old, const i64* batch, i64 n_batch,
                                       const i64* relabel, i64 n_nodes, i64* tagged) {
    const i64 total = n_old + n_batch;
    for (i64 i = mg::global_tid(); i < total; i += mg::global_stride()) {
        const bool is_new = i >= n_old;
        const i64 key = is_new ? batch[i - n_old] : old[i];
        const i64 d = relabel[key / n_nodes], s = relabel[key % n_nodes];
        tagged[i] = d == s ? SELF_LOOP : (d * n_nodes + s) * 2 + (is_new ? 1 : 0);
    }
}

extern "C" __global__ void first_of_key(const i64* tagged, i64 n, i64* keep) {
    for (i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        const i64 t = tagged[i];
        keep[i] = t != SELF_LOOP && (i == 0 || (tagged[i - 1] >> 1) != (t >> 1)) ? 1 : 0;
    }
}

extern "C" __global__ void scatter_kept(const i64* tagged, const i64* position, i64 n,
                                        i64 n_nodes, i64* keys, unsigned char* is_new,
                                        i64* src, i64* reversed) {
    for (i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        const i64 t = tagged[i];
        if (t == SELF_LOOP || (i > 0 && (tagged[i - 1] >> 1) == (t >> 1))) continue;
        const i64 at = position[i] - 1;  // inclusive scan of first_of_key
        const i64 key = t >> 1;
        keys[at] = key;
        is_new[at] = (unsigned char)(t & 1);
        src[at] = key % n_nodes;
        reversed[at] = (key % n_nodes) * n_nodes + key / n_nodes;
    }
}

// Sweep 0's extra items and the hubs (chunks_of below), listed on the device so that a
// propagation needs no host round trip: every node v with more than hub_min in-edges
// appends its chunks 1 .. k-1 (items v + c * n_nodes) after the n_nodes plain items of
// `active`, and itself to `hubs`; counts[0] and counts[1] (zeroed by the host) end as the
// numbers of extra items and of hubs, which propagate reads. A hub's bitmap in gained
// buffer 0 is cleared here (its chunks OR into it during sweep 0). One thread per node.
extern "C" __global__ void list_hub_chunks(const i64* in_ptr, i64 n_nodes, i64 hub_min,
                                           i64 hub_chunk, i64* active, i64* hubs,
                                           unsigned long long* counts, u64* gained_blocks,
                                           i64 bitmap_words) {
    for (i64 v = mg::global_tid(); v < n_nodes; v += mg::global_stride()) {
        const i64 deg = in_ptr[v + 1] - in_ptr[v];
        if (deg <= hub_min) continue;
        const i64 extra = (deg + hub_chunk - 1) / hub_chunk - 1;
        const i64 at = (i64)atomicAdd(counts, (unsigned long long)extra);
        for (i64 c = 1; c <= extra; ++c) active[n_nodes + at + c - 1] = v + c * n_nodes;
        hubs[atomicAdd(counts + 1, 1ull)] = v;
        for (i64 q = 0; q < bitmap_words; ++q) gained_blocks[v * bitmap_words + q] = 0ull;
    }
}

// In-edge chunks of a hub: a node with more than hub_min in-edges (hub_chunk > 0) is pulled
// by ceil(in-degree / hub_chunk) work items, item v + c * n_nodes pulling in-edges
// [c * hub_chunk, (c + 1) * hub_chunk) of v, each by its own warp. One warp scanning a
// merged leader's hundreds of in-edges (and pulling every block its changed neighbours
// offer, one memory round trip after another) otherwise sets the length of every sweep that
// queues it. hub_min >= hub_chunk, so a node of one chunk is never a hub.
__device__ __forceinline__ i64 chunks_of(const i64* in_ptr, i64 v, i64 hub_min, i64 hub_chunk) {
    if (hub_chunk <= 0) return 1;
    const i64 deg = in_ptr[v + 1] - in_ptr[v];
    return deg > hub_min ? (deg + hub_chunk - 1) / hub_chunk : 1;
}

// Pull sweeps to the fixed point of the copy edges, with difference propagation over
// blocks of `block_words` words (a multiple of the warp width: one coalesced warp step per
// 32 words) and a worklist of the nodes to pull. in_ptr/in_src: incoming CSR (sorted by
// destination), in_new flags the edges added this round; out_ptr/out_dst: the same edges
// by source.
//
// Sweep 0 pulls every item of `active` (every node, and the further chunks of hubs):
// along a new edge the in-neighbour's whole row
// (every block its `occupied` bitmap names: each kernel that sets a bit marks its block
// there), along an old edge the blocks of ext_blocks (those that gep, merge or address-of
// rules grew since the last propagation, which stamped changed_at == the clock at launch;
// the host zeroes ext_blocks after each propagation). A block an owner fills during sweep
// 0 after the reader read its bitmap is in the owner's gained blocks, read in sweep 1.
// Every later sweep pulls only the nodes queued by the previous one and reads only the
// blocks an in-neighbour gained in the previous sweep: node u that gains in sweep s writes
// the bitmap of its gained blocks to gained_blocks[s % 3][u], stamps swept_at[s & 1][u] and
// queues its out-neighbours (once each per sweep: queued_at; a hub as all its chunks) for
// sweep s + 1. A puller in sweep s + 1 reads bitmap buffer s % 3, which nobody writes in
// that sweep, so the bitmaps are exact. Three buffers, not two, for the hubs: their chunks
// OR their gains into a bitmap that must start empty, and buffer (s + 1) % 3 (read in
// sweep s - 1, written in s + 1) is cleared for the hubs (`hubs`) during sweep s;
// list_hub_chunks clears the hubs' buffer 0 before the launch. The words themselves are
// read from P (which its owner may be growing in the same sweep): sets only grow, so a
// stale word is a subset of the final one and still covers the block's gain as of the
// end of the previous sweep; anything the reader missed is in the owner's bitmap of this
// sweep, read next sweep. Invariant at every barrier: P[v] holds P[u] minus u's last
// gained blocks for every edge u -> v, so a sweep that queues nobody ends at the fixed
// point. Only the warp that owns v (or, for a hub, one of its chunks' warps, with
// atomicOr) writes row v and its bitmaps; the first chunk to gain (atomicExch of
// swept_at) queues the out-neighbours. A warp pulls the in-edges 32 at a time, block by
// block over the union of the blocks they offer, loading the 32 neighbours' words of a
// block in batches (pull_block), so a node with many changed in-neighbours costs memory
// round trips per block and batch, not per neighbour.
//
// Queues: sweep s pulls list s % 3 and fills list (s + 1) % 3 through a shared-memory
// BlockWorklist flushed once per block before the barrier; list (s + 2) % 3 was read in
// sweep s - 1 and is next filled in sweep s + 1, so it is emptied during sweep s. Each list
// holds at most list_cap = n_nodes + (in-edges / hub_chunk) items (queued_at), so none
// overflows. The host zeroes todo_tail before each launch.
extern "C" __global__ void __launch_bounds__(PTA_BLOCK) propagate(
    u64* P, i64 words, i64 block_words, i64 bitmap_words, const i64* active,
    const unsigned long long* hub_counts,
    i64 n_nodes, const i64* in_ptr, const i64* in_src, const unsigned char* in_new,
    const i64* out_ptr, const i64* out_dst, const u64* ext_blocks, const int* changed_at,
    int* swept_at,
    u64* gained_blocks, u64* occupied, int* queued_at, i64* todo, u64* todo_tail, int* clock,
    int max_sweeps, int* error, i64* sweep_log, i64 sweep_log_cap, i64 list_cap, i64 hub_min,
    i64 hub_chunk, const i64* hubs, unsigned* barrier_state) {
    __shared__ mg::BlockWorklist<i64, PTA_QUEUE_CAP, PTA_BLOCK> queue;
    mg::GridBarrier bar(barrier_state);
    queue.init();
    const unsigned lane = mg::lane_id();
    const int base = mg::load_volatile(clock);
    // Written by list_hub_chunks before this launch: sweep 0's extra items, the hubs.
    const i64 n_active = n_nodes + (i64)hub_counts[0], n_hubs = (i64)hub_counts[1];
    int sweep = 0;
    for (;; ++sweep) {
        const int stamp = base + 1 + sweep;
        const i64 cur = sweep & 1, prev = cur ^ 1;
        const i64 buf_w = sweep % 3, buf_r = (sweep + 2) % 3, buf_clear = (sweep + 1) % 3;
        const i64* items = sweep == 0 ? active : todo + (sweep % 3) * list_cap;
        const i64 n_items = sweep == 0 ? n_active
                                       : (i64)mg::load_volatile(todo_tail + sweep % 3);
        // Optional profile: (global timer ns, items) at the start of each sweep, for the
        // latency per sweep of the host's profile script (sweep_log null: off).
        if (sweep_log && mg::global_tid() == 0) {
            const i64 at = mg::load_volatile(sweep_log);
            if (at < sweep_log_cap) {
                u64 ns;
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
                sweep_log[1 + 2 * at] = (i64)ns;
                sweep_log[2 + 2 * at] = sweep == 0 ? -1 - n_items : n_items;  // < 0: a launch
                sweep_log[0] = at + 1;
            }
        }
        for (i64 i = mg::global_tid(); i < n_hubs * bitmap_words; i += mg::global_stride())
            gained_blocks[(buf_clear * n_nodes + hubs[i / bitmap_words]) * bitmap_words +
                          i % bitmap_words] = 0ull;
        i64* next = todo + ((sweep + 1) % 3) * list_cap;
        u64* next_tail = todo_tail + (sweep + 1) % 3;
        if (mg::global_tid() == 0) todo_tail[(sweep + 2) % 3] = 0ull;
        for (i64 a = warp_global_id(); a < n_items; a += warp_count()) {
            // Volatile reads for everything other SMs wrote in earlier sweeps of this launch:
            // L1 is not coherent, and a node's owner warp changes from sweep to sweep.
            const i64 item = mg::load_volatile(items + a);
            const i64 v = item % n_nodes, chunk = item / n_nodes;
            i64 e_begin = in_ptr[v], e_end = in_ptr[v + 1];
            const bool hub = hub_chunk > 0 && e_end - e_begin > hub_min;  // warp-uniform
            if (hub) {
                e_begin += chunk * hub_chunk;
                e_end = min(e_end, e_begin + hub_chunk);
            }
            u64* vrow = P + v * words;
            // Lane q holds bits q*64 .. q*64+63 of v's gained-block bitmap (the host keeps
            // bitmap_words <= 32).
            u64 gained = 0ull;
            // In-edges are read SCAN_GROUPS warp-widths at a time (their loads in flight
            // together); each group of 32 is then pulled block by block.
            for (i64 e0 = e_begin; e0 < e_end; e0 += SCAN_GROUPS * WARP) {
                i64 u[SCAN_GROUPS];
                bool whole[SCAN_GROUPS], fresh_edge[SCAN_GROUPS], partial[SCAN_GROUPS];
#pragma unroll
                for (int g = 0; g < SCAN_GROUPS; ++g) {
                    const i64 e = e0 + g * WARP + lane;
                    u[g] = e < e_end ? in_src[e] : -1;
                }
#pragma unroll
                for (int g = 0; g < SCAN_GROUPS; ++g) {
                    const i64 e = e0 + g * WARP + lane;
                    whole[g] = fresh_edge[g] = partial[g] = false;
                    if (u[g] < 0) continue;
                    if (sweep == 0) {
                        fresh_edge[g] = in_new[e];
                        whole[g] = fresh_edge[g] || mg::load_volatile(changed_at + u[g]) == base;
                    } else {
                        partial[g] = mg::load_volatile(swept_at + prev * n_nodes + u[g]) ==
                                     stamp - 1;
                    }
                }
#pragma unroll
                for (int g = 0; g < SCAN_GROUPS; ++g) {
                    if (!__any_sync(0xffffffffu, whole[g] || partial[g])) continue;
                    const u64* bits = gained_blocks +
                                      (buf_r * n_nodes + (partial[g] ? u[g] : 0)) * bitmap_words;
                    for (i64 q = 0; q < bitmap_words; ++q) {
                        // The blocks this lane's in-neighbour offers, and their union.
                        u64 mine = 0ull;
                        if (whole[g]) {  // a new edge: every block; else the changed ones
                            mine = mg::load_volatile(occupied + u[g] * bitmap_words + q);
                            if (!fresh_edge[g]) mine &= ext_blocks[u[g] * bitmap_words + q];
                        }
                        else if (partial[g]) mine = mg::load_volatile(bits + q);
                        u64 wanted = warp_or(mine);
                        while (wanted) {
                            const int t = __ffsll((long long)wanted) - 1;
                            wanted &= wanted - 1;
                            const i64 b = q * 64 + t;
                            const unsigned from = __ballot_sync(0xffffffffu, (mine >> t) & 1ull);
                            if (pull_block(P, vrow, words, b * block_words,
                                           min(words, (b + 1) * block_words), from, u[g], hub) &&
                                lane == (unsigned)(b >> 6))
                                gained |= 1ull << (b & 63);
                        }
                    }
                }
            }
            if (__any_sync(0xffffffffu, gained != 0ull)) {
                u64* gb = gained_blocks + (buf_w * n_nodes + v) * bitmap_words;
                bool first = true;  // this warp queues v's out-neighbours
                if (hub) {
                    if ((i64)lane < bitmap_words && gained) {
                        atomicOr(gb + lane, gained);
                        atomicOr(occupied + v * bitmap_words + lane, gained);
                    }
                    int was = 0;
                    if (lane == 0) was = atomicExch(swept_at + cur * n_nodes + v, stamp);
                    first = __shfl_sync(0xffffffffu, was, 0) != stamp;
                } else {
                    if ((i64)lane < bitmap_words) {
                        gb[lane] = gained;
                        u64* occ = occupied + v * bitmap_words + lane;
                        *(volatile u64*)occ = mg::load_volatile(occ) | gained;
                    }
                    if (lane == 0) swept_at[cur * n_nodes + v] = stamp;
                }
                if (first) {
                    for (i64 e = out_ptr[v] + lane; e < out_ptr[v + 1]; e += WARP) {
                        const i64 w = out_dst[e];
                        if (atomicMax(queued_at + w, stamp) < stamp) {
                            const i64 k = chunks_of(in_ptr, w, hub_min, hub_chunk);
                            for (i64 c = 0; c < k; ++c)
                                queue.push_or_spill(w + c * n_nodes, next, next_tail,
                                                    (u64)list_cap);
                        }
                    }
                }
            }
        }
        queue.flush(next, next_tail, (u64)list_cap);
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
