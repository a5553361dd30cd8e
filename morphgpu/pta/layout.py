"""The solver-facing form of a constraint set, shared by the CPU and GPU paths.

Two compactions make dense bit rows affordable (mplayer has 537k variables, 268k objects):
- nodes: only offline representatives carry a points-to set (``node_of_var``);
- bits: only objects that can ever be pointed to get a bit. Those are the address-of
  targets closed under the field offsets that geps (and, in raw files, loads/stores) add:
  ``o + f`` for every such offset ``f < size(o)``. Bits are numbered in increasing object
  id, so a row's set bits read out as a sorted object list.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..unique import sorted_unique
from .constraints import ADDRESS_OF, COPY, GEP, LOAD, NULL_OBJECT, STORE, ConstraintSet


@dataclass
class Layout:
    n_vars: int
    n_nodes: int
    node_of_var: np.ndarray  # int64 (n_vars,)
    objects: np.ndarray  # int64 (n_bits,), sorted object ids
    bit_of_var: np.ndarray  # int64 (n_vars,), -1 for a variable that is never pointed to
    obj_size: np.ndarray  # int64 (n_vars,)
    addr_node: np.ndarray  # address-of: node that gets the bit
    addr_bit: np.ndarray
    copy_src: np.ndarray  # copy edges between nodes, deduplicated, no self loops
    copy_dst: np.ndarray
    load_src: np.ndarray  # dst = *(src + off): nodes
    load_dst: np.ndarray
    load_off: np.ndarray
    store_src: np.ndarray  # *(dst + off) = src: nodes
    store_dst: np.ndarray
    store_off: np.ndarray
    gep_src: np.ndarray  # dst = &src->off: nodes
    gep_dst: np.ndarray
    gep_off: np.ndarray
    hcd_y: np.ndarray  # online HCD facts as nodes: objects of pts(hcd_x) share hcd_y's set
    hcd_x: np.ndarray

    @property
    def n_bits(self) -> int:
        return int(self.objects.size)

    @property
    def n_words(self) -> int:
        """64-bit words per row (at least one)."""
        return max(1, -(-self.n_bits // 64))

    def field_node(self, bits: np.ndarray, off: np.ndarray, *, is_store: bool) -> np.ndarray:
        """Node of field ``off`` of each object (by bit), or -1 where there is none.

        Offset 0 always names the object itself (the after-HCD rule); a positive offset
        needs ``size(o) > off``. Stores into NULL_OBJECT are dropped (-1 as well).
        """
        obj = self.objects[bits]
        target = obj + off
        ok = (off == 0) | (self.obj_size[obj] > off)
        ok &= target < self.n_vars
        if is_store:
            ok &= target != NULL_OBJECT
        return np.where(ok, self.node_of_var[np.minimum(target, self.n_vars - 1)], -1)

    def gep_bit(self, bits: np.ndarray, off: np.ndarray) -> np.ndarray:
        """Bit of field ``off`` of each object (by bit) that a gep adds, or -1 where the
        object has no such field."""
        obj = self.objects[bits]
        target = obj + off
        ok = (self.obj_size[obj] > off) & (target < self.n_vars)
        return np.where(ok, self.bit_of_var[np.minimum(target, self.n_vars - 1)], -1)


def _addressable(cs: ConstraintSet) -> np.ndarray:
    """Sorted ids of every object that some rule can put in a points-to set."""
    addr = sorted_unique(cs.src[cs.kind == ADDRESS_OF])
    # Gep offsets add fields; raw loads/stores with offsets reach fields the same way, and
    # those fields can later be stored through, but they never enter a points-to set.
    offsets = sorted_unique(cs.offset[(cs.kind == GEP) & (cs.offset > 0)])
    known = np.zeros(cs.n_vars, dtype=bool)
    known[addr] = True
    frontier = addr
    while frontier.size and offsets.size:
        size = cs.obj_size[frontier]
        found = []
        for f in offsets:
            hit = frontier[size > f] + f
            found.append(hit[hit < cs.n_vars])
        cand = sorted_unique(np.concatenate(found))
        frontier = cand[~known[cand]]
        known[frontier] = True
    return np.flatnonzero(known).astype(np.int64)


def build_layout(cs: ConstraintSet) -> Layout:
    reps, node_of_var = np.unique(cs.rep, return_inverse=True)
    node_of_var = node_of_var.astype(np.int64)
    objects = _addressable(cs)
    bit_of_var = np.full(cs.n_vars, -1, dtype=np.int64)
    bit_of_var[objects] = np.arange(objects.size)
    nsrc = node_of_var[cs.src]
    ndst = node_of_var[cs.dst]

    def pick(kind: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sel = cs.kind == kind
        return nsrc[sel], ndst[sel], cs.offset[sel]

    a_src = cs.src[cs.kind == ADDRESS_OF]
    a_dst = ndst[cs.kind == ADDRESS_OF]
    c_src, c_dst, c_off = pick(COPY)
    if np.any(c_off):
        raise ValueError(f"{cs.name}: a copy constraint carries an offset, which has no meaning")
    keep = c_src != c_dst
    key = sorted_unique(c_src[keep] * reps.size + c_dst[keep])
    l_src, l_dst, l_off = pick(LOAD)
    s_src, s_dst, s_off = pick(STORE)
    g_src, g_dst, g_off = pick(GEP)
    hcd = np.zeros((0, 2), np.int64) if cs.hcd_pairs is None else cs.hcd_pairs
    return Layout(
        n_vars=cs.n_vars,
        n_nodes=int(reps.size),
        node_of_var=node_of_var,
        objects=objects,
        bit_of_var=bit_of_var,
        obj_size=cs.obj_size,
        addr_node=a_dst,
        addr_bit=bit_of_var[a_src],
        copy_src=key // reps.size,
        copy_dst=key % reps.size,
        load_src=l_src,
        load_dst=l_dst,
        load_off=l_off,
        store_src=s_src,
        store_dst=s_dst,
        store_off=s_off,
        gep_src=g_src,
        gep_dst=g_dst,
        gep_off=g_off,
        hcd_y=node_of_var[hcd[:, 0]],
        hcd_x=node_of_var[hcd[:, 1]],
    )


def union_leaders(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge the nodes of each pair (a[i], b[i]): every distinct node named, and the
    leader of its merged group (the group's smallest node). Both paths merge this way."""
    nodes, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    k = nodes.size
    pairs = sp.csr_matrix((np.ones(a.size, dtype=np.int8), (inv[:a.size], inv[a.size:])),
                          shape=(k, k))
    n_groups, group = connected_components(pairs, directed=False)
    first = np.full(n_groups, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, group, nodes)
    return nodes, first[group]
