// Borůvka minimum spanning forest in ONE persistent kernel: every round stays on the
// device, separated by mg::grid_sync, and the host reads nothing until the forest is done.
//
// Past the paper's component-based Borůvka (§5, §8.4), where its CPU won on sparse graphs:
// - components are a union-find (parent array, CAS linking of roots, path halving in
//   every find) instead of node-to-component / component-to-nodes maps rebuilt per round;
// - the active edge set is an explicit worklist of edges between different components,
//   refiltered every round, so it shrinks as components merge (no adjacency-list merging,
//   no rescans of dead edges);
// - a component's lightest edge is one 64-bit atomicMin of (weight key << 32 | CSR
//   position): unique values, so ties break by position and every mutually-lightest pair
//   picks the same edge (the paper's smaller-id cycle break becomes implicit: CAS linking
//   cannot form cycles);
// - the edges enter in passes of increasing weight key (the idea of ECL-MST's light-edge
//   filter, taken further; pass rule our own, see "Passes" below).
//
// Passes. On an expander (uniform random graphs, Kronecker) Borůvka's worklist stops
// shrinking after a few rounds: the edges that are no component's lightest keep joining
// different components until the last rounds, so every round rescans them (uniform 2^23,
// degree 8, all edges in one pass: 224M edge-rounds for 33.5M edges; ECL-MST's single
// light pass of 3 entries per vertex: 42M; simulation in NumPy of the rounds). Passes of
// growing size cut that: pass 0 takes the entries with keys at or below the sampled
// quantile of FIRST_PASS_HALVES / 2 entries per vertex (1.5: past a random graph's giant
// component, with few edges left over to rescan); a later pass doubles the entries
// covered, and is split off only while the entries above it are at least as many as
// those below AND the rest is still live: every pass reads all m CSR entries, so it pays
// only where it saves rescans of many live edges. After each pass block 0 samples
// LIVE_SAMPLE hashed entries: those above the pass's keys whose ends still lie in two
// components stand for the live rest; under a quarter of the sample, the next pass takes
// every remaining key (H100 phase tables: a pass's scan of m entries costs what rounds
// cost on roughly m/4 to m/2 live entries, and a later pass's rounds touch each live
// edge about 1.2-2 times). Entries of a later pass whose ends the earlier passes joined
// are dropped while the pass is built (one find per entry on a flattened forest), before
// they cost a round. NumPy simulation of the rounds, live rest after pass 0: uniform 2^23
// degree 8 0.52 m (split again at 3 per vertex, then 0.05 m: the rest), Kronecker 21
// 0.13 m and R-MAT 20 0.16 m (two passes: Kronecker 21 7.7M edge-rounds in five passes
// -> 10.6M in two, three scans of 63.5M entries fewer); road networks (under 3 entries
// per vertex) keep one pass. The sample depends only on the forest, not on timing, so
// the plan (and the rounds) are the same on every run and in the CPU twin (cpu.py).
//
// Phases of pass p, r counting every edge-producing phase (builds and filters):
//   flatten (p > 0): every vertex points at its root; block 0 first samples the live
//            rest (see Passes), which decides after the barrier whether pass p is the
//            last; barrier;
//   build r: every CSR entry whose key lies in pass p's range and whose ends lie in
//            different components goes into wl[r%2] (count in counters[r%3]) and is
//            offered to lightest[root] at its far end; a row's entries are offered at
//            its own root once, as the row's minimum (a hub row's offers would otherwise
//            all hit one word); rows longer than HUGE_ROW are listed in pass 0 as chunks
//            of HUGE_CHUNK entries and swept a block per chunk after one more barrier
//            (a block per row left one block on Kronecker 21's 103K-entry hub for
//            ~550 us of every pass's ~1.2 ms scan);
//   barrier;
//   join r:  an edge that is the lightest of either end is a tree edge: unite the ends,
//            set its CSR position's bit in tree_bits; the edge that won a root resets
//            that root's lightest (no other edge can match it, so the others still to
//            read it compare unequal either way), so the next offers start clean;
//   barrier;
//   filter r + 1: the edges whose ends now lie in different roots go into the other
//            worklist and are offered at both roots;
//   barrier.
// Three counters rotate so a counter is zeroed (in join r, for filter r+1) long after
// its last reader. Reads of the forest in a filter or build use plain (cacheable) loads:
// no root changes there, and path halving only ever replaces a parent by an ancestor, so
// a stale parent still leads to the root; only join's unite needs coherent loads.
//
// Symmetry found, not declared (symmetric = 2, minimum_spanning_tree's matrices): a
// matrix stored both ways runs as a declared-symmetric graph (only the entries (u, v)
// with u < v are read past their column) when every entry (u, v) with v < u has a twin
// (v, u) that orders before it (twin_dominates: same pair, lighter, or as light and, lying
// in an earlier row, earlier): such an entry is never a tree edge, so dropping all of
// them changes no forest, round or pass. Checking that costs a binary search per entry,
// so the verdict is kept in `symmetry_memo` with a fingerprint of what it depends on
// (keys, indices, indptr; summed in the weight pass every launch of this mode makes
// anyway): a later launch on the same content reads the verdict, a changed matrix is
// checked again. Kronecker 21, H100: float64 door (general) 10.4 ms against 6.2 ms for
// the same rounds declared symmetric.
//
// Output: after the last round each block counts the tree bits of its range of bit words
// (and the tree edges of weight zero among them); mst_write_forest, launched right
// behind, turns the counts into ranks and writes the forest ready for the caller, in
// CSR-position order (no sort), with its size and total weight in `stats`, and for each
// edge how many edges of nonzero weight precede it; mst_write_matrix
// (minimum_spanning_tree's CSR result, which holds no stored zeros) may follow it without
// a host read, taking the sizes from `stats` and dropping the zero-weight edges itself.
// The host launches nothing else and reads back once.
//
// Weight keys (MST_KEY_KIND): 0 reads precomputed uint32 keys, 1 maps int32 weights, 2
// maps float32 weights bit-wise (order-preserving; the host does the rest, see keys.py),
// 3 maps float64 weights through float32 and 4 int64 weights through int32, both only
// exact when every weight survives the narrowing: the kernel checks that in one pass over
// the weights before the first build, which also writes the narrowed keys into `narrowed`
// (m words), so the builds read 4 bytes per key instead of 8; where one weight does not
// narrow it stops there with STAT_INEXACT set, so the host maps the weights itself
// (keys.weight_keys) and runs again. SciPy's float64 and CuPy's int64 weights so cost no
// host pass and no read before launch. MST_WEIGHT_T is the C type of the weights
// themselves (copied to the output and summed: in int64 arithmetic, wrapping like
// NumPy's, or in double when MST_WEIGHT_FLOAT is 1).
//
// MST_PROFILE: block 0 stamps the end of every phase (its clock64() and %globaltimer, the
// worklist size after it; a flatten stamps the live sample) into mst_profile, for
// scripts/mst_profile.py; row 0 holds the number of rows written and the start.
#include <morphgpu/common.cuh>
#include <morphgpu/hash.cuh>
#include <morphgpu/barrier.cuh>
#include <morphgpu/worklist.cuh>

#ifndef MST_KEY_KIND
#define MST_KEY_KIND 0
#endif
#ifndef MST_BLOCK
#define MST_BLOCK 256
#endif
#ifndef MST_WEIGHT_T
#define MST_WEIGHT_T int
#endif
#ifndef MST_WEIGHT_FLOAT
#define MST_WEIGHT_FLOAT 0
#endif
// The pass plan (keys.FIRST_PASS_HALVES, keys.MAX_PASSES, keys.LIVE_SPLIT_SHARE); the
// host's twin uses the same values, and scripts/mst_profile.py overrides them to time
// other plans (MST_LIVE_SPLIT_SHARE 0: every planned split, whatever the live rest).
#ifndef MST_FIRST_PASS_HALVES
#define MST_FIRST_PASS_HALVES 3
#endif
#ifndef MST_MAX_PASSES
#define MST_MAX_PASSES 8
#endif
#ifndef MST_LIVE_SPLIT_SHARE
#define MST_LIVE_SPLIT_SHARE 4
#endif
// Kinds 3 and 4 narrow the weights into `narrowed`; the builds read those keys.
#define MST_NARROWS (MST_KEY_KIND == 3 || MST_KEY_KIND == 4)

#ifdef MST_PROFILE
// At global scope, so the host finds it by this name (gpu.py's profile()).
constexpr int PROFILE_ROWS = 1024;  // gpu.PROFILE_ROWS
__device__ unsigned long long mst_profile[PROFILE_ROWS][4];
#endif

namespace {

using mg::eid_t;
using mg::i64;
using mg::u64;
using mg::vid_t;
typedef MST_WEIGHT_T weight_t;

constexpr u64 NO_EDGE = ~0ull;
constexpr unsigned ALL_KEYS = 0xffffffffu;  // the last pass's upper key bound
constexpr int SAMPLE_SIZE = 256;            // keys.SAMPLE_SIZE
constexpr int MAX_PASSES = MST_MAX_PASSES;
// Rows up to SMALL_ROW entries are scanned by one thread (its lanes' rows side by side),
// longer ones by the whole warp, one row after another. At 8, a uniform graph of degree 8
// (Poisson: 41% of its rows, 55% of its entries above 8) sends each warp through ~13 rows
// in turn, a round trip to memory or more per row while the other lanes wait; H100,
// uniform 2^23: 2.3-3.6 ms a build for 67M entries whose indices and keys would stream in
// ~0.2 ms, which that serial walk would explain (not yet measured apart). A thread's row
// of up to 32 entries sits in 4 sectors of indices and of keys, which its later entries
// read from L1; rows past 32 keep the warp (a row takes ceil(len / 32) steps).
// scripts/mst_profile.py times MST_SMALL_ROW=8 against it.
#ifndef MST_SMALL_ROW
#define MST_SMALL_ROW 32
#endif
constexpr int SMALL_ROW = MST_SMALL_ROW;
constexpr int TWIN_SCAN_ROW = 8;            // twin_dominates scans rows up to this length
// Rows longer than this (hubs of R-MAT/Kronecker graphs) would keep one warp busy long
// after the others finish; they are deferred and then swept in chunks of HUGE_CHUNK
// entries, a block per chunk. A huge row has at most len / HUGE_ROW chunks, so the list
// (gpu.py: entries // HUGE_ROW + 1 slots) holds every chunk.
constexpr i64 HUGE_ROW = 1024;
constexpr i64 HUGE_CHUNK = 2 * HUGE_ROW;
// Hashed CSR entries sampled after a pass (keys.LIVE_SAMPLE, keys.LIVE_SALT): the next
// pass splits only while at least 1 / MST_LIVE_SPLIT_SHARE of them are live above it.
constexpr int LIVE_SAMPLE = 1024;
constexpr unsigned LIVE_SALT = 0x9e3779b9u;
// The symmetry check's threads each take this many consecutive entries (one row search).
constexpr i64 VERIFY_CHUNK = 16;
constexpr u64 FP_WEYL = 0x9E3779B97F4A7C15ull;  // kernels/fingerprint.cu's constant
static_assert(MST_BLOCK >= SAMPLE_SIZE, "a block samples one key per thread");
static_assert(MAX_PASSES >= 1 && MAX_PASSES <= 32, "pass count");

#ifdef MST_PROFILE
enum Phase : unsigned {
    PH_INIT = 1, PH_NARROW, PH_FLATTEN, PH_BUILD, PH_HUGE, PH_JOIN, PH_FILTER, PH_VERIFY
};
// Block 0's thread 0 after a barrier: (phase | pass << 8 | round << 16, count, clock,
// global ns).
__device__ __forceinline__ void profile_stamp(int* row, unsigned phase, int pass, int round,
                                              u64 count) {
    if (blockIdx.x == 0 && threadIdx.x == 0 && *row < PROFILE_ROWS) {
        mst_profile[*row][0] = phase | ((u64)pass << 8) | ((u64)round << 16);
        mst_profile[*row][1] = count;
        mst_profile[*row][2] = clock64();
        mst_profile[*row][3] = mg::global_timer_ns();
        ++*row;
    }
}
#define MST_STAMP(phase, pass, round, count) profile_stamp(&profile_row, phase, pass, round, count)
#else
#define MST_STAMP(phase, pass, round, count) ((void)0)
#endif

// Slots of the kernel's `stats` (gpu.py's STAT_* names mirror them).
enum Stat : int {
    STAT_ROUNDS = 0,
    STAT_OVERFLOW = 1,       // 1: a worklist overflowed (declared symmetric, but is not)
    STAT_PASSES = 2,         // passes run (block_pass_plan's, cut short by the live sample)
    STAT_FOREST_EDGES = 3,
    STAT_TOTAL = 4,          // the forest's weight: int64 bits, or double bits
    STAT_ZERO_EDGES = 5,     // forest edges of weight zero (minimum_spanning_tree drops them)
    STAT_FIRST_NAN = 6,      // the first CSR entry whose weight is NaN (~0: none)
    STAT_BLOCKS_DONE = 7,    // mst_write_forest's blocks that have added their total
    STAT_BARRIER_ABORT = 8,  // mst_boruvka's barrier abort word, read with the stats
    STAT_INEXACT = 9,        // 1: a weight does not narrow to its key (kinds 3, 4): no forest
    STAT_FINGERPRINT = 10,   // symmetric = 2: the keys' and structure's fingerprint
    STAT_ASYMMETRIC = 11,    // symmetric = 2: 1 once an entry without a dominating twin is found
    STAT_LIVE_SAMPLE = 12,   // the live sample of the latest pass decision (block 0)
    STAT_SYMMETRIC_RUN = 13, // symmetric = 2: 1 when the launch ran as symmetric
    STAT_SLOTS = 14
};

// Block-wide: the sum of every thread's value, on every thread.
template <typename T>
__device__ __forceinline__ T block_sum(T value) {
    T total;
    mg::block_exclusive_sum<MST_BLOCK, T>(value, &total);
    return total;
}

// The row holding CSR position p: the last row starting at or before p (empty rows
// share their start with the next row, so the last of them is the one holding p).
__device__ __forceinline__ vid_t row_of(const eid_t* __restrict__ indptr, vid_t n, eid_t p) {
    vid_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const vid_t mid = lo + ((hi - lo + 1) >> 1);
        if (__ldg(indptr + mid) <= p) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

// A worklist entry: the roots of its ends when it was pushed, and its packed order value.
struct Edge {
    vid_t u;
    vid_t v;
    u64 packed;
};

#if MST_NARROWS
// Kind 3: a float64 weight through float32; kind 4: an int64 weight through int32. Exact
// only when the weight survives the narrowing (checked: weight_narrows).
__device__ __forceinline__ unsigned narrow_key(weight_t w) {
#if MST_KEY_KIND == 3
    unsigned bits = __float_as_uint((float)w);
    if (bits == 0x80000000u) bits = 0u;  // -0.0 keys as +0.0
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
#else
    return (unsigned)(int)w ^ 0x80000000u;
#endif
}
#endif

// The key of weight j read from the weights themselves (the sample, the narrowing pass).
__device__ __forceinline__ unsigned key_at(const void* __restrict__ source, i64 j) {
#if MST_KEY_KIND == 1
    return (unsigned)__ldg((const int*)source + j) ^ 0x80000000u;
#elif MST_KEY_KIND == 2
    unsigned bits = __float_as_uint(__ldg((const float*)source + j));
    // -0.0 keys as +0.0: equal weights, so the tie goes by CSR position, as in SciPy.
    if (bits == 0x80000000u) bits = 0u;
    return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
#elif MST_NARROWS
    return narrow_key(__ldg((const weight_t*)source + j));
#else
    return __ldg((const unsigned*)source + j);
#endif
}

// The key of entry j as the builds read it: from `narrowed` for kinds 3 and 4 (written
// in this launch, so a plain load, not the read-only path), else key_at.
__device__ __forceinline__ unsigned build_key(const void* __restrict__ keys, i64 j) {
#if MST_NARROWS
    return ((const unsigned*)keys)[j];
#else
    return key_at(keys, j);
#endif
}

#if MST_NARROWS
// Whether narrow_key orders weight w exactly: kind 3's weights are doubles and kind 4's
// long longs (gpu.py: MST_WEIGHT_T follows the dtype), so the check reads each weight
// once, together with the NaN check.
__device__ __forceinline__ bool weight_narrows(MST_WEIGHT_T w) {
#if MST_KEY_KIND == 3
    // NaN fails too (the host reports the NaN first); so do doubles that are float32
    // subnormals, which the conversion may flush to zero (rank keys take them).
    return (double)(float)w == (double)w;
#else
    return (long long)w >= -2147483648ll && (long long)w <= 2147483647ll;
#endif
}
#endif

// The pass plan: limit[p] is the largest key of pass p (pass p takes the keys in
// (limit[p - 1], limit[p]]; the last limit is ALL_KEYS).
struct PassPlan {
    unsigned limit[MAX_PASSES];
    int count;
};

// Block-wide: the pass plan (keys.pass_limits), computed redundantly by every block so no
// barrier is spent on it: SAMPLE_SIZE sampled keys sorted by rank, then the quantile of
// FIRST_PASS_HALVES / 2 entries per vertex, doubled per pass, while the entries above the
// quantile are at least as many as those below it; a limit equal to the one before
// (ties) or to ALL_KEYS would make an empty pass and is skipped.
__device__ void block_pass_plan(const void* __restrict__ source, i64 n, i64 m, PassPlan* plan) {
    __shared__ unsigned sorted[SAMPLE_SIZE];
    const int t = threadIdx.x;
    const i64 first = max((i64)MST_FIRST_PASS_HALVES * n / 2, (i64)1);  // entries of pass 0
    const bool sampling = m > 0 && 2 * first <= m;
    unsigned mine = 0;
    if (sampling && t < SAMPLE_SIZE) {
        mine = key_at(source, (i64)((u64)mg::mix32((unsigned)t) % (u64)m));
        sorted[t] = mine;
    }
    __syncthreads();
    int rank = 0;
    if (sampling && t < SAMPLE_SIZE) {
        for (int k = 0; k < SAMPLE_SIZE; ++k) {
            const unsigned other = sorted[k];
            rank += (other < mine) || (other == mine && k < t);
        }
    }
    __syncthreads();
    if (sampling && t < SAMPLE_SIZE) sorted[rank] = mine;
    __syncthreads();
    if (t == 0) {
        int count = 0;
        if (sampling) {
            for (i64 target = first; count < MAX_PASSES - 1 && 2 * target <= m; target *= 2) {
                const unsigned limit = sorted[target * SAMPLE_SIZE / m];
                if ((count == 0 || limit > plan->limit[count - 1]) && limit != ALL_KEYS) {
                    plan->limit[count++] = limit;
                }
            }
        }
        plan->limit[count++] = ALL_KEYS;
        plan->count = count;
    }
    __syncthreads();
}

// The keys pass p takes: (lo, hi], lo = -1 for the first pass.
struct KeyRange {
    i64 lo;
    i64 hi;
    __device__ __forceinline__ bool holds(unsigned key) const {
        return (i64)key > lo && (i64)key <= hi;
    }
};

__device__ __forceinline__ vid_t parent_of(const vid_t* parent, vid_t x) {
    return mg::load_volatile(parent + x);
}

// Root of x with path halving, coherent (join's unite, while roots are being linked).
// The store only ever replaces a non-root's parent by one of its ancestors, so it cannot
// undo a link and never touches a root's slot (the only slots linking CASes on); racing
// halvings are benign for the same reason.
__device__ vid_t find_root(vid_t* parent, vid_t x) {
    while (true) {
        const vid_t p = parent_of(parent, x);
        if (p == x) return x;
        const vid_t g = parent_of(parent, p);
        if (g == p) return p;
        *(volatile vid_t*)(parent + x) = g;
        x = g;
    }
}

// Root of x with path halving, in a phase where no root changes (filters, builds, the
// flattening): plain loads may be served by L1 (the barrier before the phase made the
// links visible), and a stale parent is still an ancestor, so the walk ends at the root.
// The late rounds' edges all lead to a few roots, whose slots a coherent load would
// fetch from one L2 line each for every edge.
__device__ __forceinline__ vid_t find_root_stable(vid_t* parent, vid_t x) {
    while (true) {
        const vid_t p = parent[x];
        if (p == x) return x;
        const vid_t g = parent[p];
        if (g == p) return p;
        parent[x] = g;
        x = g;
    }
}

__device__ __forceinline__ bool link_root(vid_t* parent, vid_t root, vid_t to) {
    if (sizeof(vid_t) == 8) {
        auto* slot = (unsigned long long*)(parent + root);
        return atomicCAS(slot, (unsigned long long)root, (unsigned long long)to) ==
               (unsigned long long)root;
    }
    auto* slot = (int*)(parent + root);
    return atomicCAS(slot, (int)root, (int)to) == (int)root;
}

// Larger root under smaller: links only go down in id, so no cycle can form.
__device__ void unite(vid_t* parent, vid_t a, vid_t b) {
    while (true) {
        a = find_root(parent, a);
        b = find_root(parent, b);
        if (a == b) return;
        if (a < b) {
            const vid_t t = a;
            a = b;
            b = t;
        }
        if (link_root(parent, a, b)) return;
    }
}

// One slot of a global queue per calling thread, one atomicAdd per converged group.
__device__ __forceinline__ u64 reserve_slot(u64* tail) {
    const unsigned active = __activemask();
    const unsigned lane = mg::lane_id();
    const int leader = __ffs(active) - 1;
    u64 base = 0;
    if ((int)lane == leader) base = atomicAdd(tail, (u64)__popc(active));
    base = __shfl_sync(active, base, leader);
    return base + (u64)__popc(active & ((1u << lane) - 1u));
}

struct Worklist {
    Edge* items;
    u64* tail;
    i64 capacity;
};

__device__ __forceinline__ void offer(u64* lightest, vid_t root, u64 packed) {
    // Most offers lose; reading first skips the atomic for them.
    if (mg::load_volatile(lightest + root) > packed) atomicMin(lightest + root, packed);
}

__device__ __forceinline__ void store_edge(const Worklist& out, vid_t ru, vid_t rv, u64 packed) {
    const u64 slot = reserve_slot(out.tail);
    // Past capacity the tail still counts: the host sees count > capacity and reports it.
    if (slot < (u64)out.capacity) out.items[slot] = Edge{ru, rv, packed};
}

// The smaller of two packed values over a full warp, on every lane.
__device__ __forceinline__ u64 warp_min(u64 value) {
    for (int d = 16; d > 0; d >>= 1) {
        const u64 other = __shfl_xor_sync(0xffffffffu, value, d);
        value = other < value ? other : value;
    }
    return value;
}

// Block-wide: the smallest value of the block, on thread 0.
__device__ u64 block_min(u64 value) {
    __shared__ u64 warp_mins[MST_BLOCK / 32];
    value = warp_min(value);
    if (mg::lane_id() == 0) warp_mins[mg::warp_id()] = value;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < MST_BLOCK / 32; ++w) value = warp_mins[w] < value ? warp_mins[w] : value;
    }
    __syncthreads();  // warp_mins is free for the next call
    return value;
}

struct Graph {
    const eid_t* indptr;
    const vid_t* indices;
    const void* keys;  // what build_key reads
    i64 n;
    int symmetric;
};

// Whether row v holds an entry (v, u) that orders before `packed`, the entry (u, v) with
// v < u: then (u, v) is a parallel edge that is never any component's lightest (its twin
// joins the same two components and is lighter), so it need not enter the worklist. A
// matrix stored both ways (SciPy's and CuPy's inputs to minimum_spanning_tree, which are
// read with symmetric=0) so keeps about half its entries, as a declared-symmetric graph
// does, without assuming anything: the search is a binary search for u, exact on sorted
// rows; on unsorted ones it may miss the twin (the entry is then kept, as before), and
// whatever it finds is a real entry (v, u). Rows up to TWIN_SCAN_ROW are scanned instead.
__device__ __forceinline__ bool twin_dominates(const Graph& g, vid_t v, vid_t u, u64 packed) {
    i64 lo = (i64)g.indptr[v];
    const i64 end = (i64)g.indptr[v + 1];
    const bool scan = end - lo <= TWIN_SCAN_ROW;
    if (!scan) {
        i64 hi = end;  // the lower bound of u in [lo, end)
        while (lo < hi) {
            const i64 mid = lo + ((hi - lo) >> 1);
            if (__ldg(g.indices + mid) < u) lo = mid + 1;
            else hi = mid;
        }
    }
    // A short row whole; a long one from the lower bound while it names u (parallel
    // edges of a multigraph lie side by side in a sorted row).
    for (i64 k = lo; k < end; ++k) {
        const vid_t t = __ldg(g.indices + k);
        if (t == u && (((u64)build_key(g.keys, k) << 32) | (u64)k) < packed) return true;
        if (t != u && !scan) return false;
    }
    return false;
}

// The CSR entry j of row u (whose root is ru) as a candidate of this pass: stored in the
// worklist and offered at its far end's root if it joins two components; its packed
// value is returned for the caller to offer at ru once per row (NO_EDGE: not a candidate).
// The first pass runs on the identity forest, so it needs no find.
template <bool FIRST>
__device__ __forceinline__ u64 consider_entry(const Graph& g, vid_t* parent, vid_t u, vid_t ru,
                                              i64 j, const KeyRange& range, const Worklist& out,
                                              u64* lightest) {
    const vid_t v = __ldg(g.indices + j);
    if (g.symmetric ? (v <= u) : (v == u)) return NO_EDGE;
    const unsigned key = build_key(g.keys, j);
    if (!range.holds(key)) return NO_EDGE;
    const vid_t rv = FIRST ? v : find_root_stable(parent, v);
    if (ru == rv) return NO_EDGE;
    const u64 packed = ((u64)key << 32) | (u64)j;
    if (!g.symmetric && v < u && twin_dominates(g, v, u, packed)) return NO_EDGE;
    store_edge(out, ru, rv, packed);
    offer(lightest, rv, packed);
    return packed;
}

// The chunks of the huge rows, listed in pass 0: chunk h covers the entries
// [indptr[rows[h]] + chunks[h] * HUGE_CHUNK, + HUGE_CHUNK) of its row.
struct HugeRows {
    vid_t* rows;
    unsigned* chunks;
    u64* count;
    i64 capacity;
};

// Build phase: every CSR entry of the pass. Short rows go one per thread; a warp takes
// the long rows of its lanes together, one row at a time, so rows do not stall a lane;
// huge rows are only listed here (the first pass, chunk by chunk; sweep_huge_rows takes
// them after a barrier, in every pass).
template <bool FIRST>
__device__ void build_from_csr(const Graph& g, vid_t* parent, const KeyRange& range,
                               const Worklist& out, u64* lightest, const HugeRows& huge) {
    const unsigned lane = mg::lane_id();
    const i64 stride = mg::global_stride();
    for (i64 base = mg::global_tid() - lane; base < g.n; base += stride) {
        const i64 u = base + lane;
        i64 begin = 0, end = 0;
        vid_t ru = (vid_t)u;
        if (u < g.n) {
            begin = (i64)g.indptr[u];
            end = (i64)g.indptr[u + 1];
            if (!FIRST && end > begin) ru = find_root_stable(parent, (vid_t)u);
        }
        const bool small = end - begin <= SMALL_ROW;
        if (small) {
            u64 best = NO_EDGE;
            for (i64 j = begin; j < end; ++j) {
                const u64 packed =
                    consider_entry<FIRST>(g, parent, (vid_t)u, ru, j, range, out, lightest);
                best = packed < best ? packed : best;
            }
            if (best != NO_EDGE) offer(lightest, ru, best);
        }
        unsigned long_rows = __ballot_sync(0xffffffffu, !small);
        while (long_rows) {
            const int owner = __ffs(long_rows) - 1;
            long_rows &= long_rows - 1;
            const vid_t row = (vid_t)__shfl_sync(0xffffffffu, u, owner);
            const vid_t row_root = __shfl_sync(0xffffffffu, ru, owner);
            const i64 row_begin = __shfl_sync(0xffffffffu, begin, owner);
            const i64 row_end = __shfl_sync(0xffffffffu, end, owner);
            if (row_end - row_begin > HUGE_ROW) {
                if (FIRST) {
                    const u64 pieces = (u64)((row_end - row_begin + HUGE_CHUNK - 1) / HUGE_CHUNK);
                    u64 first = 0;
                    if (lane == 0) first = atomicAdd(huge.count, pieces);
                    first = __shfl_sync(0xffffffffu, first, 0);
                    for (u64 k = lane; k < pieces; k += 32) {
                        // At most entries / HUGE_ROW chunks in all: the capacity holds them.
                        if (first + k < (u64)huge.capacity) {
                            huge.rows[first + k] = row;
                            huge.chunks[first + k] = (unsigned)k;
                        }
                    }
                }
                continue;
            }
            u64 best = NO_EDGE;
            for (i64 j = row_begin + lane; j < row_end; j += 32) {
                const u64 packed =
                    consider_entry<FIRST>(g, parent, row, row_root, j, range, out, lightest);
                best = packed < best ? packed : best;
            }
            best = warp_min(best);
            if (lane == 0 && best != NO_EDGE) offer(lightest, row_root, best);
        }
    }
}

// After a barrier: each block takes whole chunks of huge rows (HUGE_CHUNK entries keep a
// block's threads busy; blocks share the chunks round-robin, so a hub of any length is
// spread over many blocks), offering each chunk's minimum at the row's root.
template <bool FIRST>
__device__ void sweep_huge_rows(const Graph& g, vid_t* parent, const KeyRange& range,
                                const Worklist& out, u64* lightest, const HugeRows& huge) {
    const u64 listed = mg::load_volatile(huge.count);
    const u64 count = listed < (u64)huge.capacity ? listed : (u64)huge.capacity;
    for (u64 h = blockIdx.x; h < count; h += gridDim.x) {
        const vid_t row = huge.rows[h];
        const vid_t root = FIRST ? row : find_root_stable(parent, row);
        const i64 begin = (i64)g.indptr[row] + (i64)huge.chunks[h] * HUGE_CHUNK;
        const i64 row_end = (i64)g.indptr[row + 1];
        const i64 end = begin + HUGE_CHUNK < row_end ? begin + HUGE_CHUNK : row_end;
        u64 best = NO_EDGE;
        for (i64 j = begin + threadIdx.x; j < end; j += blockDim.x) {
            const u64 packed = consider_entry<FIRST>(g, parent, row, root, j, range, out, lightest);
            best = packed < best ? packed : best;
        }
        best = block_min(best);
        if (threadIdx.x == 0 && best != NO_EDGE) offer(lightest, root, best);
    }
}

// The words of tree_bits this block owns in the output: a contiguous range, the same in
// both kernels (both run on gridDim.x blocks), so counts and ranks line up.
struct WordRange {
    i64 begin;
    i64 end;
};

__device__ __forceinline__ WordRange block_words(i64 m) {
    const i64 words = (m + 31) >> 5;
    const i64 per_block = (words + gridDim.x - 1) / gridDim.x;
    const i64 begin = min(words, (i64)blockIdx.x * per_block);
    return WordRange{begin, min(words, begin + per_block)};
}

// Block-wide, in the last phase of mst_boruvka: how many tree edges this block's words
// hold, into block_sums[blockIdx.x], and how many of them weigh zero, into
// block_sums[2 * gridDim.x + blockIdx.x] (mst_write_forest turns both into ranks).
// Not inlined: counting the zero-weight edges here raised the kernel body's register
// count from 40 to 47 (5 blocks per SM instead of 6).
__device__ __noinline__ void count_tree_bits(i64 m, const unsigned* tree_bits,
                                             const weight_t* __restrict__ weights,
                                             u64* block_sums) {
    const WordRange range = block_words(m);
    u64 mine = 0, zeros = 0;
    for (i64 w = range.begin + threadIdx.x; w < range.end; w += MST_BLOCK) {
        const unsigned bits = tree_bits[w];
        mine += __popc(bits);
        for (unsigned b = bits; b; b &= b - 1) {
            zeros += __ldg(weights + ((w << 5) + (__ffs(b) - 1))) == (weight_t)0;
        }
    }
    const u64 in_block = block_sum<u64>(mine);
    const u64 zeros_in_block = block_sum<u64>(zeros);
    if (threadIdx.x == 0) {
        block_sums[blockIdx.x] = in_block;
        block_sums[2 * gridDim.x + blockIdx.x] = zeros_in_block;
    }
}

// Every weight once, where the kernel needs that: with float weights or narrowed keys
// (NaN has no place in the order: the host raises a ValueError naming the first such
// entry; narrowed keys must be exact, and are written for the builds), and with
// `fingerprint` (symmetric = 2) the fingerprint of what the symmetry verdict depends on:
// the sum, modulo 2^64, of a mix64 term per entry (its key and column, with its
// position) and per indptr word, into stats[STAT_FINGERPRINT] (a changed key, column or
// row start changes its term, a bijection of it, so the sum changes unless several
// changes cancel: about 2^-64). Not inlined: inside the kernel body this loop alone raised
// its register count (57 for float32 weights against 40), and with it cut the blocks per
// SM from 6 to 4.
__device__ __noinline__ void scan_weights(const weight_t* __restrict__ weights,
                                          const void* __restrict__ keys,
                                          const eid_t* __restrict__ indptr,
                                          const vid_t* __restrict__ indices, i64 n, i64 m,
                                          unsigned* narrowed, u64* stats, bool fingerprint) {
    bool exact = true;
    u64 sum = 0;
    for (i64 j = mg::global_tid(); j < m; j += mg::global_stride()) {
        unsigned key = 0;
#if MST_WEIGHT_FLOAT || MST_NARROWS
        const weight_t w = __ldg(weights + j);
#else
        (void)weights;
#endif
#if MST_WEIGHT_FLOAT
        if (w != w) atomicMin(stats + STAT_FIRST_NAN, (u64)j);
#endif
#if MST_NARROWS
        exact &= weight_narrows(w);
        key = narrow_key(w);
        narrowed[j] = key;
#else
        (void)narrowed;
        if (fingerprint) key = key_at(keys, j);
#endif
        if (fingerprint) {
            const vid_t v = __ldg(indices + j);
            sum += mg::mix64(((u64)key << 32 | (u64)(unsigned)v) + (u64)j * FP_WEYL);
            if (sizeof(vid_t) > 4) sum += mg::mix64((u64)v + ((u64)j + (u64)m) * FP_WEYL);
        }
    }
    if (fingerprint) {
        for (i64 i = mg::global_tid(); i <= n; i += mg::global_stride()) {
            sum += mg::mix64((u64)__ldg(indptr + i) + ((u64)i + 2 * (u64)m) * FP_WEYL);
        }
        const u64 in_block = block_sum<u64>(sum);
        if (threadIdx.x == 0 && in_block) atomicAdd(stats + STAT_FINGERPRINT, in_block);
    }
    if (!exact) stats[STAT_INEXACT] = 1;
}

// Every thread, after the barrier behind scan_weights (symmetric = 2): the memo's verdict
// when it was made for this launch's fingerprint (1: general, 2: symmetric), else 0 (see
// "Symmetry found" above). Every thread reads the memo before the barrier after which
// thread 0 rewrites it, so all take the same branch (and the same number of barriers).
__device__ __forceinline__ u64 remembered_verdict(const u64* memo, const u64* stats) {
    const u64 known = mg::load_volatile(memo + 1);  // 0: none
    return known != 0 && mg::load_volatile(memo) == mg::load_volatile(stats + STAT_FINGERPRINT)
               ? known
               : 0;
}

// Grid-wide, where no verdict is remembered: every entry (u, v) with v < u is checked for
// a dominating twin, VERIFY_CHUNK consecutive entries a thread (one row search a chunk,
// so a hub's entries spread over many threads); the first failure sets STAT_ASYMMETRIC,
// which cuts the others short. Not inlined (it runs once per matrix): the kernel body
// keeps its register count.
__device__ __noinline__ void check_symmetry(const Graph& g, i64 m, u64* stats) {
    const i64 chunks = (m + VERIFY_CHUNK - 1) / VERIFY_CHUNK;
    for (i64 c = mg::global_tid(); c < chunks; c += mg::global_stride()) {
        if (mg::load_volatile(stats + STAT_ASYMMETRIC)) return;
        i64 j = c * VERIFY_CHUNK;
        const i64 end = j + VERIFY_CHUNK < m ? j + VERIFY_CHUNK : m;
        vid_t u = row_of(g.indptr, (vid_t)g.n, (eid_t)j);
        i64 row_end = (i64)g.indptr[u + 1];
        for (; j < end; ++j) {
            while (j >= row_end) {  // rows end inside the chunk (empty ones too)
                ++u;
                row_end = (i64)g.indptr[u + 1];
            }
            const vid_t v = __ldg(g.indices + j);
            if (v < u && !twin_dominates(g, v, u, ((u64)build_key(g.keys, j) << 32) | (u64)j)) {
                stats[STAT_ASYMMETRIC] = 1;
                return;
            }
        }
    }
}

// Block-wide (block 0, while the other blocks flatten): how many of LIVE_SAMPLE hashed
// CSR entries have a key above `lower` (beyond the passes done) and ends in two
// components. Every entry counts, whatever the mode, so a graph plans alike declared
// symmetric or not; no root changes meanwhile, so every run counts the same.
__device__ __noinline__ u64 block_live_rest(const Graph& g, vid_t* parent, i64 m, i64 lower) {
    u64 live = 0;
    for (int i = threadIdx.x; i < LIVE_SAMPLE; i += MST_BLOCK) {
        const i64 j = (i64)((u64)mg::mix32((unsigned)i ^ LIVE_SALT) % (u64)m);
        if ((i64)build_key(g.keys, j) <= lower) continue;
        const vid_t v = __ldg(g.indices + j);
        const vid_t u = row_of(g.indptr, (vid_t)g.n, (eid_t)j);
        if (u != v && find_root_stable(parent, u) != find_root_stable(parent, v)) ++live;
    }
    return block_sum<u64>(live);
}

}  // namespace

// Arguments: the graph (CSR, weight keys, the weights themselves), sizes, the mode
// (symmetric: 0 general, 1 declared symmetric, 2 found symmetric or not, see "Symmetry
// found"; its verdict kept in symmetry_memo, 2 words the caller zeroes once and keeps
// with the graph, unused by the other modes), then the working arrays (gpu.py carves them
// from one allocation): parent (n), lightest (n), two worklists (capacity Edges each),
// counters (4: [0..2] worklist tails, rotating, [3] huge chunks), huge_rows and
// huge_chunks (huge_capacity each), narrowed (m keys for kinds 3 and 4, else unused),
// tree_bits (ceil(m / 32) words), block_sums (3 * gridDim.x) and stats (STAT_SLOTS, see
// Stat). Nothing needs zeroing before a launch except the barrier state.
extern "C" __global__ void __launch_bounds__(MST_BLOCK) mst_boruvka(
    const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
    const void* __restrict__ keys, const weight_t* __restrict__ weights, i64 n, i64 m,
    int symmetric, u64* symmetry_memo, i64 capacity, i64 huge_capacity, vid_t* parent,
    u64* lightest, Edge* wl0, Edge* wl1, u64* counters, vid_t* huge_rows,
    unsigned* huge_chunks, unsigned* narrowed, unsigned* tree_bits, u64* block_sums,
    u64* stats, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    const i64 tid = mg::global_tid();
    const i64 stride = mg::global_stride();
#ifdef MST_PROFILE
    int profile_row = 1;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        mst_profile[0][2] = clock64();
        mst_profile[0][3] = mg::global_timer_ns();
    }
#endif

    for (i64 v = tid; v < n; v += stride) {
        parent[v] = (vid_t)v;
        lightest[v] = NO_EDGE;
    }
    const i64 words = (m + 31) >> 5;
    for (i64 w = tid; w < words; w += stride) tree_bits[w] = 0u;
    if (tid < 4) counters[tid] = 0;
    if (tid < STAT_SLOTS) stats[tid] = tid == STAT_FIRST_NAN ? NO_EDGE : 0ull;
    __shared__ PassPlan plan;
    block_pass_plan(keys, n, m, &plan);
    mg::grid_sync(bar);
    MST_STAMP(PH_INIT, 0, 0, (u64)plan.count);
    const bool verify = symmetric == 2;
    if (MST_WEIGHT_FLOAT || MST_NARROWS || verify) {
        scan_weights(weights, keys, indptr, indices, n, m, narrowed, stats, verify);
    }
    // (A barrier in every mode, though only the narrowing and symmetry modes need one: with
    // it the body keeps 40 registers in every weight kind, 6 blocks per SM; without, ptxas
    // gave int32 and float32 builds 48 and 61.)
    mg::grid_sync(bar);
    MST_STAMP(PH_NARROW, 0, 0, 0);
#if MST_NARROWS
    // Every thread reads the same flag, so every thread leaves; the host maps the keys
    // and launches again.
    if (mg::load_volatile(stats + STAT_INEXACT)) return;
    Graph g{indptr, indices, narrowed, n, symmetric == 1};
#else
    Graph g{indptr, indices, keys, n, symmetric == 1};
#endif
    if (verify) {
        u64 verdict = remembered_verdict(symmetry_memo, stats);
        if (verdict == 0) {
            check_symmetry(g, m, stats);
            mg::grid_sync(bar);
            verdict = mg::load_volatile(stats + STAT_ASYMMETRIC) ? 1 : 2;
            if (tid == 0) {
                symmetry_memo[0] = mg::load_volatile(stats + STAT_FINGERPRINT);
                symmetry_memo[1] = verdict;
            }
        }
        g.symmetric = verdict == 2;
        if (tid == 0) stats[STAT_SYMMETRIC_RUN] = verdict - 1;
        MST_STAMP(PH_VERIFY, 0, 0, verdict);
    }

    int r = 0;
    for (int pass = 0; pass < plan.count; ++pass) {
        if (pass > 0) {
            // Whether this pass is the last: block 0 samples the live rest above the
            // passes done while the other blocks flatten (see "Passes").
            const bool deciding = MST_LIVE_SPLIT_SHARE > 0 && pass < plan.count - 1;
            if (deciding && blockIdx.x == 0) {
                const u64 live = block_live_rest(g, parent, m, (i64)plan.limit[pass - 1]);
                if (threadIdx.x == 0) stats[STAT_LIVE_SAMPLE] = live;
            }
            // Flatten the forest so this pass's finds take one step.
            for (i64 v = tid; v < n; v += stride) parent[v] = find_root_stable(parent, (vid_t)v);
            if (tid == 0) counters[r % 3] = 0;
            mg::grid_sync(bar);
            u64 live = 0;
            if (deciding) {
                live = mg::load_volatile(stats + STAT_LIVE_SAMPLE);
                if (threadIdx.x == 0 && (u64)MST_LIVE_SPLIT_SHARE * live < (u64)LIVE_SAMPLE) {
                    plan.limit[pass] = ALL_KEYS;
                    plan.count = pass + 1;
                }
                __syncthreads();  // every thread read plan.count before the barrier above
            }
            MST_STAMP(PH_FLATTEN, pass, r, live);
        }
        const KeyRange range{pass == 0 ? -1 : (i64)plan.limit[pass - 1], (i64)plan.limit[pass]};
        {
            const Worklist out{(r & 1) ? wl1 : wl0, counters + r % 3, capacity};
            const HugeRows huge{huge_rows, huge_chunks, counters + 3, huge_capacity};
            if (pass == 0) build_from_csr<true>(g, parent, range, out, lightest, huge);
            else build_from_csr<false>(g, parent, range, out, lightest, huge);
            mg::grid_sync(bar);
            MST_STAMP(PH_BUILD, pass, r, mg::load_volatile(out.tail));
            if (pass == 0) sweep_huge_rows<true>(g, parent, range, out, lightest, huge);
            else sweep_huge_rows<false>(g, parent, range, out, lightest, huge);
            mg::grid_sync(bar);
            MST_STAMP(PH_HUGE, pass, r, mg::load_volatile(out.tail));
        }
        while (true) {
            const u64 count = mg::load_volatile(counters + r % 3);
            if (count == 0) break;
            if (count > (u64)capacity) {
                if (tid == 0) stats[STAT_OVERFLOW] = 1;
                return;  // every thread read the same count, so every thread leaves
            }
            // join r
            const Edge* joined = (r & 1) ? wl1 : wl0;
            for (i64 i = tid; i < (i64)count; i += stride) {
                const Edge e = joined[i];
                const bool by_u = lightest[e.u] == e.packed;
                const bool by_v = lightest[e.v] == e.packed;
                if (by_u || by_v) {
                    // The winner of a root clears its slot for the next offers (see the
                    // phases above).
                    if (by_u) lightest[e.u] = NO_EDGE;
                    if (by_v) lightest[e.v] = NO_EDGE;
                    unite(parent, e.u, e.v);
                    const unsigned p = (unsigned)(e.packed & 0xffffffffull);
                    atomicOr(tree_bits + (p >> 5), 1u << (p & 31u));
                }
            }
            if (tid == 0) {
                counters[(r + 1) % 3] = 0;
                stats[STAT_ROUNDS] += 1;
            }
            mg::grid_sync(bar);
            MST_STAMP(PH_JOIN, pass, r, count);
            // filter r + 1
            ++r;
            const Worklist out{(r & 1) ? wl1 : wl0, counters + r % 3, capacity};
            for (i64 i = tid; i < (i64)count; i += stride) {
                const Edge e = joined[i];
                const vid_t ru = find_root_stable(parent, e.u);
                const vid_t rv = find_root_stable(parent, e.v);
                if (ru != rv) {
                    store_edge(out, ru, rv, e.packed);
                    offer(lightest, ru, e.packed);
                    offer(lightest, rv, e.packed);
                }
            }
            mg::grid_sync(bar);
            MST_STAMP(PH_FILTER, pass, r, mg::load_volatile(out.tail));
        }
        ++r;
    }
    if (tid == 0) stats[STAT_PASSES] = (u64)plan.count;
    // The last join lies two barriers back (its filter found nothing left).
    count_tree_bits(m, tree_bits, weights, block_sums);
#ifdef MST_PROFILE
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        mst_profile[0][0] = (u64)profile_row;
        mst_profile[0][1] = (u64)plan.count;
    }
#endif
}

// Launched right after mst_boruvka (no host read between), on as many blocks: the forest
// as four arrays of k = (tree edges) entries back to back in `forest` (CSR positions,
// sources, targets as int64, then the weights as weight_t), in position order, plus its
// size, weight and zero-weight edges in `stats`, and in nonzero_before[i] (k + 1 slots)
// how many of the edges before edge i weigh something (mst_write_matrix's ranks). A tree
// edge's index is the number of tree bits before its own: the blocks before this one
// (block_sums), then a block-wide prefix sum over each tile of this block's words; the
// zero-weight edges before it likewise (block_sums' third part, then a prefix sum over
// the tile's edges). A separate kernel keeps the persistent one's register count, hence
// its occupancy, as it was.
extern "C" __global__ void __launch_bounds__(MST_BLOCK) mst_write_forest(
    const eid_t* __restrict__ indptr, const vid_t* __restrict__ indices,
    const weight_t* __restrict__ weights, i64 n, i64 m, const unsigned* __restrict__ tree_bits,
    u64* block_sums, u64* stats, i64* forest, i64* nonzero_before,
    const unsigned* __restrict__ barrier_abort) {
    // The host learns of a barrier timeout from the one read of the stats it makes anyway.
    if (blockIdx.x == 0 && threadIdx.x == 0) stats[STAT_BARRIER_ABORT] = *barrier_abort;
    // After an overflow or inexact keys mst_boruvka left early: no counts, nothing to write.
    if (mg::load_volatile(stats + STAT_OVERFLOW) || mg::load_volatile(stats + STAT_INEXACT)) {
        return;
    }
    const u64* zero_counts = block_sums + 2 * gridDim.x;
    u64 before = 0, all = 0, zeros_before = 0, all_zeros = 0;
    for (i64 b = threadIdx.x; b < (i64)gridDim.x; b += MST_BLOCK) {
        const u64 count = block_sums[b];
        const u64 zeros = zero_counts[b];
        all += count;
        all_zeros += zeros;
        if (b < (i64)blockIdx.x) {
            before += count;
            zeros_before += zeros;
        }
    }
    before = block_sum<u64>(before);
    const u64 k = block_sum<u64>(all);
    zeros_before = block_sum<u64>(zeros_before);
    all_zeros = block_sum<u64>(all_zeros);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        stats[STAT_FOREST_EDGES] = k;
        stats[STAT_ZERO_EDGES] = all_zeros;
    }
    // A forest has at most n - 1 edges (the buffer's capacity); more is a bug the host
    // reports. Every thread read the same k, so every thread leaves.
    if (k >= (u64)n) return;
    if (blockIdx.x == 0 && threadIdx.x == 0) nonzero_before[k] = (i64)(k - all_zeros);

    i64* edge_ids = forest;
    i64* sources = forest + k;
    i64* targets = forest + 2 * k;
    weight_t* forest_weights = (weight_t*)(forest + 3 * k);
#if MST_WEIGHT_FLOAT
    double total = 0.0;
#else
    u64 total = 0;  // unsigned: wraps modulo 2^64 like NumPy's int64 sum, without UB
#endif
    // Edges, not words, are spread over the threads: a word holds up to 32 tree edges,
    // each needing a binary search for its row, and a thread per word would run those
    // searches one after another.
    __shared__ unsigned tile_bits[MST_BLOCK];
    __shared__ unsigned tile_start[MST_BLOCK];  // the tile's edges before each word
    u64 base = before;
    const WordRange range = block_words(m);
    for (i64 tile = range.begin; tile < range.end; tile += MST_BLOCK) {
        const i64 w = tile + threadIdx.x;
        const unsigned bits = w < range.end ? tree_bits[w] : 0u;
        unsigned tile_edges;
        const unsigned start =
            mg::block_exclusive_sum<MST_BLOCK, unsigned>(__popc(bits), &tile_edges);
        tile_bits[threadIdx.x] = bits;
        tile_start[threadIdx.x] = start;
        __syncthreads();
        // Every thread takes the same number of steps: each ends with a block-wide count
        // of the step's zero-weight edges.
        for (unsigned step = 0; step < tile_edges; step += MST_BLOCK) {
            const unsigned e = step + threadIdx.x;
            bool zero = false;
            u64 rank = 0;
            if (e < tile_edges) {
                // The tile's e-th edge lies in the last word starting at or before e (words
                // without edges share their start with the next word that has one).
                int lo = 0, hi = MST_BLOCK - 1;
                while (lo < hi) {
                    const int mid = (lo + hi + 1) >> 1;
                    if (tile_start[mid] <= e) lo = mid;
                    else hi = mid - 1;
                }
                unsigned word = tile_bits[lo];
                for (unsigned skip = e - tile_start[lo]; skip; --skip) word &= word - 1;
                const i64 p = ((tile + lo) << 5) + (__ffs(word) - 1);
                rank = base + e;
                const weight_t weight = weights[p];
                edge_ids[rank] = p;
                sources[rank] = (i64)row_of(indptr, (vid_t)n, (eid_t)p);
                targets[rank] = (i64)__ldg(indices + p);
                forest_weights[rank] = weight;
#if MST_WEIGHT_FLOAT
                total += (double)weight;
#else
                total += (u64)(i64)weight;
#endif
                zero = weight == (weight_t)0;
            }
            u64 step_zeros;
            const u64 zeros_here =
                mg::block_exclusive_sum<MST_BLOCK, u64>((u64)zero, &step_zeros);
            if (e < tile_edges) nonzero_before[rank] = (i64)(rank - (zeros_before + zeros_here));
            zeros_before += step_zeros;
        }
        base += tile_edges;
        __syncthreads();  // the next tile reuses tile_bits and tile_start
    }
#if MST_WEIGHT_FLOAT
    // Summed in a fixed order (per thread, per block, then the blocks in order by the
    // block that finishes last), so a graph's total is the same on every run.
    __shared__ bool last_block;
    const double in_block_total = block_sum<double>(total);
    double* block_totals = (double*)(block_sums + gridDim.x);
    if (threadIdx.x == 0) {
        block_totals[blockIdx.x] = in_block_total;
        __threadfence();
        last_block = atomicAdd(stats + STAT_BLOCKS_DONE, 1ull) == gridDim.x - 1;
    }
    __syncthreads();
    if (last_block) {
        __threadfence();
        double part = 0.0;
        for (i64 b = threadIdx.x; b < (i64)gridDim.x; b += MST_BLOCK) {
            part += mg::load_volatile(block_totals + b);
        }
        const double grand = block_sum<double>(part);
        if (threadIdx.x == 0) stats[STAT_TOTAL] = (u64)__double_as_longlong(grand);
    }
#else
    const u64 in_block_total = block_sum<u64>(total);
    if (threadIdx.x == 0 && in_block_total) atomicAdd(stats + STAT_TOTAL, in_block_total);
#endif
}

// minimum_spanning_tree's result, launched right behind mst_write_forest (no host read
// between): the forest's edges of nonzero weight (SciPy's result stores no zeros) as
// SciPy's CSR matrix: data as double, indices and indptr (n + 1 entries) as vid_t, into
// arrays of capacity n - 1 edges (the host keeps the first k - zeros, both from `stats`).
// Edge i (sources, targets and weights in position order, as mst_write_forest laid them
// out in `forest`) goes to slot nonzero_before[i]; edges in position order are in row
// order, and in a row in stored order, so row r starts at nonzero_before[the first edge
// whose source is >= r]. One grid-stride pass over n + 1 indices does all three arrays.
// Where the launch found no forest (an overflow, inexact keys: k is then 0) it writes an
// empty matrix, which the host discards.
extern "C" __global__ void __launch_bounds__(MST_BLOCK) mst_write_matrix(
    const i64* __restrict__ forest, const i64* __restrict__ nonzero_before,
    const u64* __restrict__ stats, i64 n, double* __restrict__ data,
    vid_t* __restrict__ out_indices, vid_t* __restrict__ out_indptr) {
    const i64 k = (i64)stats[STAT_FOREST_EDGES];
    if (k >= n) return;  // not a forest: the host reports it
    const i64* sources = forest + k;
    const i64* targets = forest + 2 * k;
    const weight_t* weights = (const weight_t*)(forest + 3 * k);
    const i64 stride = mg::global_stride();
    for (i64 i = mg::global_tid(); i <= n; i += stride) {
        if (i < k) {
            const weight_t weight = weights[i];
            if (weight != (weight_t)0) {
                const i64 slot = nonzero_before[i];
                data[slot] = (double)weight;
                out_indices[slot] = (vid_t)targets[i];
            }
        }
        i64 lo = 0, hi = k;  // the first edge whose source is >= i
        while (lo < hi) {
            const i64 mid = lo + ((hi - lo) >> 1);
            if (__ldg(sources + mid) < i) lo = mid + 1;
            else hi = mid;
        }
        out_indptr[i] = (vid_t)(k == 0 ? 0 : nonzero_before[lo]);
    }
}
