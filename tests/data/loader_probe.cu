// A tiny kernel for the loader's own test: includes the shared headers through the
// package include path and crosses a few grid barriers.
#include <morphgpu/common.cuh>
#include <morphgpu/barrier.cuh>

extern "C" __global__ void count_rounds(int rounds, unsigned long long* per_round, unsigned* barrier_state) {
    mg::GridBarrier bar(barrier_state);
    for (int r = 0; r < rounds; ++r) {
        if (threadIdx.x == 0) atomicAdd(&per_round[r], 1ull);
        mg::grid_sync(bar);
    }
}

extern "C" __global__ void index_width(mg::vid_t* vid_bytes, mg::eid_t* eid_bytes) {
    if (mg::global_tid() == 0) {
        *vid_bytes = sizeof(mg::vid_t);
        *eid_bytes = sizeof(mg::eid_t);
    }
}
