// Multi-source BFS for reorder.relaxed_cell_layout (reorder.py says what the cells are
// for): one cooperative launch, levels separated by the grid barrier, so a search of a
// hundred levels costs a hundred barriers instead of a hundred rounds of array operations
// with host reads between them. Each vertex gets the label of a nearest source (the first
// discoverer at its level: any nearest source is a valid answer) and its hops; with a
// `confine` array, edges are followed only between vertices of one group.
//
// The host sets hops/owner of the sources and lists them in queue_a with counts[0] =
// their number, counts[1] = counts[2] = 0. Level i reads the frontier's size from
// counts[i % 3], appends to counts[(i + 1) % 3], and block 0 clears counts[(i + 2) % 3]:
// that counter was last read at level i - 1 and is next added to at level i + 1, after
// the barrier that ends level i, so no clear races an add or a read.
#include <morphgpu/barrier.cuh>

using namespace mg;

extern "C" __global__ void grow_cells(const eid_t* __restrict__ indptr,
                                      const vid_t* __restrict__ indices,
                                      const i64* __restrict__ confine,  // null: none
                                      i64* owner, i64* hops, i64* queue_a, i64* queue_b,
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
            const i64 label = owner[v];
            const i64 group = confine ? confine[v] : 0;
            for (eid_t e = indptr[v]; e < indptr[v + 1]; ++e) {
                const i64 w = (i64)indices[e];
                if (confine && confine[w] != group) continue;
                if (((volatile i64*)hops)[w] != -1) continue;
                const u64 was = atomicCAS((u64*)(hops + w), (u64)(i64)-1, (u64)level);
                if (was != (u64)(i64)-1) continue;
                owner[w] = label;
                next[atomicAdd(appended, 1ull)] = w;
            }
        }
        grid_sync(bar);
        i64* t = frontier;
        frontier = next;
        next = t;
    }
}
