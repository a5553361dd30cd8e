// Frontier queues: warp-aggregated enqueue from divergent code, and the statistics a
// frontier's queue generation gathers.
//
// Slots are reserved with one global atomicAdd per warp (warp_enqueue): never one atomic
// per item, which would serialise every discovering thread on the queue's tail (Merrill et
// al. §4: prefix-sum enqueue). (A block-wide scan of a status array, Enterprise §4.1, lived
// here until session 33; direction.cu's queue_from_labels is its one user's form.)
#pragma once
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/worklist.cuh>

namespace mg {
namespace traversal {

// Any subset of a warp's lanes may call this together (it works on the lanes that are
// converged at the call, __activemask()); lanes with push == false take no slot. One
// atomicAdd on `tail` per converged group, slots handed out by rank among the pushing
// lanes; each pushing lane then calls write(its slot, the pushing lanes' mask).
template <typename Write>
__device__ __forceinline__ void warp_append(u64* tail, bool push, const Write& write) {
    const unsigned active = __activemask();
    const unsigned pushing = __ballot_sync(active, push);
    if (pushing == 0u) return;
    const unsigned lane = lane_id();
    const int leader = __ffs(pushing) - 1;
    u64 base = 0;
    if ((int)lane == leader) base = atomicAdd(tail, (u64)__popc(pushing));
    base = __shfl_sync(active, base, leader);
    if (push) write(base + __popc(pushing & ((1u << lane) - 1u)), pushing);
}

// One item per pushing lane appended to `queue` (warp_append's rules).
template <typename T>
__device__ __forceinline__ void warp_enqueue(T* queue, u64* tail, bool push, T item) {
    warp_append(tail, push, [&](u64 slot, unsigned) { queue[slot] = item; });
}

// What queue generation gathers besides the queue: the switch rule's view of the new
// frontier.
struct FrontierStats {
    u64 vertices;  // queue length
    u64 edges;     // out-degree sum (Beamer's m_f)
    u64 hubs;      // vertices with out-degree > hub threshold (Enterprise's F_h)
};

}  // namespace traversal
}  // namespace mg
