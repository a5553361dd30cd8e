// Cycles of the copy graph, found on the device so that the round solver can merge the
// nodes of each one (gpu.py, collapse_cycles): every node of a strongly connected
// component of copy edges holds the same points-to set at the fixed point, so merging
// them is exact, and it removes what the cycle costs otherwise: the set pulled around the
// cycle sweep after sweep and one copy of it per node.
//
// One persistent launch: passes of trimming and colouring over the nodes that could lie on
// a cycle (in- and out-edges both), phases separated by mg::grid_sync:
//   trim     a node with no live in-neighbour or no live out-neighbour is on no cycle of
//            the live graph: drop it (TRIM_ROUNDS rounds at most);
//   forward  colour = the smallest id among the live nodes that reach it (min along every
//            live edge, and jumps, to the fixed point or PHASE_SWEEPS sweeps);
//   backward the root of colour c is node c itself; a live node of colour c with a live
//            out-neighbour already marked c is marked c (to the fixed point or
//            PHASE_SWEEPS): it reaches c, and c reaches it, so both lie on one cycle. At
//            the fixed points every node of the root's component is marked (the
//            component's nodes all have the root's colour and reach it inside it);
//   assign   every marked node leaves the live graph; a marked node other than its root
//            is written out as (member, root): the root is the component's smallest id.
// A component whose smallest reaching node lies outside it (upstream of it) is not found
// in that pass; the next pass, without the nodes assigned so far, may find it. Passes stop
// when no live node is left or after max_passes; what is left is found by a later call
// (the solver calls again when new edges may have closed cycles). Everything written out
// is exact: a member is always on a cycle through its root.
//
// Sweeps run over edges, not nodes: the copy graph's hubs have in-degrees in the hundreds
// of thousands, and a thread per node looping over them set the length of every sweep
// (H100, a first version: 4 s on pine over 19 calls). After the first trim the edges with
// both ends live are compacted into (edge_src, edge_dst), and later sweeps read only
// those. Values only move one way within a phase (colours down, marks from -1 to the
// colour, trim flags up), so a reader that sees an old value only delays the fixed point,
// which a sweep without changes ends (three rotating change flags: sweep s sets flag s % 3
// and zeroes (s + 1) % 3, whose readers passed two barriers ago).
//
// counters (zeroed by the host): [0] listed candidates, [1] members written, [2..4] change
// flags, [5] passes run, [6] sweeps run, [7] compacted edges, [8] compacted nodes, [9] 1
// when block 0 finished alone.
#include <morphgpu/common.cuh>
#include <morphgpu/barrier.cuh>

using mg::i64;
using mg::u64;

namespace {

constexpr i64 GONE = 0x7fffffffffffffffll;  // colour of a node out of the live graph
constexpr i64 UNMARKED = -1;

enum Counter {
    LISTED = 0, MEMBERS = 1, FLAGS = 2, PASSES = 5, SWEEPS = 6, EDGES = 7, LIVE = 8, SOLO = 9
};
// Block 0 goes on alone once the live edges and nodes are at most this many per thread of
// one block: a sweep then costs a few loop steps and a __syncthreads instead of a grid
// barrier (most of a sweep's time on a small live graph).
constexpr i64 SOLO_ITEMS_PER_THREAD = 16;
// Bounds on the sweeps of one call (a phase cut short keeps every result exact: a colour
// is always a node that reaches the coloured one, a mark always a path to the root; it
// only finds fewer cycles, which a later call finds). A trim round peels one node off
// each chain that leads into the live graph, and the copy graphs of large programs have
// chains hundreds long: trimmed to the end, they cost pine 346 sweeps a call (H100).
constexpr int TRIM_ROUNDS = 4;
constexpr int PHASE_SWEEPS = 16;
constexpr int HAS_IN = 1, HAS_OUT = 2;  // trim flags

// After the barrier that ends sweep `sweep`: did anyone change anything in it?
__device__ __forceinline__ bool changed_in(u64* counters, int sweep) {
    return mg::load_volatile(counters + FLAGS + sweep % 3) != 0ull;
}

__device__ __forceinline__ void begin_sweep(u64* counters, int sweep) {
    if (mg::global_tid() == 0) counters[FLAGS + (sweep + 1) % 3] = 0ull;
}

__device__ __forceinline__ void note_change(u64* counters, int sweep) {
    *(volatile u64*)(counters + FLAGS + sweep % 3) = 1ull;
}

}  // namespace

// The edges: old_keys[0, n_old) and new_keys[0, n_new), each as dst * n_nodes + src, both
// ends mapped through relabel (null: as they are; the solver passes its leader array,
// which maps a node of before the round's merges to its leader and a leader to itself):
// the solver's known edges and its round's new ones, before they are merged into one
// list (this runs inside the round's merge, so one relabelling of the keys serves both
// kinds of merge); self loops and repeats are harmless. edge_src/edge_dst: room for n_old + n_new each; trim: an int per
// node.
extern "C" __global__ void find_cycles(i64 n_nodes, const i64* old_keys, i64 n_old,
                                       const i64* relabel, const i64* new_keys, i64 n_new,
                                       i64* colour, i64* mark, int* trim, i64* list,
                                       i64* edge_src, i64* edge_dst, i64* member, i64* root,
                                       u64* counters, int max_passes, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    // Loops stride over the grid, or over block 0 alone once the live graph is small
    // (solo: see below).
    i64 first = mg::global_tid(), step = mg::global_stride();
    bool solo = false;
    // Every phase below is one or more sweeps; each sweep begins with begin_sweep and ends
    // with end_sweep (the barrier; true when a change was noted in it), so the flags rotate
    // in step whatever the phase.
    int sweep = 0;
    auto end_sweep = [&]() {
        if (solo) __syncthreads();
        else mg::grid_sync(bar);
        return changed_in(counters, sweep++);
    };
    auto live = [&](i64 u) { return mg::load_volatile(colour + u) != GONE; };
    // The edges the sweeps read: all of them until the first trim is done, then the
    // compacted ones (both ends live, no self loops).
    i64 n_live_edges = n_old + n_new;
    bool compacted = false;
    auto edge_at = [&](i64 e, i64* u, i64* v) {
        if (compacted) {
            *u = edge_src[e];
            *v = edge_dst[e];
            return;
        }
        const i64 key = e < n_old ? old_keys[e] : new_keys[e - n_old];
        *u = key % n_nodes;
        *v = key / n_nodes;
        if (relabel) {
            *u = relabel[*u];
            *v = relabel[*v];
        }
    };
    // Candidates: nodes with both an in- and an out-edge (a cycle's nodes have both).
    begin_sweep(counters, sweep);
    for (i64 v = first; v < n_nodes; v += step) {
        mark[v] = UNMARKED;
        trim[v] = 0;
    }
    end_sweep();
    begin_sweep(counters, sweep);
    for (i64 e = first; e < n_live_edges; e += step) {
        i64 u, v;
        edge_at(e, &u, &v);
        if (u == v) continue;
        if (!(mg::load_volatile(trim + v) & HAS_IN)) atomicOr(trim + v, HAS_IN);
        if (!(mg::load_volatile(trim + u) & HAS_OUT)) atomicOr(trim + u, HAS_OUT);
    }
    end_sweep();
    begin_sweep(counters, sweep);
    for (i64 v = first; v < n_nodes; v += step) {
        const bool both = mg::load_volatile(trim + v) == (HAS_IN | HAS_OUT);
        colour[v] = both ? v : GONE;
        trim[v] = 0;
        if (both) list[atomicAdd(counters + LISTED, 1ull)] = v;
    }
    end_sweep();
    i64 n_list = (i64)mg::load_volatile(counters + LISTED);
    int pass = 0;
    for (; pass < max_passes; ++pass) {
        // trim: flag the live ends of live edges, then drop listed nodes that lack a flag
        for (int round = 0; round < TRIM_ROUNDS; ++round) {
            begin_sweep(counters, sweep);
            for (i64 e = first; e < n_live_edges; e += step) {
                i64 u, v;
                edge_at(e, &u, &v);
                if (u == v || !live(u) || !live(v)) continue;
                if (!(mg::load_volatile(trim + v) & HAS_IN)) atomicOr(trim + v, HAS_IN);
                if (!(mg::load_volatile(trim + u) & HAS_OUT)) atomicOr(trim + u, HAS_OUT);
            }
            end_sweep();
            begin_sweep(counters, sweep);
            for (i64 i = first; i < n_list; i += step) {
                const i64 v = list[i];
                if (!live(v)) continue;
                if (mg::load_volatile(trim + v) != (HAS_IN | HAS_OUT)) {
                    *(volatile i64*)(colour + v) = GONE;
                    note_change(counters, sweep);
                }
                *(volatile int*)(trim + v) = 0;
            }
            if (!end_sweep()) break;
        }
        if (!compacted) {
            // The live edges, and the live nodes after the candidates (list has room for
            // 2 n_nodes); then, if both are few, block 0 goes on alone: its barrier is a
            // __syncthreads, and the remaining sweeps are mostly barrier.
            begin_sweep(counters, sweep);
            for (i64 e = first; e < n_live_edges; e += step) {
                i64 u, v;
                edge_at(e, &u, &v);
                if (u == v || !live(u) || !live(v)) continue;
                const i64 at = (i64)atomicAdd(counters + EDGES, 1ull);
                edge_src[at] = u;
                edge_dst[at] = v;
            }
            for (i64 i = first; i < n_list; i += step) {
                const i64 v = list[i];
                if (live(v)) list[n_nodes + (i64)atomicAdd(counters + LIVE, 1ull)] = v;
            }
            end_sweep();
            n_live_edges = (i64)mg::load_volatile(counters + EDGES);
            n_list = (i64)mg::load_volatile(counters + LIVE);
            list += n_nodes;
            compacted = true;
            const i64 solo_limit = SOLO_ITEMS_PER_THREAD * (i64)blockDim.x;
            if (n_live_edges <= solo_limit && n_list <= solo_limit) {
                if (blockIdx.x != 0) return;
                solo = true;
                first = threadIdx.x;
                step = blockDim.x;
            }
        }
        // forward: every live node starts as its own colour (the colours of an earlier pass
        // are lower than some of the ids left), then takes the smallest colour of its live
        // in-neighbours. A change noted here means a live node is left.
        begin_sweep(counters, sweep);
        for (i64 i = first; i < n_list; i += step) {
            const i64 v = list[i];
            if (live(v)) {
                *(volatile i64*)(colour + v) = v;
                note_change(counters, sweep);
            }
        }
        if (!end_sweep()) break;  // nothing live: every cycle found
        for (int k = 0; k < PHASE_SWEEPS; ++k) {
            begin_sweep(counters, sweep);
            for (i64 e = first; e < n_live_edges; e += step) {
                i64 u, v;
                edge_at(e, &u, &v);
                const i64 cu = mg::load_volatile(colour + u), cv = mg::load_volatile(colour + v);
                if (cu == GONE || cv == GONE || cu >= cv) continue;
                if (atomicMin((long long*)(colour + v), (long long)cu) > cu)
                    note_change(counters, sweep);
            }
            // A jump: colour c reaches v, and colour[c] reaches c, so it reaches v too
            // (a chain's smallest id then travels doubling distances per sweep).
            for (i64 i = first; i < n_list; i += step) {
                const i64 v = list[i];
                const i64 c = mg::load_volatile(colour + v);
                if (c == GONE || c == v) continue;
                const i64 cc = mg::load_volatile(colour + c);  // c is live: it coloured v
                if (cc < c && atomicMin((long long*)(colour + v), (long long)cc) > cc)
                    note_change(counters, sweep);
            }
            if (!end_sweep()) break;
        }
        // backward: roots mark themselves, then marks spread against the edges within a
        // colour.
        begin_sweep(counters, sweep);
        for (i64 i = first; i < n_list; i += step) {
            const i64 v = list[i];
            const i64 c = mg::load_volatile(colour + v);
            if (c != GONE) *(volatile i64*)(mark + v) = c == v ? v : UNMARKED;
        }
        end_sweep();
        for (int k = 0; k < PHASE_SWEEPS; ++k) {
            begin_sweep(counters, sweep);
            for (i64 e = first; e < n_live_edges; e += step) {
                i64 u, v;
                edge_at(e, &u, &v);
                const i64 cu = mg::load_volatile(colour + u);
                if (cu == GONE || mg::load_volatile(mark + u) != UNMARKED) continue;
                if (mg::load_volatile(colour + v) != cu || mg::load_volatile(mark + v) != cu)
                    continue;
                *(volatile i64*)(mark + u) = cu;  // every writer writes the same value
                note_change(counters, sweep);
            }
            if (!end_sweep()) break;
        }
        // assign: marked nodes leave the live graph; members go out with their root. Only
        // v's thread touches v's entries in this sweep.
        begin_sweep(counters, sweep);
        for (i64 i = first; i < n_list; i += step) {
            const i64 v = list[i];
            const i64 m = mg::load_volatile(mark + v);
            if (m == UNMARKED) continue;
            if (m != v) {
                const i64 at = (i64)atomicAdd(counters + MEMBERS, 1ull);
                member[at] = v;
                root[at] = m;
            }
            *(volatile i64*)(mark + v) = UNMARKED;
            *(volatile i64*)(colour + v) = GONE;
        }
        end_sweep();
    }
    if (mg::global_tid() == 0) {
        counters[PASSES] = (u64)pass;
        counters[SWEEPS] = (u64)sweep;
        counters[SOLO] = solo ? 1ull : 0ull;
    }
}
