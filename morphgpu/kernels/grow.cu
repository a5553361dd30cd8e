// Multi-source BFS for reorder.cell_layout's cells (reorder.py says what they are
// for): one cooperative launch, levels separated by the grid barrier, so a search of a
// hundred levels costs a hundred barriers instead of a hundred rounds of array operations
// with host reads between them. Each vertex gets its hops from the nearest source and, of
// the labels its neighbours one level closer hold, the one of the neighbour of largest id
// (the key's high word is ~id: reorder._tie_keys, which this repeats, so the CPU and the
// GPU agree and the answer does not depend on thread timing; reorder._grow says why this
// rule); with a `confine` array, edges are followed only between vertices of one group.
//
// key[v] is final once v's level ends: every key a vertex of level L receives comes, by
// atomicMin, from a vertex of level L - 1 whose key was final at the barrier before.
//
// The host sets hops/key of the sources (others -1 / ~0) and lists the sources in queue_a
// with counts[0] = their number, counts[1] = counts[2] = 0. Level i reads the frontier's
// size from counts[i % 3], appends to counts[(i + 1) % 3], and block 0 clears
// counts[(i + 2) % 3]: that counter was last read at level i - 1 and is next added to at
// level i + 1, after the barrier that ends level i, so no clear races an add or a read.
#include <morphgpu/barrier.cuh>

using namespace mg;

namespace {

// reorder._tie_keys: the label below the complement of its parent's low 32 id bits.
__device__ __forceinline__ u64 tie_key(u64 label, i64 parent) {
    return ((u64)(0xFFFFFFFFu - (unsigned)parent) << 32) | (label & 0xFFFFFFFFull);
}

}  // namespace

extern "C" __global__ void grow_cells(const eid_t* __restrict__ indptr,
                                      const vid_t* __restrict__ indices,
                                      const i64* __restrict__ confine,  // null: none
                                      u64* key, i64* hops, i64* queue_a, i64* queue_b,
                                      u64* counts, unsigned* barrier_state) {
    GridBarrier bar(barrier_state);
    const i64 stride = (i64)gridDim.x * blockDim.x;
    const i64 me = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    i64* frontier = queue_a;
    i64* next = queue_b;
    for (i64 level = 1;; ++level) {
        const int k = (int)((level - 1) % 3);
        const i64 size = (i64)((volatile u64*)counts)[k];
        if (size == 0) break;
        u64* appended = counts + (k + 1) % 3;
        if (me == 0) counts[(k + 2) % 3] = 0;
        for (i64 i = me; i < size; i += stride) {
            const i64 v = frontier[i];
            const u64 label = key[v] & 0xFFFFFFFFull;
            const i64 group = confine ? confine[v] : 0;
            for (eid_t e = indptr[v]; e < indptr[v + 1]; ++e) {
                const i64 w = (i64)indices[e];
                if (confine && confine[w] != group) continue;
                i64 h = ((volatile i64*)hops)[w];
                if (h == -1) {
                    h = (i64)atomicCAS((u64*)(hops + w), (u64)(i64)-1, (u64)level);
                    if (h == -1) {
                        next[atomicAdd(appended, 1ull)] = w;
                        h = level;
                    }
                }
                if (h == level) atomicMin(key + w, tie_key(label, v));
            }
        }
        grid_sync(bar);
        i64* t = frontier;
        frontier = next;
        next = t;
    }
}
