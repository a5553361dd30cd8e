"""The constrained Delaunay triangulation (CDT) of a PSLG, built by inserting its free
vertices into Triangle's CDT of its segment vertices: the host side and the CPU twin.

Issue 19: on a PSLG with many interior points (``holes_pslg`` at 1.39M triangles), Triangle's
``-p`` triangulation of the whole input was 0.95 s of our 1.02 s end to end. A PSLG's
segment vertices are usually few (the domain's boundary and its holes), so Triangle now
triangulates only them (:func:`segment_vertex_cdt`), and the other input vertices ("free"
vertices) are inserted in parallel rounds (on the GPU: cdt_gpu.py over kernels/dmr.cu's
``cdt_*`` kernels; here :func:`insert_cpu`, their twin with exact predicates): each free
vertex is located in its triangle, each round every triangle holding free vertices offers
one of them, whose Bowyer-Watson cavity (never across a segment) is claimed with the
refinement's protocol (cpu.claim_cavities); the winners' fans replace their cavities and
the vertices of a rewritten triangle move to the fan triangle that holds them. Each round
keeps a CDT of the vertices inserted so far, so the refinement proceeds unchanged.

What Triangle does with the input, kept: the domain is what ``-p`` leaves (exterior and
holes eaten up to the segments). The segment vertices' CDT is built twice by Triangle,
small: ``-p`` with the holes (the domain, its segments and markers) and ``-pc`` without
them (the whole convex hull, a convex mesh where straight walks end); a hull triangle is
outside the domain unless ``-p`` kept it. A cavity never crosses a segment, and segments
enclose the domain, so the outside triangles are never touched: a free vertex that lands
in one (inside a hole, outside the domain) is left out of the mesh and stays in the vertex
list, unused, as Triangle leaves it (without ``-j``). Vertex markers: segment vertices get
``-p``'s, free vertices keep theirs (0 if none), as Triangle gives them.

Not handled here (:class:`Unsupported`: the caller triangulates the whole input with
Triangle and says so): segments that cross (Triangle adds vertices there), a free vertex
on a segment (Triangle splits the segment), and on the GPU any sign its float filter
cannot decide (duplicate vertices, vertices on edges, cocircular points).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..unique import run_starts
from .cpu import GrowableMesh, Plan, Planner, apply_plan
from .mesh import Mesh, mesh_from_arrays
from .predicates import orient2d

# Loc codes of a free vertex (kernels/dmr.cu's CDT_* too).
DONE, OUTSIDE, STUCK = -1, -2, -3
# The claim protocol's passes per round and the bits of a mark's priority that hold the
# claimed triangle's count of waiting vertices (kernels/dmr.cu's CDT_COUNT_BITS; the GPU
# takes PASSES from here).
PASSES = 2
COUNT_BITS = 16


class Unsupported(Exception):
    """An input the insertion path does not handle; the message says why."""


@dataclass
class SegmentCDT:
    """Triangle's CDT of the segment vertices over their convex hull, in input vertex ids,
    with what the final mesh needs from Triangle's ``-p`` run."""

    tri: np.ndarray  # (t0, 3) int32, counter-clockwise, input vertex ids
    nbr: np.ndarray  # (t0, 3) int32
    seg: np.ndarray  # (t0, 3) int32 segment codes (mesh.edge_segment_codes)
    outside: np.ndarray  # (t0,) bool: not part of the domain (hole, exterior)
    segment_vertices: np.ndarray  # the input vertices on a segment, int64, increasing
    n_vertices: int  # input vertices
    segments: np.ndarray  # (s, 2) int64: -p's segments, input ids
    segment_markers: np.ndarray  # (s,) int32: -p's
    segment_vertex_markers: np.ndarray  # (len(segment_vertices),) int32: -p's
    input_vertex_markers: np.ndarray | None  # the input's, as given (None: none given)
    table: np.ndarray  # the segment marker table seg codes index

    # The two per-vertex arrays below are built on demand: the GPU path builds its own on
    # the device (api._cdt_on_gpu), and n-sized host passes cost milliseconds at millions
    # of vertices (issue 19: flatnonzero over 3.5M vertices alone took several).
    @property
    def free_ids(self) -> np.ndarray:
        """The input vertices on no segment, int64, increasing."""
        free = np.ones(self.n_vertices, dtype=bool)
        free[self.segment_vertices] = False
        return np.flatnonzero(free)

    @property
    def vertex_markers(self) -> np.ndarray:
        """(n,) int32: every input vertex's output marker (-p's on segment vertices, the
        input's elsewhere, 0 if none given), as Triangle gives them."""
        vm = (np.zeros(self.n_vertices, np.int32) if self.input_vertex_markers is None
              else np.asarray(self.input_vertex_markers, np.int32).ravel().copy())
        vm[self.segment_vertices] = self.segment_vertex_markers
        return vm


def _rows(tri: np.ndarray) -> np.ndarray:
    """Each triangle's sorted corners as one opaque value (for set membership)."""
    return np.ascontiguousarray(np.sort(tri.astype(np.int64), axis=1)).view(
        np.dtype((np.void, 24))).ravel()


def segment_vertex_cdt(src: dict[str, np.ndarray], triangle) -> SegmentCDT:
    """Triangle's CDTs of the segment vertices of ``src`` (validated: host arrays; it has
    segments and no triangles). Raises :class:`Unsupported` where this path does not
    apply."""
    segments = np.asarray(src["segments"], dtype=np.int64)
    n = len(src["vertices"])
    sv = np.unique(segments.ravel())  # segments are few: no pass over all vertices
    if len(sv) < 3:
        raise Unsupported("fewer than 3 segment vertices")
    local = np.searchsorted(sv, segments).astype(np.int32)
    sub = {"vertices": src["vertices"][sv], "segments": local}
    if src.get("segment_markers") is not None:
        sub["segment_markers"] = np.asarray(src["segment_markers"], np.int32).reshape(-1, 1)
    vm_in = src.get("vertex_markers")
    if vm_in is not None:
        sub["vertex_markers"] = np.asarray(vm_in, np.int32)[sv].reshape(-1, 1)
    domain_in = dict(sub)
    if src.get("holes") is not None and len(src["holes"]):
        domain_in["holes"] = src["holes"]
    try:
        domain = triangle.triangulate(domain_in, "pQ")
        hull = triangle.triangulate(sub, "pcQ")
    except (RuntimeError, IndexError) as exc:
        raise Unsupported(f"Triangle on the segment vertices: {exc}") from exc
    if "triangles" not in domain or len(domain["triangles"]) == 0:
        raise Unsupported("the segment vertices' domain is empty")
    if len(domain["vertices"]) != len(sv) or len(hull["vertices"]) != len(sv):
        raise Unsupported("segments cross (Triangle adds vertices where they do)")
    hull_tri = np.asarray(hull["triangles"], dtype=np.int64)
    dom_tri = np.asarray(domain["triangles"], dtype=np.int64)
    inside = np.isin(_rows(hull_tri), _rows(dom_tri))
    if int(inside.sum()) != len(dom_tri):
        raise Unsupported("Triangle's -p and -pc triangulations of the segment vertices differ")
    dom_segments = np.asarray(domain["segments"], dtype=np.int64).reshape(-1, 2)
    dom_markers = np.asarray(domain.get("segment_markers", np.ones(len(dom_segments))),
                             dtype=np.int32).ravel()
    try:
        small = mesh_from_arrays(np.asarray(hull["vertices"], np.float64), hull_tri,
                                 dom_segments, dom_markers, side="cpu")
    except ValueError as exc:
        raise Unsupported(f"the segment vertices' mesh: {exc}") from exc
    return SegmentCDT(
        tri=sv[np.asarray(small.tri, np.int64)].astype(np.int32),
        nbr=np.asarray(small.nbr, np.int32), seg=np.asarray(small.seg, np.int32),
        outside=~inside, segment_vertices=sv, n_vertices=n, segments=sv[dom_segments],
        segment_markers=dom_markers,
        segment_vertex_markers=np.asarray(domain["vertex_markers"], np.int32).ravel(),
        input_vertex_markers=vm_in, table=np.asarray(small.segment_markers),
    )


def inside_triangles(base: SegmentCDT, tri: np.ndarray, n_triangles: int) -> np.ndarray:
    """The domain's triangles of a mesh grown from ``base``: its inside slots, then every
    slot added after them (the outside ones are never rewritten)."""
    return tri[domain_slots(base, n_triangles)]


def _locate(m: GrowableMesh, outside: np.ndarray, px: float, py: float, start: int,
            salt: int, max_walk: int) -> int:
    """The twin of cdt_locate's walk, exact: the triangle holding (px, py), or OUTSIDE."""
    from ..conflict import claim_priority  # noqa: PLC0415

    cur, prev = start, -1
    for step in range(max_walk):
        k0 = int(claim_priority(step, salt)) % 3
        next_k = -1
        for j in range(3):
            k = (k0 + j) % 3
            o = m.nbr.item(cur, k)
            if o >= 0 and o == prev:
                continue
            u, v = m.tri.item(cur, (k + 1) % 3), m.tri.item(cur, (k + 2) % 3)
            if orient2d(m.x.item(u), m.y.item(u), m.x.item(v), m.y.item(v), px, py) < 0:
                next_k = k
                break
        if next_k < 0:
            return OUTSIDE if outside[cur] else cur
        o = m.nbr.item(cur, next_k)
        if o < 0:
            return OUTSIDE
        prev, cur = cur, o
    raise Unsupported("a location walk passed its bound")


def _in_fan(m: GrowableMesh, t: int, px: float, py: float) -> int:
    """The twin of cdt_relocate's walk: from fan triangle t (apex tri[t, 2]) to the one
    holding (px, py)."""
    for _ in range(len(m.tri)):
        u, v, q = m.tri[t].tolist()
        xy = [(m.x.item(w), m.y.item(w)) for w in (u, v, q)]
        if orient2d(*xy[2], *xy[0], px, py) < 0:
            t = m.nbr.item(t, 1)
        elif orient2d(*xy[1], *xy[2], px, py) < 0:
            t = m.nbr.item(t, 0)
        else:
            return t
    raise Unsupported("a relocation walk did not end")


def _pick_keys(m: GrowableMesh, loc: np.ndarray, px: np.ndarray, py: np.ndarray,
               big: np.ndarray) -> np.ndarray:
    """cdt_key's first word: the squared distance to the centroid as float32 bits, +inf
    bits for a vertex whose cavity was too big."""
    t = m.tri[loc]
    cx = (m.x[t[:, 0]] + m.x[t[:, 1]] + m.x[t[:, 2]]) / 3.0
    cy = (m.y[t[:, 0]] + m.y[t[:, 1]] + m.y[t[:, 2]]) / 3.0
    d2 = ((px - cx) ** 2 + (py - cy) ** 2).astype(np.float32).view(np.uint32)
    return np.where(big, np.uint32(0x7F800000), d2)


def claim_marks_of(waiting: np.ndarray, rnd: int) -> list[int]:
    """cdt_mark's marks: the claimed triangle's count of waiting vertices first (capped
    at COUNT_BITS bits), then the top bits of the round's hash, then the claimant."""
    from ..conflict import claim_priority  # noqa: PLC0415

    ids = np.arange(len(waiting), dtype=np.uint64)
    hashed = claim_priority(rnd, ids).astype(np.uint64) >> np.uint64(COUNT_BITS)
    counts = np.minimum(waiting, (1 << COUNT_BITS) - 1).astype(np.uint64)
    prio = (counts << np.uint64(32 - COUNT_BITS)) | hashed
    return ((prio << np.uint64(32)) | ids).tolist()


def claim_in_passes(plans: list[Plan], waiting: np.ndarray, rnd: int) -> np.ndarray:
    """The winners of one round (the twin of cdt_race .. cdt_ring_lock): ``PASSES`` passes
    of the claim protocol; in each, the claimants still undecided whose cavity touches no
    earlier winner's cavity or ring, and whose ring touches no earlier winner's cavity,
    race their cavities (the highest mark on every triangle of its cavity wins it); a
    cavity winner waits where its ring meets a higher cavity winner's cavity (kernels/
    dmr.cu's ring rule), else wins and locks its cavity and ring."""
    marks = claim_marks_of(waiting, rnd)
    cavities = [list(p.cavity) for p in plans]
    rings = [[o for _, _, o, _ in p.boundary if o >= 0] for p in plans]
    undecided = set(range(len(plans)))
    won = np.zeros(len(plans), dtype=bool)
    locked_cavity: set[int] = set()
    locked_ring: set[int] = set()
    for _ in range(PASSES):
        racers = [i for i in sorted(undecided)
                  if not any(t in locked_cavity or t in locked_ring for t in cavities[i])
                  and not any(o in locked_cavity for o in rings[i])]
        undecided = set(racers)
        best: dict[int, int] = {}
        for i in racers:
            for t in cavities[i]:
                best[t] = max(best.get(t, 0), marks[i])
        held = [i for i in racers if all(best[t] == marks[i] for t in cavities[i])]
        owner = {t: i for i in held for t in cavities[i]}
        for i in held:
            if any(owner.get(o, i) != i and marks[owner[o]] > marks[i] for o in rings[i]):
                continue  # waits; may race again in the next pass
            won[i] = True
            undecided.discard(i)
            locked_cavity.update(cavities[i])
            locked_ring.update(rings[i])
    return won


def domain_slots(base: SegmentCDT, n_triangles: int) -> np.ndarray:
    """The domain's slots of a mesh grown from ``base`` to ``n_triangles`` slots: its
    inside slots, then every slot added after them (the outside ones are never
    rewritten), int64, increasing."""
    t0 = len(base.tri)
    return np.concatenate([np.flatnonzero(~base.outside), np.arange(t0, n_triangles)])


def insert_cpu(base: SegmentCDT, vertices: np.ndarray, *, max_rounds: int = 100_000,
               run: int = 64) -> tuple[np.ndarray, dict]:
    """The GPU's insertion rounds in NumPy and Python with exact predicates: (the domain's
    triangles, counter-clockwise, input ids; statistics). Raises :class:`Unsupported` for
    a free vertex on a segment or on another vertex."""
    m, stats = insert_cpu_slots(base, vertices, max_rounds=max_rounds, run=run)
    return inside_triangles(base, m.tri[: m.nt], m.nt), stats


def insert_cpu_slots(base: SegmentCDT, vertices: np.ndarray, *, max_rounds: int = 100_000,
                     run: int = 64) -> tuple[GrowableMesh, dict]:
    """:func:`insert_cpu`'s grown mesh itself, every slot (``m.nt`` of them; the domain's:
    :func:`domain_slots`), as cdt_gpu.insert_gpu hands it over; and the statistics."""
    x = np.ascontiguousarray(vertices[:, 0], dtype=np.float64)
    y = np.ascontiguousarray(vertices[:, 1], dtype=np.float64)
    t0, nf = len(base.tri), len(base.free_ids)
    mesh = Mesh(x, y, base.tri.astype(np.int64), base.nbr.astype(np.int64),
                base.seg.astype(np.int64), np.zeros(len(x), np.int64), base.table)
    m = GrowableMesh(mesh)
    m.reserve(t0 + 2 * nf, len(x))
    planner = Planner(m, 0.0, len(x))
    free = base.free_ids
    order = _morton(x[free], y[free])
    free = free[order]
    loc = np.empty(nf, dtype=np.int64)
    for r in range(0, nf, run):  # a thread's run of Morton-consecutive vertices
        cur = 0
        for fi in range(r, min(nf, r + run)):
            p = int(free[fi])
            loc[fi] = _locate(m, base.outside, x.item(p), y.item(p), cur, fi, 1 << 20)
            cur = int(loc[fi]) if loc[fi] >= 0 else cur
    big = np.zeros(nf, dtype=bool)
    written = np.zeros(t0 + 2 * nf, dtype=np.int64)
    stats = {"rounds": 0, "inserted": 0, "outside": int((loc == OUTSIDE).sum()),
             "claimants": 0}
    active = np.flatnonzero(loc >= 0)
    for rnd in range(max_rounds):
        if len(active) == 0:
            break
        t = loc[active]
        fx, fy = x[free[active]], y[free[active]]
        keys = _pick_keys(m, t, fx, fy, big[active])
        by = np.lexsort((active, keys, t))
        first = run_starts(t[by])
        claims = active[by[first]]
        waiting = np.diff(np.append(np.flatnonzero(first), len(by)))  # per claimed triangle
        plans: list[Plan] = []
        for fi in claims.tolist():
            p = int(free[fi])
            px, py = x.item(p), y.item(p)
            cavity, boundary = planner._grow([int(loc[fi])], px, py, None)
            if cavity is None or len(boundary) != len(cavity) + 2 or not planner._star(
                    boundary, px, py):
                raise Unsupported(f"input vertex {p} lies on a segment or another vertex")
            plans.append(Plan((px, py), cavity, boundary, None, origin=fi))
        winners = claim_in_passes(plans, waiting, rnd)
        for plan, won in zip(plans, winners.tolist()):
            if won:
                slots = apply_plan(m, plan, base.table, vertex=int(free[plan.origin]))
                written[slots] = rnd + 1
                loc[plan.origin] = DONE
        for fi in active.tolist():
            if loc[fi] >= 0 and written[loc[fi]] == rnd + 1:
                p = int(free[fi])
                loc[fi] = _in_fan(m, int(loc[fi]), x.item(p), y.item(p))
        stats["rounds"] += 1
        stats["claimants"] += len(plans)
        stats["inserted"] += int(winners.sum())
        active = active[loc[active] >= 0]
    else:
        raise RuntimeError(f"cdt: {max_rounds} rounds left vertices uninserted")
    return m, stats


def _morton(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    from ..reorder import morton_order  # noqa: PLC0415

    return morton_order(x, y) if len(x) else np.zeros(0, np.int64)


def triangulate_cpu(src: dict[str, np.ndarray], triangle) -> dict[str, np.ndarray]:
    """A Triangle-style ``-p`` output of ``src`` through :func:`insert_cpu` (tests)."""
    base = segment_vertex_cdt(src, triangle)
    tri, _ = insert_cpu(base, np.asarray(src["vertices"], np.float64))
    return {"vertices": src["vertices"], "triangles": tri.astype(np.int32),
            "segments": base.segments.astype(np.int32),
            "segment_markers": base.segment_markers.reshape(-1, 1),
            "vertex_markers": base.vertex_markers.reshape(-1, 1)}


__all__ = ["COUNT_BITS", "DONE", "OUTSIDE", "PASSES", "STUCK", "SegmentCDT", "Unsupported",
           "claim_in_passes", "claim_marks_of", "domain_slots", "inside_triangles", "insert_cpu",
           "insert_cpu_slots",
           "segment_vertex_cdt", "triangulate_cpu"]
