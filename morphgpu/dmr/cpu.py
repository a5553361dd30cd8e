"""Delaunay refinement on the CPU: the GPU's rounds and claim protocol, in NumPy and Python.

One round: find the bad triangles (vectorised); for each, plan its cavity on the current
mesh (walk to the circumcentre or Üngör's off-centre, Bowyer–Watson cavity, segment
encroachment → split); claim the cavities with the shared conflict protocol
(``morphgpu.conflict.claim``: the winners' neighbourhoods are disjoint and there is always
one); re-triangulate the
winners, reusing their cavity slots first. Planning reads only the mesh as it was at the
start of the round, so the winners can be applied in any order, exactly as on the GPU.

A cavity is claimed exclusively; the ring of triangles just outside it, whose neighbour
pointers the re-triangulation rewrites, is shared (see :func:`claim_cavities`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .mesh import Mesh
from .predicates import incircle, orient2d

MAX_WALK = 4096
MAX_CAVITY = 4096
# Segments shorter than this fraction of the domain's size are not split again: the
# triangle is left as it is (marked stuck) rather than chasing float64 underflow near
# small input angles.
MIN_SPLIT_FRACTION = 1e-9
# A bad triangle gives way to a higher-ranked bad one within this many edge steps
# (:func:`gives_way`): 0 off, 1 its neighbours, 2 theirs too, 3 (the most the kernel does)
# theirs again. 3: see morphgpu/dmr/gpu.py's module doc (output size; depth 2 against 3
# measured again at 28k-1M triangles in).
DEFER_DEPTH = 3


@dataclass
class Plan:
    """What one bad triangle wants to do this round."""

    point: tuple[float, float]
    cavity: list[int]
    boundary: list[tuple[int, int, int, int]]  # (u, v, outer triangle, seg code) CCW edges
    split: tuple[int, int, int] | None  # (a, b, seg code) of the segment being split
    origin: int = -1  # the bad triangle this plan refines
    apex: int = -1  # the input vertex a shell split measured from


class GrowableMesh:
    """The mesh arrays with spare capacity, grown by an over-allocation factor.

    It takes the mesh's arrays over (no copy): the caller hands in a mesh it owns.
    """

    def __init__(self, mesh: Mesh, growth: float = 1.5) -> None:
        self.growth = growth
        self.nt, self.nv = mesh.n_triangles, mesh.n_vertices
        self.tri, self.nbr, self.seg = mesh.tri, mesh.nbr, mesh.seg
        self.x, self.y, self.vmark = mesh.x, mesh.y, mesh.vertex_markers
        apex = mesh.extra.get("vertex_apex")
        self.apex = np.full(self.nv, -1, np.int32) if apex is None else np.asarray(apex)
        self.template = mesh

    def reserve(self, triangles: int, vertices: int) -> None:
        if triangles > len(self.tri):
            cap = max(triangles, int(len(self.tri) * self.growth))
            for name in ("tri", "nbr", "seg"):
                arr = getattr(self, name)
                grown = np.zeros((cap, 3), dtype=arr.dtype)
                grown[: self.nt] = arr[: self.nt]
                setattr(self, name, grown)
        if vertices > len(self.x):
            cap = max(vertices, int(len(self.x) * self.growth))
            for name in ("x", "y", "vmark", "apex"):
                arr = getattr(self, name)
                grown = np.full(cap, -1 if name == "apex" else 0, dtype=arr.dtype)
                grown[: self.nv] = arr[: self.nv]
                setattr(self, name, grown)

    def to_mesh(self) -> Mesh:
        m = self.template
        # views of the grown buffers: the refinement is over, nothing writes them again
        return Mesh(
            self.x[: self.nv], self.y[: self.nv], self.tri[: self.nt], self.nbr[: self.nt],
            self.seg[: self.nt], self.vmark[: self.nv], m.segment_markers, m.holes,
            {**m.extra, "vertex_apex": self.apex[: self.nv]},
        )


def bad_mask(
    x: np.ndarray, y: np.ndarray, tri: np.ndarray, seg: np.ndarray, min_angle: float,
    max_area: float | None, apex: np.ndarray | None = None,
) -> np.ndarray:
    """Which of these triangles to refine: smallest angle too small, or area too large.

    A smallest angle formed by two segments is an input angle and cannot be improved; such
    triangles are left alone (Triangle does the same).
    """
    px, py = x[tri], y[tri]
    # squared length of edge i (opposite vertex i)
    ex = px[:, [2, 0, 1]] - px[:, [1, 2, 0]]
    ey = py[:, [2, 0, 1]] - py[:, [1, 2, 0]]
    len2 = ex * ex + ey * ey
    short = np.argmin(len2, axis=1)
    rows = np.arange(len(tri))
    a2 = len2[rows, short]
    b2 = len2[rows, (short + 1) % 3]
    c2 = len2[rows, (short + 2) % 3]
    cos_small = (b2 + c2 - a2) / (2.0 * np.sqrt(b2 * c2))
    bad = cos_small > math.cos(math.radians(min_angle))
    input_angle = (seg[rows, (short + 1) % 3] != 0) & (seg[rows, (short + 2) % 3] != 0)
    bad &= ~input_angle
    if apex is not None:
        # The shortest edge joins two shell vertices of one apex at the same distance from
        # it: the skinny triangle is the price of a small input angle (Triangle's rule),
        # provided the angle is small: the segments meet below 60° (chord below radius).
        u = tri[rows, (short + 1) % 3]
        v = tri[rows, (short + 2) % 3]
        au, av = apex[u], apex[v]
        a = np.maximum(au, 0)
        du = (x[u] - x[a]) ** 2 + (y[u] - y[a]) ** 2
        dv = (x[v] - x[a]) ** 2 + (y[v] - y[a]) ** 2
        bad &= ~((au >= 0) & (au == av) & (np.abs(du - dv) <= 1e-6 * du) & (a2 < du))
    if max_area is not None:
        area = 0.5 * np.abs(ex[:, 2] * (-ey[:, 1]) - ey[:, 2] * (-ex[:, 1]))
        bad |= area > max_area
    return bad


def circumcentre(ax, ay, bx, by, cx, cy) -> tuple[float, float]:
    # relative to a, which keeps the digits that matter for small triangles far from 0
    bx, by, cx, cy = bx - ax, by - ay, cx - ax, cy - ay
    d = 2.0 * (bx * cy - by * cx)
    if d == 0.0:  # collinear in floats: no circumcentre (Python floats raise, not inf)
        return math.nan, math.nan
    b2, c2 = bx * bx + by * by, cx * cx + cy * cy
    return ax + (cy * b2 - by * c2) / d, ay + (bx * c2 - cx * b2) / d


def off_centre_constant(min_angle: float) -> float:
    """Üngör's off-centre: its distance from the shortest edge's midpoint, per unit of that
    edge's length, for the angle bound (Triangle's constant: 0.475 rather than 0.5 keeps
    the new triangle a little inside the bound)."""
    c = math.cos(math.radians(min_angle))
    if c >= 1.0:
        # An angle so small its cosine rounds to 1 (triangulate without q asks for 1e-9
        # degrees): the off-centre lies infinitely far, so the circumcentre is always the
        # nearer point, which off_k = 0 says (the formula divided by zero here).
        return 0.0
    return 0.475 * math.sqrt((1.0 + c) / (1.0 - c))


def insertion_point(ax, ay, bx, by, cx, cy, off_k: float) -> tuple[float, float]:
    """Where to refine the counter-clockwise triangle abc: its circumcentre, or Üngör's
    off-centre on the bisector of the shortest edge when that is nearer the edge (fewer,
    better-spread points; Triangle's default). ``off_k`` <= 0: always the circumcentre.
    The kernel's ``insertion_point`` is the same code."""
    px, py = circumcentre(ax, ay, bx, by, cx, cy)
    if off_k <= 0.0 or not (math.isfinite(px) and math.isfinite(py)):
        return px, py
    pts = ((ax, ay), (bx, by), (cx, cy))
    len2 = [
        (pts[(i + 2) % 3][0] - pts[(i + 1) % 3][0]) ** 2
        + (pts[(i + 2) % 3][1] - pts[(i + 1) % 3][1]) ** 2
        for i in range(3)
    ]
    s = 0  # ties to the lowest index, as in the kernel
    if len2[1] < len2[s]:
        s = 1
    if len2[2] < len2[s]:
        s = 2
    (ux, uy), (vx, vy) = pts[(s + 1) % 3], pts[(s + 2) % 3]
    dx, dy = vx - ux, vy - uy
    # the midpoint plus off_k times the edge turned left, towards the opposite vertex
    ox, oy = 0.5 * dx - off_k * dy, 0.5 * dy + off_k * dx
    if ox * ox + oy * oy < (px - ux) ** 2 + (py - uy) ** 2:
        return ux + ox, uy + oy
    return px, py


def split_point(ax, ay, bx, by, a_input: bool, b_input: bool) -> tuple[float, float]:
    """Where to split segment ab: Ruppert's concentric shells (as Triangle does).

    Next to an input vertex the split lies at a power-of-two distance from it (the one in
    [1/3, 2/3] of the length), so the pieces of two segments meeting at a small input
    angle match and the splitting stops; elsewhere the midpoint.
    """
    if a_input == b_input:
        return 0.5 * (ax + bx), 0.5 * (ay + by)
    length = math.hypot(bx - ax, by - ay)
    mant, exp = math.frexp(length / 3.0)
    d = math.ldexp(1.0, exp if mant > 0.5 else exp - 1)
    f = d / length if a_input else 1.0 - d / length
    return ax + f * (bx - ax), ay + f * (by - ay)


class WindowEdge(Exception):
    """A plan would walk into, or grow its cavity over, a frozen triangle: the mesh
    handed over is a window of a larger one, and this plan needs more of it."""


class Planner:
    """Builds cavities on a GrowableMesh (read-only).

    ``frozen``: triangles that are only the rim of a window cut from a larger mesh (their
    neighbours beyond the window are not here). A plan may use one as a ring triangle
    (outside its cavity: only the shared edge matters), never walk into one or take it
    into its cavity: it raises :class:`WindowEdge` instead, so a window never makes a
    plan that the whole mesh would not.
    """

    def __init__(
        self, m: GrowableMesh, min_split: float, n_input: int, off_k: float = 0.0,
        frozen: set[int] | None = None,
    ) -> None:
        self.m = m
        self.min_split = min_split
        self.n_input = n_input  # vertices below this index are input vertices
        self.off_k = off_k  # see insertion_point
        self.frozen = frozen or set()

    # Coordinates are read as Python floats (``item``): the predicates run in Python, where
    # NumPy scalars cost several times more per operation and round the same way.
    def _xy(self, v: int) -> tuple[float, float]:
        return self.m.x.item(v), self.m.y.item(v)

    def _in_circle(self, t: int, px: float, py: float) -> bool:
        a, b, c = self.m.tri[t].tolist()
        return incircle(*self._xy(a), *self._xy(b), *self._xy(c), px, py) > 0

    def _grow(self, seeds: list[int], px: float, py: float, through: tuple[int, int] | None):
        """Bowyer–Watson cavity from ``seeds`` (never crossing a segment, except ``through``,
        the (triangle, edge) of a segment being split) and its CCW boundary edges."""
        m = self.m
        inside = set(seeds)
        stack = list(seeds)
        while stack:
            t = stack.pop()
            for k in range(3):
                o = m.nbr.item(t, k)
                if o < 0 or o in inside or m.seg.item(t, k) != 0:
                    continue
                if self._in_circle(o, px, py):
                    if o in self.frozen:
                        raise WindowEdge(o)
                    inside.add(o)
                    stack.append(o)
                    if len(inside) > MAX_CAVITY:
                        return None, None
        boundary = []
        for t in sorted(inside):
            for k in range(3):
                o = m.nbr.item(t, k)
                if o >= 0 and o in inside:
                    continue
                u, v = m.tri.item(t, (k + 1) % 3), m.tri.item(t, (k + 2) % 3)
                if through is not None and (t, k) == through:
                    continue  # the boundary segment being split: no triangle on it
                boundary.append((u, v, o, m.seg.item(t, k)))
        if len(boundary) < len(inside):  # not a disc: the fan would leave slots behind
            return None, None
        return sorted(inside), boundary

    def _star(self, boundary, px, py) -> bool:
        return all(orient2d(*self._xy(u), *self._xy(v), px, py) > 0 for u, v, _, _ in boundary)

    def split_plan(self, t: int, k: int) -> Plan | None:
        m = self.m
        a, b = int(m.tri[t, (k + 1) % 3]), int(m.tri[t, (k + 2) % 3])
        (ax, ay), (bx, by) = self._xy(a), self._xy(b)
        if math.hypot(bx - ax, by - ay) < self.min_split:
            return None
        a_in, b_in = a < self.n_input, b < self.n_input
        px, py = split_point(ax, ay, bx, by, a_in, b_in)
        o = int(m.nbr[t, k])
        if o in self.frozen:
            raise WindowEdge(o)
        seeds = [t] if o < 0 else [t, o]
        cavity, boundary = self._grow(seeds, px, py, (t, k) if o < 0 else None)
        if cavity is None or not self._star(boundary, px, py):
            return None
        apex = -1 if a_in == b_in else (a if a_in else b)
        return Plan((px, py), cavity, boundary, (a, b, int(m.seg[t, k])), apex=apex)

    def plan(self, t: int) -> Plan | None:
        """The cavity of bad triangle t, or None when it cannot be refined safely now
        (:class:`WindowEdge` when it would need a frozen triangle)."""
        if t in self.frozen:
            raise WindowEdge(t)
        plan = self._plan(t)
        if plan is not None:
            plan.origin = t
        return plan

    def _plan(self, t: int) -> Plan | None:
        m = self.m
        a, b, c = m.tri[t].tolist()
        px, py = insertion_point(*self._xy(a), *self._xy(b), *self._xy(c), self.off_k)
        if not (math.isfinite(px) and math.isfinite(py)):
            return None
        cur = t
        for _ in range(MAX_WALK):
            for k in range(3):
                u, v = m.tri.item(cur, (k + 1) % 3), m.tri.item(cur, (k + 2) % 3)
                if orient2d(*self._xy(u), *self._xy(v), px, py) < 0:
                    if m.seg[cur, k] != 0:  # the circumcentre lies beyond a segment
                        return self.split_plan(cur, k)
                    cur = int(m.nbr[cur, k])
                    if cur in self.frozen:
                        raise WindowEdge(cur)
                    break
            else:
                break
        else:
            return None
        cavity, boundary = self._grow([cur], px, py, None)
        if cavity is None:
            return None
        for u, v, _, code in boundary:
            (ux, uy), (vx, vy) = self._xy(u), self._xy(v)
            if code and (ux - px) * (vx - px) + (uy - py) * (vy - py) <= 0:
                # the new vertex would encroach this segment: split it instead
                for s in cavity:
                    for k in range(3):
                        if m.tri[s, (k + 1) % 3] == u and m.tri[s, (k + 2) % 3] == v:
                            return self.split_plan(s, k)
        if not self._star(boundary, px, py) or self._too_close(boundary, px, py):
            return None
        return Plan((px, py), cavity, boundary, None)

    def _too_close(self, boundary, px: float, py: float) -> bool:
        """A new vertex closer to an old one than the size floor would only make slivers."""
        return any(
            math.hypot(self.m.x.item(u) - px, self.m.y.item(u) - py) < self.min_split
            for u, _, _, _ in boundary
        )


def apply_plan(m: GrowableMesh, plan: Plan, segment_markers: np.ndarray,
               vertex: int | None = None) -> list[int]:
    """Re-triangulate one cavity as a fan from its new vertex (slots reused first);
    returns the slots written, in the order of ``plan.boundary``. ``vertex``: an existing
    vertex to insert (the constrained triangulation's free vertices, cdt.insert_cpu)
    instead of a new one at ``plan.point``."""
    if vertex is None:
        p = m.nv
        m.x[p], m.y[p] = plan.point
        m.vmark[p] = 0 if plan.split is None else segment_markers[plan.split[2] - 1]
        m.apex[p] = plan.apex
        m.nv += 1
    else:
        p = vertex
    n_new = len(plan.boundary)
    slots = plan.cavity[:n_new] + list(range(m.nt, m.nt + max(0, n_new - len(plan.cavity))))
    m.nt += max(0, n_new - len(plan.cavity))
    starts = {u: slots[i] for i, (u, _, _, _) in enumerate(plan.boundary)}
    ends = {v: slots[i] for i, (_, v, _, _) in enumerate(plan.boundary)}
    split_ends = set() if plan.split is None else {plan.split[0], plan.split[1]}
    split_code = 0 if plan.split is None else plan.split[2]
    for i, (u, v, o, code) in enumerate(plan.boundary):
        s = slots[i]
        m.tri[s] = (u, v, p)
        m.nbr[s] = (starts.get(v, -1), ends.get(u, -1), o)
        m.seg[s] = (
            split_code if v in split_ends else 0, split_code if u in split_ends else 0, code
        )
        if o >= 0:
            # the corner of o that is neither u nor v names the shared edge (plain
            # Python: a NumPy call per ring triangle cost more than the rest of the loop)
            ot = m.tri[o].tolist()
            k = 0 if ot[0] != u and ot[0] != v else 1 if ot[1] != u and ot[1] != v else 2
            m.nbr[o, k] = s
    return slots


def order_key(x: np.ndarray, y: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Each triangle's place in the refinement order as uint32, larger first: the shorter
    its shortest edge, the earlier (the bits of the squared length as float32, counted
    down from the top; the kernel's key in ``bad_rank``). Triangle's own order: its bad
    triangle queues are keyed by the squared shortest edge, shortest first."""
    px, py = x[tri], y[tri]
    ex = px[:, [2, 0, 1]] - px[:, [1, 2, 0]]
    ey = py[:, [2, 0, 1]] - py[:, [1, 2, 0]]
    shortest2 = (ex * ex + ey * ey).min(axis=1)
    return np.uint32(0xFFFFFFFF) - shortest2.astype(np.float32).view(np.uint32)


def gives_way(
    nbr: np.ndarray, bad: np.ndarray, key: np.ndarray, n_slots: int, rnd: int, depth: int
) -> np.ndarray:
    """Which of the ``bad`` triangles give way this round to a bad triangle that outranks
    them within ``depth`` edge steps (the kernel's ``defers``).

    The order, highest first: the shorter shortest edge (``key``, from :func:`order_key`),
    then the round's hashed priority, then the slot. Shortest edge first is Triangle's
    order; with it the refined meshes are as small as Triangle's (module doc of
    morphgpu/dmr/gpu.py); and the cavities of close bad triangles nearly always overlap,
    so at most one of them could win: the others would plan only to lose. The
    highest-ranked bad triangle never gives way, so a round with bad triangles keeps a
    claimant.
    """
    from ..conflict import claim_marks, claim_priority  # noqa: PLC0415

    if depth == 0 or len(bad) == 0:
        return np.zeros(len(bad), dtype=bool)
    # (key, priority) as one uint64; ties (same key and priority) go to the higher slot
    rank = np.zeros(n_slots, dtype=np.uint64)
    rank[bad] = claim_marks(key, claim_priority(rnd, bad))
    is_bad = np.zeros(n_slots, dtype=bool)
    is_bad[bad] = True
    # the triangles within `depth` steps, level by level (t itself may come back: dropped)
    level, parts = bad[:, None], []
    for _ in range(depth):
        step = nbr[np.maximum(level, 0)].reshape(len(bad), -1)
        step[np.repeat(level < 0, 3, axis=1)] = -1
        parts.append(step)
        level = step
    near = np.concatenate(parts, axis=1)
    near[near == bad[:, None]] = -1
    live = near >= 0
    safe = np.where(live, near, 0)
    mine = rank[bad][:, None]
    higher = (rank[safe] > mine) | ((rank[safe] == mine) & (safe > bad[:, None]))
    return np.any(live & is_bad[safe] & higher, axis=1)


def claim_cavities(plans: list[Plan], n_triangles: int, rnd: int) -> np.ndarray:
    """Winners of one round: exclusive cavities, shared rings (the GPU's four phases).

    Phases 1–3 are the shared protocol (``morphgpu.conflict.claim``) over the cavities
    alone. A cavity winner also rewrites one neighbour pointer in each triangle of its
    ring (the triangles just outside), which is safe unless that triangle lies in another
    winner's cavity; phase 4 settles exactly those pairs by priority, the lower one waits.
    Conflicts are symmetric (if my ring meets your cavity, your ring meets mine), so one
    of each pair goes on, and the highest mark of the round always does.
    """
    from ..conflict import claim, claim_marks, claim_priority  # noqa: PLC0415

    n = len(plans)
    ids = np.arange(n, dtype=np.uint64)
    marks = claim_marks(claim_priority(rnd, ids), ids)
    cav_sizes = np.array([len(p.cavity) for p in plans], dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(cav_sizes)
    cavity_slots = np.fromiter((t for p in plans for t in p.cavity), np.int64, count=offsets[-1])
    # Claims are renumbered to the claimed triangles only, so a round costs O(its claims)
    # and not O(mesh): the finishing rounds of a big mesh claim a handful of triangles.
    claimed, elements = np.unique(cavity_slots, return_inverse=True)
    cavity_won = np.asarray(claim(offsets, elements, n_elements=len(claimed), round=rnd), bool)
    owner = np.full(len(claimed), -1, dtype=np.int64)
    won_ids = np.nonzero(cavity_won)[0]
    owner[elements[np.repeat(cavity_won, cav_sizes)]] = np.repeat(won_ids, cav_sizes[won_ids])
    winners = cavity_won.copy()
    ring_sizes = np.array([len(plans[i].boundary) for i in won_ids.tolist()], dtype=np.int64)
    ring = np.fromiter(
        (o for i in won_ids.tolist() for _, _, o, _ in plans[i].boundary), np.int64,
        count=int(ring_sizes.sum()),
    )
    ring_claimant = np.repeat(won_ids, ring_sizes)
    pos = np.minimum(np.searchsorted(claimed, ring), max(0, len(claimed) - 1))
    holder = np.where((ring >= 0) & (claimed[pos] == ring), owner[pos], -1)
    other = holder >= 0
    other[other] = holder[other] != ring_claimant[other]
    waits = other.copy()
    waits[other] = marks[holder[other]] > marks[ring_claimant[other]]
    winners[ring_claimant[waits]] = False
    return winners


def refine_cpu(
    mesh: Mesh, min_angle: float, max_area: float | None, *, max_rounds: int = 100_000,
    progress: Callable[[dict], None] | None = None, candidates: np.ndarray | None = None,
    defer_depth: int = DEFER_DEPTH,
) -> tuple[Mesh, dict]:
    """Refine until no bad triangle can be improved; returns the mesh and round statistics.
    Raises RuntimeError when ``max_rounds`` rounds leave bad triangles.

    ``candidates``: the only triangles that may be bad (the GPU path hands over the few it
    gave up on); by default every triangle. Badness depends on a triangle alone, so after
    a round only the losers and the triangles just written can be bad. The mesh's arrays
    are taken over and may be modified.

    A loser's plan is kept for the next round when no winner rewrote its origin or a
    triangle of its cavity or ring: planning again would find the same cavity, since it
    ends where the ring's circumcircles stop holding the point, and the ring is unchanged.
    Most claimants of the first rounds lose, so this saves most of the planning (the GPU
    replans instead: there planning is cheap and keeping plans is not). Bad triangles that
    give way to a close higher-ranked one (:func:`gives_way`) wait for a later round.
    """
    # finishing a few triangles of a big mesh must not copy it at 1.5x
    m = GrowableMesh(mesh, growth=1.5 if candidates is None else 1.02)
    span = max(np.ptp(mesh.x), np.ptp(mesh.y), 1e-300)
    planner = Planner(
        m, MIN_SPLIT_FRACTION * span, mesh.extra.get("n_input", mesh.n_vertices),
        off_centre_constant(min_angle),
    )
    stats = {
        "rounds": 0, "refinements": 0, "claimants": 0, "aborted": 0, "stuck": 0, "plans_kept": 0,
        "gave_way": 0,
    }
    cand = np.arange(m.nt) if candidates is None else np.unique(np.asarray(candidates))
    failed: list[int] = []
    kept: dict[int, Plan] = {}  # last round's losing plans that are still valid, by origin
    for rnd in range(max_rounds):
        rows = m.tri[cand]
        bad = cand[bad_mask(m.x, m.y, rows, m.seg[cand], min_angle, max_area, m.apex)]
        if len(bad) == 0:
            break
        waiting = gives_way(
            m.nbr, bad, order_key(m.x, m.y, m.tri[bad]), m.nt, rnd, defer_depth
        )
        stats["gave_way"] += int(waiting.sum())
        m.reserve(m.nt + 2 * len(bad), m.nv + len(bad))
        plans: list[Plan] = []
        for t in bad[~waiting].tolist():
            plan = kept.get(t)
            if plan is None:
                plan = planner.plan(t)
            else:
                stats["plans_kept"] += 1
            if plan is None:  # stuck: dropped until its slot is rewritten
                failed.append(t)
            else:
                plans.append(plan)
        if not plans and not waiting.any():
            break
        winners = claim_cavities(plans, m.nt, rnd) if plans else np.zeros(0, dtype=bool)
        nt_before = m.nt
        # every origin stays a candidate: a segment split need not remove its origin
        touched = [p.origin for p in plans] + bad[waiting].tolist()
        rewritten: set[int] = set()
        for plan, won in zip(plans, winners.tolist()):
            if won:
                apply_plan(m, plan, mesh.segment_markers)
                touched += plan.cavity
                rewritten.update(plan.cavity)
        kept = {
            plan.origin: plan for plan, won in zip(plans, winners.tolist())
            if not won and plan.origin not in rewritten and rewritten.isdisjoint(plan.cavity)
            and all(o not in rewritten for _, _, o, _ in plan.boundary)
        }
        cand = np.unique(np.concatenate([
            np.asarray(touched, dtype=np.int64), np.arange(nt_before, m.nt)
        ]))
        n_won = int(winners.sum())
        stats["rounds"] += 1
        stats["refinements"] += n_won
        stats["claimants"] += len(plans)
        stats["aborted"] += len(plans) - n_won
        if progress is not None:
            progress({"round": rnd, "bad": len(bad), "refined": n_won, "triangles": m.nt})
    else:
        raise RuntimeError(
            f"dmr: {max_rounds} rounds were not enough (bad triangles remain); the mesh is "
            "not refined"
        )
    # only the last candidates and the stuck ones can still be bad
    last = np.unique(np.concatenate([cand, np.asarray(failed, dtype=np.int64)]))
    remaining = bad_mask(m.x, m.y, m.tri[last], m.seg[last], min_angle, max_area, m.apex)
    stats["stuck"] = int(remaining.sum())
    stats["abort_ratio"] = stats["aborted"] / max(1, stats["claimants"])
    return m.to_mesh(), stats


def finish_cpu(
    mesh: Mesh, min_angle: float, max_area: float | None, candidates: np.ndarray, *,
    min_split: float | None = None, frozen: np.ndarray | None = None,
    max_batches: int = 100_000,
) -> tuple[Mesh, dict]:
    """Refine the few ``candidates`` (and what their refinement creates) in sequence.

    The GPU path's hand-over: a few triangles the GPU gave up on, in a window cut from a
    mesh of millions (``morphgpu.dmr.finish``). With a handful of claimants per round,
    rounds mostly add cost (over half the plans lose to a neighbour's and are redone), so
    here each bad triangle is planned on the current mesh and applied at once:
    Bowyer–Watson insertion in sequence, no claims. Badness is still tested in vectorised
    batches: a batch is everything queued so far; a batch entry whose slot an earlier
    insertion of the batch rewrote is skipped, since that insertion queued the slot for
    the next batch. The mesh's arrays are taken over.

    ``min_split``: the segment-length floor (default: from this mesh's extent; a window
    passes the whole mesh's). ``frozen``: the window's rim (see :class:`Planner`); a bad
    triangle whose plan reaches it is left for a larger window. ``stats["left"]``: the
    triangles still bad at the end (``stats["stuck"]`` of them failed here, the others
    reached the rim: ``stats["outside"]``).
    """
    m = GrowableMesh(mesh, growth=1.5)
    if min_split is None:
        min_split = MIN_SPLIT_FRACTION * max(np.ptp(mesh.x), np.ptp(mesh.y), 1e-300)
    planner = Planner(
        m, min_split, mesh.extra.get("n_input", mesh.n_vertices),
        off_centre_constant(min_angle),
        frozen=None if frozen is None else set(np.asarray(frozen).tolist()),
    )
    queue = np.unique(np.asarray(candidates, dtype=np.int64))
    failed: set[int] = set()
    outside: set[int] = set()  # plans that reached the rim (a larger window may do them)
    stats = {"rounds": 0, "refinements": 0, "claimants": 0, "aborted": 0}
    last_failed = None
    for _ in range(max_batches):
        if len(queue) == 0:
            # The mesh around a failed triangle may have changed since: retry them while
            # that helps (their number must fall each time, so this ends).
            still = np.array(sorted(failed), dtype=np.int64)
            still = still[bad_mask(m.x, m.y, m.tri[still], m.seg[still], min_angle, max_area,
                                   m.apex)]
            if len(still) == 0 or (last_failed is not None and len(still) >= last_failed):
                break
            last_failed, queue = len(still), still
            failed.clear()
        bad = queue[bad_mask(m.x, m.y, m.tri[queue], m.seg[queue], min_angle, max_area, m.apex)]
        rewritten: set[int] = set()
        queued: list[int] = []
        for t in bad.tolist():
            if t in rewritten:
                continue
            outside.discard(t)
            try:
                plan = planner.plan(t)
            except WindowEdge:
                outside.add(t)
                continue
            if plan is None:  # left alone unless an insertion rewrites its slot
                failed.add(t)
                continue
            failed.discard(t)
            m.reserve(m.nt + len(plan.boundary), m.nv + 1)
            nt_before = m.nt
            apply_plan(m, plan, mesh.segment_markers)
            rewritten.update(plan.cavity)
            # the origin stays queued: a segment split need not remove it
            queued += [t, *plan.cavity, *range(nt_before, m.nt)]
            stats["refinements"] += 1
        stats["rounds"] += 1
        queue = np.unique(np.asarray(queued, dtype=np.int64))
    else:
        raise RuntimeError(
            f"dmr: {max_batches} batches did not finish the GPU's stuck triangles"
        )
    stats["claimants"] = stats["refinements"]
    left = np.array(sorted(failed | outside), dtype=np.int64)
    left = left[bad_mask(m.x, m.y, m.tri[left], m.seg[left], min_angle, max_area, m.apex)]
    stats["left"] = left
    stats["outside"] = int(np.isin(left, np.fromiter(outside, np.int64, len(outside))).sum())
    stats["stuck"] = len(left) - stats["outside"]
    stats["abort_ratio"] = 0.0
    return m.to_mesh(), stats
