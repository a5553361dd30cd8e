// The output of the label-correcting searches (asynchronous.cu, tiled.cu), after their
// last grid barrier: labels become the library's (int32, -1 unreached) and, when asked,
// parents: any in-neighbour one level up (the graph itself when symmetric, the reverse
// graph of a directed one: `radj`, any adjacency of morphgpu/adjacency.cuh). Labels go to
// -1 while other threads read them for parents: a read of either UNREACHED or -1 never
// equals d - 1 >= 0, so the race is harmless. Reads go to L2 (__ldcg): this SM's L1 may hold lines of labels read before
// other blocks lowered them. A reached vertex without such an in-neighbour (a bug) sets
// *error.
#pragma once
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>

namespace bfs {

template <class Adjacency>
__device__ __forceinline__ void labels_to_output(const Adjacency& radj, int* label,
                                                 mg::vid_t* parent, mg::u64* error, mg::i64 n,
                                                 mg::vid_t source) {
    using mg::eid_t;
    using mg::i64;
    using mg::vid_t;
    constexpr int UNREACHED = 0x7fffffff;
    for (i64 v = mg::global_tid(); v < n; v += mg::global_stride()) {
        const int d = __ldcg(label + v);
        if (d == UNREACHED) {
            label[v] = -1;
            if (parent) parent[v] = (vid_t)-1;
            continue;
        }
        if (!parent) continue;
        if (v == (i64)source) {
            parent[v] = source;
            continue;
        }
        vid_t p = (vid_t)-1;
        for (eid_t k = radj.begin(v); k < radj.end(v); ++k) {
            const vid_t w = radj.at(k);
            if (__ldcg(label + w) == d - 1) {
                p = w;
                break;
            }
        }
        if (p == (vid_t)-1) atomicExch(error, 1ull);
        parent[v] = p;
    }
}

}  // namespace bfs
