// Kernels for morphgpu/alloc.py (slot pool phases, chunk lists) and its tests.
#include <morphgpu/alloc.cuh>

// counters = [n_free, n_taken_free, high_water, n_wanted] (see alloc.cuh make_slot_pool).
extern "C" __global__ void slot_pool_alloc(mg::i64* free_slots, mg::u64* counters,
                                           mg::u64 capacity, mg::i64 n_requests, mg::i64* out) {
    mg::SlotPool pool = mg::make_slot_pool(free_slots, counters, capacity);
    for (mg::i64 i = mg::global_tid(); i < n_requests; i += mg::global_stride()) {
        out[i] = mg::slot_alloc(pool);
    }
}

extern "C" __global__ void slot_pool_free(mg::i64* free_slots, mg::u64* counters,
                                          mg::u64 capacity, const mg::i64* slots, mg::i64 n) {
    mg::SlotPool pool = mg::make_slot_pool(free_slots, counters, capacity);
    for (mg::i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        mg::slot_free(pool, slots[i]);
    }
}

// One thread: the between-phases step.
extern "C" __global__ void slot_pool_compact_kernel(mg::i64* free_slots, mg::u64* counters,
                                                    mg::u64 capacity) {
    if (mg::global_tid() != 0) return;
    mg::SlotPool pool = mg::make_slot_pool(free_slots, counters, capacity);
    mg::slot_pool_compact(pool);
}

// Thread i appends values[i] to the list of nodes[i]; ok[i] = whether it was stored.
extern "C" __global__ void chunk_append(int* data, mg::i64* next_chunk, mg::u64* n_chunks_used,
                                        mg::u64 n_chunks, int chunk_size, int* out_of_chunks,
                                        mg::i64* head, unsigned* size, const mg::i64* nodes,
                                        const int* values, mg::i64 n, bool* ok) {
    mg::ChunkPool pool{data, next_chunk, n_chunks_used, n_chunks, chunk_size, out_of_chunks};
    for (mg::i64 i = mg::global_tid(); i < n; i += mg::global_stride()) {
        ok[i] = mg::chunk_list_append(pool, head, size, nodes[i], values[i]);
    }
}

// Reads node's list back through chunk_list_get: out[offsets[v] + j] = item j of node v.
extern "C" __global__ void chunk_gather(const int* data, const mg::i64* next_chunk,
                                        mg::u64 n_chunks, int chunk_size, const mg::i64* head,
                                        const mg::i64* offsets, mg::i64 n_nodes, int* out) {
    mg::ChunkPool pool{const_cast<int*>(data), const_cast<mg::i64*>(next_chunk), nullptr,
                       n_chunks, chunk_size, nullptr};
    for (mg::i64 v = mg::global_tid(); v < n_nodes; v += mg::global_stride()) {
        for (mg::i64 j = 0; j < offsets[v + 1] - offsets[v]; ++j) {
            out[offsets[v] + j] = mg::chunk_list_get(pool, head, v, j);
        }
    }
}
