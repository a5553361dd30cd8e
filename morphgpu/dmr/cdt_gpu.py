"""The constrained triangulation's insertion rounds on the GPU: the host side of
kernels/dmr.cu's ``cdt_*`` kernels (the mechanism, and its CPU twin: cdt.py).

One location launch (each thread walks a run of ``RUN`` Morton-consecutive free vertices,
each from the last one's triangle) and one pick launch, then rounds of one small host read
(the claim count, which sizes the plan launches, with the other counters) and
``4 + 4 * PASSES`` launches: claim; read; plan; ``PASSES`` times race, priority check,
check, ring check and lock; apply; relocate and pick for the next round (only the vertices
of rewritten triangles offer themselves again: picks and counts persist). The mesh arrays
are sized once: an inserted vertex adds exactly two triangles, so ``t0 + 2 * free`` slots
hold the end. A round that inserts nothing (every claimant's cavity too big for the
build) moves on to the large-cavity build; a stuck vertex (a sign the float filter cannot
decide) ends the path with :class:`cdt.Unsupported`, and the caller triangulates with
Triangle instead.

Rounds (kernels/dmr.cu says why): on ``holes_pslg`` (36 segment vertices) with 14.8k /
58.9k free vertices the CPU twin took 96 / 171 rounds with the hashed mark alone and one
pass (the H100 took 131 / 578 / 1503 rounds at 35k / 700k / 3.5M free vertices: growing
like n^0.6); with the count of waiting vertices first in the mark, 63 / 77; with that and
two passes, 42 / 51 (three or four passes at 14.8k: 42 too), and Triangle's triangles.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import backend
from . import gpu
from .cdt import PASSES, SegmentCDT, Unsupported

# Free vertices one thread locates in sequence (each walk starts at the last one's
# triangle, a Morton neighbour's: short walks).
RUN = 32
MAX_LOCATE_WALK = 1 << 22  # steps; a walk this long is taken as stuck
# counters (u64; kernels/dmr.cu's CDT_C_*)
C_CLAIMS, C_NEXT0, C_TRIANGLES, C_INSERTED, C_STUCK, C_OUTSIDE, C_BIG = 0, 1, 3, 4, 5, 6, 7
N_COUNTERS = 8
ROUND_LOG = 64  # rounds whose claim and insertion counts the statistics keep


def _free_in_morton_order(cp: Any, base: SegmentCDT, x: Any, y: Any) -> Any:
    """The free vertices (on no segment), Morton-sorted, CuPy int32, built on the device:
    every vertex's Morton order with the few segment vertices dropped (issue 19: the host's
    flatnonzero, int32 conversion and pageable upload of 3.5M free ids cost ~10 ms)."""
    from ..reorder import morton_order  # noqa: PLC0415

    on_segment = cp.zeros(base.n_vertices, dtype=cp.uint8)
    on_segment[cp.asarray(base.segment_vertices)] = 1
    order = morton_order(x, y)
    return order[on_segment[order] == 0].astype(cp.int32)


class _Parts:
    """Seconds of the set-up's steps, the device synchronised at each mark."""

    def __init__(self, cp: Any) -> None:
        self.cp, self.seconds, self.last = cp, {}, time.perf_counter()

    def mark(self, name: str) -> None:
        self.cp.cuda.get_current_stream().synchronize()
        now = time.perf_counter()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self.last, 6)
        self.last = now


def insert_gpu(base: SegmentCDT, x: Any, y: Any, *, max_rounds: int = 100_000,
               ) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    """Insert the free vertices (those on no segment of ``base``) on the device (``x``,
    ``y``: every input vertex's coordinates, CuPy float64). Returns the grown mesh's slots
    and the domain's among them: (tri, nbr, seg: CuPy int32 (nt, 3), counter-clockwise,
    input vertex ids, neighbour slots, segment codes indexing ``base.table``; the domain's
    slots, CuPy int64, increasing; statistics, with ``parts``: the set-up's seconds).
    The slots outside the domain are base slots (never rewritten) that only domain
    triangles' ``nbr`` entries across a segment point to. Raises :class:`cdt.Unsupported`
    on a stuck vertex."""
    cp = backend.cupy_module()
    variants = gpu.build_variants(cp, None)  # loaded once per process (gpu.py)
    t_start = time.perf_counter()
    parts = _Parts(cp)
    sms = backend.gpu_properties()["multiprocessors"]
    block = gpu.BLOCK
    t0, nf = len(base.tri), base.n_vertices - len(base.segment_vertices)
    cap = t0 + 2 * nf
    if 3 * cap > gpu.INT32_LIMIT:
        raise Unsupported(f"{cap} triangle slots exceed the 32-bit build's index range")
    backend.require_gpu_bytes(cap * 72 + nf * 40, "dmr constrained triangulation")
    tri = cp.empty(3 * cap, dtype=cp.int32)
    nbr = cp.empty(3 * cap, dtype=cp.int32)
    seg = cp.empty(3 * cap, dtype=cp.int32)
    for dev, host in ((tri, base.tri), (nbr, base.nbr), (seg, base.seg)):
        dev[: 3 * t0] = cp.asarray(host.reshape(-1), dtype=cp.int32)
    outside = cp.asarray(base.outside.astype(np.uint8))
    free = _free_in_morton_order(cp, base, x, y)
    if len(free) != nf:
        raise Unsupported("the free vertices' count does not match")  # cannot happen
    parts.mark("free_list")
    counters = cp.asarray(np.array([0, 0, 0, t0, 0, 0, 0, 0], dtype=np.uint64))
    loc = cp.empty(max(1, nf), dtype=cp.int32)
    stats: dict[str, Any] = {"engine": "gpu insertion", "rounds": 0, "claimants": 0,
                             "large_rounds": 0, "segment_vertex_triangles": t0,
                             "free_vertices": nf, "passes": PASSES, "claims_per_round": [],
                             "inserted_per_round": []}
    k0 = variants[0].k
    if nf:
        threads = -(-nf // RUN)
        k0["cdt_locate"](
            (-(-threads // block),), (block,),
            (x, y, tri, nbr, seg, outside, free, np.int64(nf), np.int64(RUN), np.int32(0),
             np.int64(MAX_LOCATE_WALK), loc, counters))
    parts.mark("locate")
    pick = cp.empty(cap, dtype=cp.uint64)
    pick.data.memset_async(0xFF, pick.nbytes)  # ~0: no vertex offered yet
    count = cp.zeros(cap, dtype=cp.uint32)
    big = cp.zeros(max(1, nf), dtype=cp.uint8)
    written = cp.zeros(cap, dtype=cp.uint32)
    marks = cp.zeros(cap, dtype=cp.uint64)
    mark_round = cp.zeros(cap, dtype=cp.uint32)
    lock = cp.zeros(cap, dtype=cp.uint32)
    lists = [cp.empty(max(1, nf), dtype=cp.int32) for _ in range(2)]
    max_claims = min(max(1, nf), gpu.MAX_CLAIMANTS)
    claims = cp.empty(max_claims, dtype=cp.int32)
    cmark = cp.empty(max_claims, dtype=cp.uint64)
    state = cp.empty(max_claims, dtype=cp.int32)
    racing = cp.zeros(max_claims, dtype=cp.uint32)  # pass stamps are never 0
    grid = (sms * 8,)
    # The first picks: every located vertex offers itself to its triangle (offer_all; no
    # slot holds the stamp, so none relocates); the waiting ones -> list 0. Later rounds
    # offer only the vertices of rewritten triangles: picks and counts persist.
    first_n = counters[C_NEXT0:C_NEXT0 + 1]
    k0["cdt_relocate_pick"](
        grid, (block,),
        (x, y, tri, nbr, seg, free, np.uint64(0), first_n, np.int64(nf), loc, written,
         np.uint32(0xFFFFFFFF), np.int32(1), big, pick, count, lists[0], first_n, counters))
    level, last_inserted = 0, 0
    parts.mark("first_picks")
    t_loop = time.perf_counter()
    read = [0] * N_COUNTERS
    for rnd in range(max_rounds):
        v = variants[level]
        here = C_NEXT0 + rnd % 2
        there = C_NEXT0 + (rnd + 1) % 2
        args = (lists[rnd % 2], counters[here:here + 1], np.int64(nf))
        v.k["cdt_claim"](grid, (block,),
                         (*args, loc, pick, count, claims, np.int64(max_claims),
                          counters[C_CLAIMS:C_CLAIMS + 1], counters[there:there + 1]))
        read = [int(c) for c in counters.get()]
        if read[C_STUCK]:
            raise Unsupported(f"{read[C_STUCK]} free vertices with an undecided sign (on a "
                              f"segment or an edge, a duplicate, cocircular points)")
        if rnd and read[C_INSERTED] == last_inserted:
            # the last round inserted nothing: every claimant's cavity was too big
            if level + 1 >= gpu.LEVELS:
                raise Unsupported("cavities larger than the largest build")
            level += 1
            v = variants[level]
            big.data.memset_async(0, big.nbytes)  # no fill kernel (gpu.py, _grown)
        if rnd and rnd <= ROUND_LOG:
            stats["inserted_per_round"].append(read[C_INSERTED] - last_inserted)
        last_inserted = read[C_INSERTED]
        n_claims = min(read[C_CLAIMS], max_claims)
        if n_claims == 0:
            break
        if rnd < ROUND_LOG:
            stats["claims_per_round"].append(n_claims)
        plans = v.plans_for(n_claims)
        cgrid = (-(-n_claims // block),)
        nc = np.int64(n_claims)
        v.k["cdt_plan"](
            cgrid, (block,),
            (x, y, tri, nbr, seg, free, claims, nc, np.uint64(rnd), loc, big, pick, count,
             written, cmark, state, plans.hood, plans.n_cavity, plans.n_hood, counters))
        lock_stamp = np.uint32(2 * (rnd + 1))
        for q in range(PASSES):
            stamp = np.uint32(rnd * PASSES + q + 1)
            v.k["cdt_race"](cgrid, (block,),
                            (nc, stamp, lock_stamp, lock, plans.hood, plans.n_cavity,
                             plans.n_hood, cmark, state, racing, marks, mark_round))
            v.k["cdt_prioritycheck"](cgrid, (block,),
                                     (nc, stamp, plans.hood, plans.n_cavity, cmark, racing,
                                      marks))
            v.k["cdt_check"](cgrid, (block,),
                             (nc, stamp, plans.hood, plans.n_cavity, cmark, racing, marks))
            v.k["cdt_ring_lock"](cgrid, (block,),
                                 (nc, stamp, lock_stamp, plans.hood, plans.n_cavity,
                                  plans.n_hood, cmark, racing, marks, mark_round, state,
                                  lock))
        v.k["cdt_apply"](
            cgrid, (block,),
            (x, y, tri, nbr, seg, free, claims, nc, np.uint64(rnd), state, plans.hood,
             plans.n_cavity, loc, written, pick, count, counters))
        v.k["cdt_relocate_pick"](
            grid, (block,),
            (x, y, tri, nbr, seg, free, *args, loc, written, np.uint32(rnd + 1), np.int32(0),
             big, pick, count, lists[(rnd + 1) % 2], counters[there:there + 1], counters))
        stats["rounds"] += 1
        stats["claimants"] += n_claims
        stats["large_rounds"] += level
    else:
        raise Unsupported(f"{max_rounds} insertion rounds left free vertices")
    nt = read[C_TRIANGLES]
    stats.update(inserted=read[C_INSERTED], outside=read[C_OUTSIDE], big=read[C_BIG])
    cp.cuda.get_current_stream().synchronize()
    stats["loop_seconds"] = time.perf_counter() - t_loop
    parts.mark("loop")
    # the domain: the base's inside slots, then every slot the rounds added (never outside)
    kept = cp.concatenate([cp.asarray(np.flatnonzero(~base.outside).astype(np.int64)),
                           cp.arange(t0, nt, dtype=cp.int64)])  # cdt.domain_slots
    shaped = [a[: 3 * nt].reshape(nt, 3) for a in (tri, nbr, seg)]
    stats["parts"] = parts.seconds
    stats["seconds"] = time.perf_counter() - t_start
    return (*shaped, kept, stats)
