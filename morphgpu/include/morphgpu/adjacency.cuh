// Adjacency layouts: how an operator finds a vertex's out-edges. The traversal operators
// (traversal/*.cuh) take the layout as a template parameter, so a variant runs on a static
// CSR graph or on a dynamic paged graph (morphgpu/dynamic_graph.py) with the same code.
//
// The contract every layout keeps: vertex v's neighbours occupy a contiguous range of
// *positions* [begin(v), end(v)), and at(k) is the neighbour at position k. Operators do
// arithmetic on positions only inside one row (k + lane, k + BLOCK, binary search over
// row lengths), never across rows, so positions need not be dense.
//
// - CsrAdjacency: positions are CSR offsets; at(k) = indices[k].
// - PagedAdjacency: the neighbours live in fixed-size pages of PAGE ids from one page pool
//   (faimGraph's paged adjacency; the pages are slots of the shared recycle allocator). A
//   vertex owns a run of entries in a page table, table[t0 .. t0 + pages), and its row's
//   positions are t0 * PAGE .. t0 * PAGE + degree, so position k is slot k % PAGE of page
//   table[k / PAGE]. A row costs one page-table load per PAGE neighbours more than CSR
//   and no page-list walk (faimGraph walks a linked list of pages, which turns a hub's
//   row into thousands of dependent loads); rows grow by appending page ids to the table.
//   bounds[2v] = begin(v), bounds[2v + 1] = end(v) (one 16- or 8-byte pair, like indptr's).
#pragma once
#include <morphgpu/common.cuh>

#ifndef MG_PAGE_SHIFT
#define MG_PAGE_SHIFT 5
#endif

namespace mg {

struct CsrAdjacency {
    const eid_t* __restrict__ indptr;
    const vid_t* __restrict__ indices;

    __device__ __forceinline__ eid_t begin(i64 v) const { return indptr[v]; }
    __device__ __forceinline__ eid_t end(i64 v) const { return indptr[v + 1]; }
    __device__ __forceinline__ vid_t at(eid_t k) const { return indices[k]; }
    __device__ __forceinline__ i64 degree(i64 v) const { return (i64)(end(v) - begin(v)); }
};

constexpr int PAGE_SHIFT = MG_PAGE_SHIFT;
constexpr int PAGE = 1 << PAGE_SHIFT;
// Page ids are 32-bit: 2^31 pages of PAGE ids is far past any GPU's memory.
typedef int page_t;

struct PagedAdjacency {
    const eid_t* __restrict__ bounds;   // 2 n: begin, end of each row (positions)
    const page_t* __restrict__ table;   // page ids; row v's pages from begin(v) / PAGE on
    const vid_t* __restrict__ pages;    // the pool: page p holds pages[p * PAGE, +PAGE)

    __device__ __forceinline__ eid_t begin(i64 v) const { return bounds[2 * v]; }
    __device__ __forceinline__ eid_t end(i64 v) const { return bounds[2 * v + 1]; }
    __device__ __forceinline__ i64 slot(eid_t k) const {
        return ((i64)table[(i64)k >> PAGE_SHIFT] << PAGE_SHIFT) | ((i64)k & (PAGE - 1));
    }
    __device__ __forceinline__ vid_t at(eid_t k) const { return pages[slot(k)]; }
    __device__ __forceinline__ i64 degree(i64 v) const { return (i64)(end(v) - begin(v)); }
};

// The layout a kernel file is compiled for: MG_PAGED selects the paged layout, whose
// kernels take three arrays per graph (bounds, table, pages) where CSR kernels take two
// (indptr, indices). MG_ADJ_PARAMS(x) declares a graph's parameters and MG_ADJ(x) builds
// the layout from them, so one kernel body serves both.
#ifdef MG_PAGED
typedef PagedAdjacency Adjacency;
#define MG_ADJ_PARAMS(x) \
    const mg::eid_t* __restrict__ x##_a, const mg::page_t* __restrict__ x##_b, \
    const mg::vid_t* __restrict__ x##_c
#define MG_ADJ(x) (mg::PagedAdjacency{x##_a, x##_b, x##_c})
#else
typedef CsrAdjacency Adjacency;
#define MG_ADJ_PARAMS(x) const mg::eid_t* __restrict__ x##_a, const mg::vid_t* __restrict__ x##_b
#define MG_ADJ(x) (mg::CsrAdjacency{x##_a, x##_b})
#endif

}  // namespace mg
