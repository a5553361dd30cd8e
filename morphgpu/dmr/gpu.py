"""Delaunay refinement on the GPU: the host side of kernels/dmr.cu.

The mesh moves to the GPU once and stays there; each round is five launches with one
small host read (the number of bad triangles and the slot counters, read together) that
decides termination and growth. Growth is host-only: before a round the host knows the
number of claimants k, and a round adds at most 2k triangles and k vertices, so it grows
the arrays (by an over-allocation factor) before launching and no kernel ever runs out.
Slots of a winner's cavity are reused in place for its new triangles.

Triangles the GPU gives up on (uncertain predicate sign, cavity or walk beyond the local
bounds) are marked stuck and retried (with room for larger cavities) while that helps; what
remains comes back to the host with the mesh and is finished there in sequence, with exact
arithmetic (``cpu.finish_cpu``). Without stuck triangles the mesh stays on the device and
the caller builds the output there.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend, kernels
from .cpu import MIN_SPLIT_FRACTION, finish_cpu, off_centre_constant
from .mesh import Mesh

KERNEL_FILE = "dmr/kernels/dmr.cu"
BLOCK = 256
SMALL_CAVITY = 24
LARGE_CAVITY = 256
GROWTH = 1.5
MAX_CLAIMANTS = 8_000_000  # per round; bounds the plan buffers (~250 bytes per claimant)
INT32_LIMIT = 2**31 - 1


class DeviceMesh:
    """The mesh arrays on the GPU with spare capacity."""

    def __init__(self, cp: Any, mesh: Mesh, triangle_capacity: int, vertex_capacity: int):
        self.cp = cp
        self.nt, self.nv = mesh.n_triangles, mesh.n_vertices
        self.tri = self._padded(mesh.tri.reshape(-1), 3 * triangle_capacity, np.int32)
        self.nbr = self._padded(mesh.nbr.reshape(-1), 3 * triangle_capacity, np.int32)
        self.seg = self._padded(mesh.seg.reshape(-1), 3 * triangle_capacity, np.int32)
        self.stuck = cp.zeros(triangle_capacity, dtype=cp.uint8)
        self.marks = cp.zeros(triangle_capacity, dtype=cp.uint64)
        self.mark_round = cp.zeros(triangle_capacity, dtype=cp.uint32)  # round + 1 of a mark
        self.worklist = cp.zeros(triangle_capacity, dtype=cp.int32)
        self.x = self._padded(mesh.x, vertex_capacity, np.float64)
        self.y = self._padded(mesh.y, vertex_capacity, np.float64)
        self.vmark = self._padded(mesh.vertex_markers, vertex_capacity, np.int32)
        apex = mesh.extra.get("vertex_apex")
        apex = np.full(mesh.n_vertices, -1, np.int32) if apex is None else apex
        self.apex = self._padded(apex, vertex_capacity, np.int32, fill=-1)

    def _padded(self, host: np.ndarray, capacity: int, dtype: Any, fill: int = 0) -> Any:
        out = self.cp.full(capacity, fill, dtype=dtype)
        out[: len(host)] = self.cp.asarray(host, dtype=dtype)
        return out

    @property
    def triangle_capacity(self) -> int:
        return len(self.stuck)

    def _grown(self, arr: Any, capacity: int, fill: int = 0) -> Any:
        out = self.cp.full(capacity, fill, dtype=arr.dtype)
        out[: len(arr)] = arr
        return out

    def reserve(self, triangles: int, vertices: int) -> None:
        if triangles > self.triangle_capacity:
            cap = max(triangles, int(self.triangle_capacity * GROWTH))
            if 3 * cap > INT32_LIMIT:
                raise MemoryError(
                    f"dmr: {cap} triangle slots exceed the 32-bit index range of this build"
                )
            for name in ("tri", "nbr", "seg"):
                setattr(self, name, self._grown(getattr(self, name), 3 * cap))
            for name in ("stuck", "marks", "mark_round", "worklist"):
                setattr(self, name, self._grown(getattr(self, name), cap))
        if vertices > len(self.x):
            cap = max(vertices, int(len(self.x) * GROWTH))
            for name in ("x", "y", "vmark"):
                setattr(self, name, self._grown(getattr(self, name), cap))
            self.apex = self._grown(self.apex, cap, fill=-1)

    def on_device(self, template: Mesh) -> Mesh:
        """The refined mesh as compact device arrays (copies, so the spare capacity can be
        freed; a device copy costs far less than a transfer)."""
        nt, nv = self.nt, self.nv
        return Mesh(
            self.x[:nv].copy(), self.y[:nv].copy(), self.tri[: 3 * nt].reshape(nt, 3).copy(),
            self.nbr[: 3 * nt].reshape(nt, 3).copy(), self.seg[: 3 * nt].reshape(nt, 3).copy(),
            self.vmark[:nv].copy(), template.segment_markers, template.holes,
            {**template.extra, "vertex_apex": self.apex[:nv].copy()},
        )

    def to_host(self, template: Mesh) -> Mesh:
        nt, nv = self.nt, self.nv
        return Mesh(
            self.x[:nv].get(), self.y[:nv].get(), self.tri[: 3 * nt].get().reshape(nt, 3),
            self.nbr[: 3 * nt].get().reshape(nt, 3), self.seg[: 3 * nt].get().reshape(nt, 3),
            self.vmark[:nv].get().astype(np.int64), template.segment_markers, template.holes,
            {**template.extra, "vertex_apex": self.apex[:nv].get()},
        )


class Plans:
    """Per-claimant plan buffers for one kernel variant, grown with the claimants."""

    def __init__(self, cp: Any, capacity: int, max_hood: int) -> None:
        self.capacity = capacity
        self.px = cp.empty(capacity, dtype=cp.float64)
        self.py = cp.empty(capacity, dtype=cp.float64)
        self.hood = cp.empty(capacity * max_hood, dtype=cp.int32)
        self.n_cavity = cp.empty(capacity, dtype=cp.int32)
        self.n_hood = cp.empty(capacity, dtype=cp.int32)
        self.through = cp.empty(capacity, dtype=cp.int64)
        self.split_a = cp.empty(capacity, dtype=cp.int32)
        self.split_b = cp.empty(capacity, dtype=cp.int32)
        self.split_seg = cp.empty(capacity, dtype=cp.int32)


class Variant:
    """One compiled size of the kernels: MAX_CAVITY bounds the local-memory cavity."""

    def __init__(self, cp: Any, max_cavity: int) -> None:
        self.cp = cp
        self.max_cavity = max_cavity
        self.max_hood = 2 * max_cavity + 2
        defines = {
            **kernels.index_defines(np.int32, np.int64),
            "DMR_BLOCK": BLOCK,
            "MAX_CAVITY": max_cavity,
        }
        module = kernels.load_module(KERNEL_FILE, defines=defines)
        self.k = {
            name: module.get_function(name)
            for name in (
                "find_bad", "plan_and_race", "prioritycheck", "check", "ring_check_and_apply"
            )
        }
        self.plans: Plans | None = None

    def plans_for(self, n_claim: int) -> Plans:
        if self.plans is None or n_claim > self.plans.capacity:
            cap = max(1024, n_claim, int((self.plans.capacity if self.plans else 0) * GROWTH))
            self.plans = None  # free the old buffers first
            self.plans = Plans(self.cp, cap, self.max_hood)
        return self.plans


def refine_gpu(
    mesh: Mesh, min_angle: float, max_area: float | None, *, max_rounds: int = 100_000,
    progress: Callable[[dict], None] | None = None,
) -> tuple[Mesh, dict]:
    cp = backend.cupy_module()
    with backend.gpu_memory_guard("dmr.refine on the GPU"):
        return _refine(cp, mesh, min_angle, max_area, max_rounds, progress)


def _refine(cp, mesh, min_angle, max_area, max_rounds, progress) -> tuple[Mesh, dict]:
    # Most cavities are small: the everyday kernels keep 24 triangles in local memory;
    # what they give up on is retried by a variant with room for 256.
    variants = [Variant(cp, SMALL_CAVITY), Variant(cp, LARGE_CAVITY)]
    sms = backend.gpu_properties()["multiprocessors"]
    t_start = time.perf_counter()
    cap_t = max(1024, 2 * mesh.n_triangles)
    backend.require_gpu_bytes(cap_t * 72 + 2 * mesh.n_vertices * 24, "dmr.refine")
    dm = DeviceMesh(cp, mesh, cap_t, max(1024, 2 * mesh.n_vertices))
    seg_markers = cp.asarray(mesh.segment_markers, dtype=cp.int32)
    # counters: [bad, triangles, vertices, refined]
    counters = cp.zeros(4, dtype=cp.uint64)
    counters[1], counters[2] = dm.nt, dm.nv
    min_cos = math.cos(math.radians(min_angle))
    area_limit = float(max_area) if max_area is not None else 0.0
    span = max(float(mesh.x.max() - mesh.x.min()), float(mesh.y.max() - mesh.y.min()), 1e-300)
    min_split = MIN_SPLIT_FRACTION * span
    off_k = off_centre_constant(min_angle)
    n_input = np.int32(mesh.extra.get("n_input", mesh.n_vertices))
    stats: dict[str, Any] = {
        "rounds": 0, "refinements": 0, "claimants": 0, "large_rounds": 0, "stuck_retries": 0
    }
    cp.cuda.get_current_stream().synchronize()
    t_loop = time.perf_counter()
    level = 0
    stuck_at_retry = 0  # stuck triangles when they were last cleared for a retry
    for rnd in range(max_rounds):
        v = variants[level]
        counters[0] = 0
        # dm.nt is the count read at the previous round's start; the triangles that
        # round added are scanned now if bad-free, else next time (see below)
        scanned = dm.nt
        grid = min(-(-scanned // BLOCK), sms * 8)
        v.k["find_bad"](
            (grid,), (BLOCK,),
            (dm.x, dm.y, dm.tri, dm.nbr, dm.seg, dm.apex, dm.stuck, np.int64(scanned),
             np.float64(min_cos), np.float64(area_limit), dm.worklist, counters[0:1]),
        )
        n_bad, nt, nv, refined = (int(c) for c in counters.get())
        dm.nt, dm.nv = nt, nv
        if n_bad == 0 and nt > scanned:
            continue  # the last round's new triangles were not scanned yet
        if n_bad == 0:
            # Retry what the small kernels gave up on with the large ones; then retry the
            # large ones' leftovers while that helps: a triangle given up on early (a
            # cavity too big in the coarse mesh) often fits once the mesh around it is
            # refined, and every one finished here is one less for the host. The count
            # must fall from one retry to the next, so this ends.
            n_stuck = int(cp.count_nonzero(dm.stuck[:nt]))
            if n_stuck and (level + 1 < len(variants) or n_stuck < stuck_at_retry):
                level = min(level + 1, len(variants) - 1)
                stuck_at_retry = n_stuck
                stats["stuck_retries"] += 1
                dm.stuck.fill(0)
                continue
            break
        n_claim = min(n_bad, MAX_CLAIMANTS)
        dm.reserve(nt + 2 * n_claim, nv + n_claim)
        plans = v.plans_for(n_claim)
        threads = min(n_claim, sms * 2048)
        pgrid = -(-threads // 128)
        common = (np.int64(n_claim), np.uint64(rnd))
        v.k["plan_and_race"](
            (pgrid,), (128,),
            (dm.x, dm.y, dm.tri, dm.nbr, dm.seg, dm.stuck, dm.worklist, np.int64(n_claim),
             np.uint64(rnd), np.float64(min_split), np.float64(off_k), n_input, dm.marks,
             dm.mark_round,
             plans.px, plans.py,
             plans.hood, plans.n_cavity, plans.n_hood, plans.through, plans.split_a,
             plans.split_b, plans.split_seg),
        )
        fgrid = -(-n_claim // BLOCK)
        v.k["prioritycheck"](
            (fgrid,), (BLOCK,), (dm.marks, plans.hood, plans.n_cavity, plans.n_hood, *common)
        )
        v.k["check"]((fgrid,), (BLOCK,), (dm.marks, plans.hood, plans.n_cavity, *common))
        v.k["ring_check_and_apply"](
            (fgrid,), (BLOCK,),
            (dm.x, dm.y, dm.tri, dm.nbr, dm.seg, dm.vmark, dm.apex, n_input, dm.stuck,
             seg_markers, dm.marks, dm.mark_round, plans.hood, plans.n_cavity, plans.n_hood,
             plans.px, plans.py, plans.through, plans.split_a, plans.split_b, plans.split_seg,
             *common, counters[1:2], counters[2:3], counters[3:4]),
        )
        stats["rounds"] += 1
        stats["large_rounds"] += level
        stats["claimants"] += n_claim
        if progress is not None:
            progress({"round": rnd, "bad": n_bad, "refined": refined, "triangles": nt})
    cp.cuda.get_current_stream().synchronize()
    t_loop_end = time.perf_counter()
    stats["refinements"] = int(counters[3].get())
    stats["gpu_loop_seconds"] = t_loop_end - t_loop
    stats["abort_ratio"] = 1.0 - stats["refinements"] / max(1, stats["claimants"])
    stuck = cp.nonzero(dm.stuck[: dm.nt])[0].get()
    stats["gpu_stuck"] = len(stuck)
    # Without stuck triangles the mesh stays on the device: the output dict is built there
    # and each of its arrays crosses once (or not at all, for CuPy input).
    out = dm.to_host(mesh) if len(stuck) else dm.on_device(mesh)
    del dm  # the padded buffers go back to the pool before the output is built
    stats["gpu_seconds"] = time.perf_counter() - t_start
    if len(stuck):
        # Finish with exact arithmetic on the host (uncertain signs, oversized cavities).
        t_finish = time.perf_counter()
        out, cpu_stats = finish_cpu(out, min_angle, max_area, stuck)
        stats["finish_seconds"] = time.perf_counter() - t_finish
        stats["cpu_finish_refinements"] = cpu_stats["refinements"]
        stats["stuck"] = cpu_stats["stuck"]
    else:
        stats["stuck"] = 0
    return out, stats
