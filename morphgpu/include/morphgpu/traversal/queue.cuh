// Frontier queues: warp-aggregated enqueue from divergent code, and the statistics a
// direction-optimising level gathers about its new frontier. (Enterprise's queue
// generation by scanning the labels lives in bfs/kernels/direction.cu, queue_from_labels.)
//
// Queue slots are reserved with one global atomicAdd per warp (warp_enqueue): never one
// atomic per item, which would serialise every discovering thread on the queue's tail
// (Merrill et al. §4: prefix-sum enqueue).
#pragma once
#include <morphgpu/adjacency.cuh>
#include <morphgpu/common.cuh>
#include <morphgpu/worklist.cuh>

namespace mg {
namespace traversal {

// Any subset of a warp's lanes may call this together (it works on the lanes that are
// converged at the call, __activemask()); lanes with push == false take no slot. One
// atomicAdd per converged group, slots handed out by rank among the pushing lanes.
template <typename T>
__device__ __forceinline__ void warp_enqueue(T* queue, u64* tail, bool push, T item) {
    const unsigned active = __activemask();
    const unsigned pushing = __ballot_sync(active, push);
    if (pushing == 0u) return;
    const unsigned lane = lane_id();
    const int leader = __ffs(pushing) - 1;
    u64 base = 0;
    if ((int)lane == leader) base = atomicAdd(tail, (u64)__popc(pushing));
    base = __shfl_sync(active, base, leader);
    if (push) queue[base + __popc(pushing & ((1u << lane) - 1u))] = item;
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
