// Where a field offset leads, for both points-to solvers (pta.cu, dense.cu); the host's
// twins are Layout.field_node and Layout.gep_bit (layout.py).
#pragma once
#include <morphgpu/common.cuh>

namespace pta {

using mg::i64;

// The node of field `off` of `obj`, or -1 when there is none: the object is too small
// (offset 0 always names the object itself), or a store would write the null object 1.
__device__ __forceinline__ i64 field_node(i64 obj, i64 off, bool is_store, const i64* obj_size,
                                          const i64* node_of_var, i64 n_vars) {
    const i64 target = obj + off;
    if (off != 0 && obj_size[obj] <= off) return -1;
    if (target >= n_vars) return -1;
    if (is_store && target == 1) return -1;
    return node_of_var[target];
}

// The bit a gep `&obj->off` sets, or -1 when the object has no such field.
__device__ __forceinline__ i64 gep_bit(i64 obj, i64 off, const i64* obj_size,
                                       const i64* bit_of_var, i64 n_vars) {
    return (obj_size[obj] <= off || obj + off >= n_vars) ? -1 : bit_of_var[obj + off];
}

}  // namespace pta
