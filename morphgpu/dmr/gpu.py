"""Delaunay refinement on the GPU: the host side of kernels/dmr.cu.

The mesh moves to the GPU once and stays there; each round is five launches with one
small host read (the number of bad triangles and the slot counters, read together) that
decides termination and growth. Growth is host-only: before a round the host knows the
number of claimants k, and a round adds at most 2k triangles and k vertices, so it grows
the arrays (by an over-allocation factor) before launching and no kernel ever runs out.
Slots of a winner's cavity are reused in place for its new triangles.

A round's work follows what is left to do, not the mesh size: only the first round tests
every slot; each round then pushes its next round's candidates (its bad triangles and the
slots its winners wrote, once each) on a list that the next round's find_bad reads. The
first time a list holds no bad triangle, one scan of every slot confirms it (the stats
count what it found in ``missed_by_candidates``; the tests expect 0).

A bad triangle gives way to a bad one within ``defer_depth`` edge steps that outranks it
(the shorter shortest edge first, as Triangle orders its queues; then a per-round hash),
so fewer cavities are built only to lose the claim, and fewer, better-spread points are
inserted (the same rule as ``cpu.gives_way``). On H200 at 10M triangles in, depth 2
(then with the worst smallest angle first) cut the loop from 0.39 s (no deferral) to
0.19 s and the output from 33.5M to 29.2M triangles (Triangle: 27.4M). Issue 19 asks
for at most 1.05x Triangle's output; the CPU twin (same rules), 40k triangles in,
uniform / clustered / holes, output over Triangle's (rounds): worst angle first, depth 2
1.076 / 1.065 / 1.076 (58 / 61 / 63), as the GPU had at 1M; shortest edge first, depth
2: 1.034 / 1.020 / 1.061 (66 / 62 / 78); depth 3: 1.010 / 1.001 / 1.037 (92 / 62 / 89),
with a third of the aborted plans (abort ratio 0.16 against 0.39). A sequential
refinement in each order (one insertion at a time) gave 1.09 by angle and 1.03 by edge
(uniform, 6k triangles in): the order, not the parallel rounds, made most of the
difference. Depth 3 stays, though depth 2 runs the GPU loop faster (H100, 2M triangles
in, same process: uniform 0.049 against 0.054 s, 88 against 106 rounds; holes 0.042
against 0.048 s): its outputs are 2-4% larger and pass 1.05x Triangle's on PSLGs of
the sizes device="auto" starts sending to the GPU. CPU twin, shortest edge first,
output over Triangle's at depth 2 / depth 3 (triangles in):

    holes      28k 1.061/1.037  42k 1.052/1.024  70k 1.045/1.019  209k 1.033/1.010  696k 1.027/1.006
    uniform    60k 1.032/1.012  100k 1.035/1.011  300k 1.030/1.006  1M 1.025/1.003
    clustered  100k 1.021/1.002  300k 1.022/1.000  1M 1.021/1.001

(the GPU at 2M, from the same run's refinements: about 1.024 at depth 2 on uniform and
holes, 1.002/1.003 at depth 3; scripts/dmr_defer_depth_sizes.py makes the table). Running
out of ``max_rounds`` is a RuntimeError. The arrays are sized after the first round from
its number of bad triangles, so growth copies are rare.

Triangles the GPU gives up on (uncertain predicate sign, cavity or walk beyond the local
bounds) are marked stuck and retried (with the kernels built for larger cavities) while
that helps; what remains is finished on the host in sequence, with exact arithmetic
(``cpu.finish_cpu``), on a window of the mesh around it that alone crosses to the host
and back (finish.py). The mesh stays on the device and the caller builds the output there.

The tail: most rounds at the end of a refinement have few claimants (at 1M triangles in,
54 of 78 rounds have fewer than 10k) and cost what the five launches and the read cost
(150-250 µs each on the H200), not their work. Once a round's bad count is at most
``tail_threshold``, the following rounds run on the device in one persistent launch
(``refine_tail`` over the shared grid barrier, morphgpu.barrier), which hands back to the
host when no bad triangle is left (the host confirms, retries stuck triangles or ends,
as above), when a round has more bad triangles than the plan buffers hold (``tail_threshold``
at most), when a round might need more slots than the arrays have (the host grows them
and goes on), or after ``TAIL_MAX_ROUNDS`` rounds. Its statistics accumulate in the
counters and are read with them, once per launch; ``progress`` is called once per launch.
``tail_threshold=0`` is the host-driven loop alone (and ``profile`` implies it: per-kernel
events need one launch per kernel).

Compiles: every kernel build the path can use (:func:`kernel_requests`: both cavity bounds,
and their ``refine_tail`` where the tail is on) is loaded by :func:`build_variants` before
the first round, whatever the mesh, so no input ever compiles anything the previous one
did not. The first refinement in a process pays the loads (from CuPy's disk cache after
the first ever), reported as ``compile_seconds`` outside ``gpu_loop_seconds``. Issue 19:
on an H100 a clustered 1M-point mesh took 5.9 s after a warm-up on a uniform one (0.55 s
the second time): the large-cavity build used to be compiled on first need, inside the
refinement of whichever mesh first had a stuck triangle.

Measured on the H200 (benchmarks/dmr.py, same process, threshold 65,536): at 1M triangles
in, 57 tail rounds took 12.3 ms (216 µs each, with no launch and no host read), and the
loop 0.0283 s against 0.0238 s with every round from the host; at 10M 0.1851 s against
0.1836 s (thresholds 16k and 262k: the same within 2%). So the small rounds are not launch
overhead but latency: a claimant's walk, cavity and apply are one thread's chain of
dependent loads. The tail is therefore off by default (``TAIL_THRESHOLD = 0``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend, barrier, device_reduce, kernels
from .cpu import DEFER_DEPTH, MIN_SPLIT_FRACTION, off_centre_constant
from .finish import finish_stuck
from .mesh import Mesh

KERNEL_FILE = "dmr/kernels/dmr.cu"
BLOCK = 256
SMALL_CAVITY = 24
LARGE_CAVITY = 256
# The cavity bounds the kernels are built for, tried in this order (a triangle the small
# build gives up on is retried by the large one). The bound is a compile-time constant,
# not a launch argument, because it sizes the per-thread arrays of kernels/dmr.cu (the
# cavity and its boundary, 5 arrays of MAX_CAVITY + 2 words, in registers and local memory,
# so a 24-triangle build keeps its working set small and fast) and the plan stride
# (MAX_HOOD). A runtime bound would move those arrays to global scratch sized at launch,
# a change to the hot loop whose cost has not been measured; instead the set of builds is
# fixed and all are loaded at once (build_variants), so which one a mesh needs never
# decides what is compiled.
CAVITY_SIZES = (SMALL_CAVITY, LARGE_CAVITY)
LEVELS = len(CAVITY_SIZES)  # the small-cavity kernels, then the large-cavity ones
CONSECUTIVE_PLANS = True  # see refine_gpu
FIRST_ROUND_GROWTH = 4.3  # triangles reserved per bad triangle of the first round
GROWTH = 1.5
MAX_CLAIMANTS = 8_000_000  # per round; bounds the plan buffers (~250 bytes per claimant)
INT32_LIMIT = 2**31 - 1
# The tail (see the module doc): rounds of at most this many bad triangles run in one
# persistent launch; 0 turns it off.
TAIL_THRESHOLD = 0  # 65_536 ran correctly on the H200 but was not faster (module doc)
TAIL_MAX_ROUNDS = 4096  # per launch, so a long tail still reports progress
TAIL_BARRIER: barrier.BarrierMode = "cooperative"  # 2x the atomic-free one on Hopper
# counters (u64; the C_* words of kernels/dmr.cu)
C_BAD, C_TRIANGLES, C_VERTICES, C_REFINED, C_CANDIDATES, C_GAVE_WAY = 0, 1, 2, 3, 4, 6
C_TAIL_ROUNDS, C_TAIL_CLAIMS, C_TAIL_LAST = 7, 8, 9
N_COUNTERS = 10


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
        self.worklist = cp.zeros(triangle_capacity, dtype=cp.int32)  # this round's bad
        # (round + 1) << 32 | the badness key, for bad triangles (kernels/dmr.cu, outranks)
        self.bad_rank = cp.zeros(triangle_capacity, dtype=cp.uint64)
        # candidate lists, this round's and the next (swapped each round), and each slot's
        # round + 1 of its last push (no slot is pushed twice in a round)
        self.candidates = [cp.zeros(triangle_capacity, dtype=cp.int32) for _ in range(2)]
        self.queued = cp.zeros(triangle_capacity, dtype=cp.uint32)
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
        # A memset and a memcpy, no kernel: growth happens only on some meshes, and a
        # CuPy fill or slice copy would compile one kernel per dtype (uint8, uint32, u64)
        # the first time a mesh grows (module doc, "Compiles").
        if fill not in (0, -1):
            raise ValueError(f"dmr: a grown array is filled with 0 or -1, not {fill}")
        out = self.cp.empty(capacity, dtype=arr.dtype)
        out.data.memset_async(0 if fill == 0 else 0xFF, out.nbytes)  # 0xFF..: -1
        out.data.copy_from_device_async(arr.data, arr.nbytes)
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
            for name in ("stuck", "marks", "mark_round", "worklist", "bad_rank", "queued"):
                setattr(self, name, self._grown(getattr(self, name), cap))
            self.candidates = [self._grown(c, cap) for c in self.candidates]
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


def kernel_defines(max_cavity: int) -> dict[str, Any]:
    """The defines of one build of kernels/dmr.cu. Fixed types, whatever the mesh: 32-bit
    slot and vertex ids (``reserve`` refuses meshes past 2**31 / 3 slots) and 64-bit
    offsets and counts (``3 * t``, claimant indices times MAX_HOOD), so no input size picks
    another build."""
    if max_cavity not in CAVITY_SIZES:
        raise ValueError(f"dmr: no kernel build for cavities of {max_cavity} triangles")
    return {
        **kernels.index_defines(np.int32, np.int64),
        "DMR_BLOCK": BLOCK,
        "MAX_CAVITY": max_cavity,
    }


def kernel_requests(tail_barrier: barrier.BarrierMode | None = None,
                    ) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (file, kernel or "module", defines) the GPU path can ask to compile with the
    tail in ``tail_barrier`` mode (None: off). It depends on nothing else: not on the mesh,
    its size or the bounds (tests/test_dmr_compiles.py holds gpu.py to it, and
    tests/test_kernels_compile.py compiles each of them with nvcc)."""
    out: list[tuple[str, str, dict[str, Any]]] = []
    for size in CAVITY_SIZES:
        out.append((KERNEL_FILE, "module", kernel_defines(size)))
        if tail_barrier is not None:
            out.append((KERNEL_FILE, "refine_tail", kernel_defines(size)))
    return out


def build_variants(cp: Any, tail_barrier: barrier.BarrierMode | None) -> list[Variant]:
    """Every cavity bound's build, loaded now (before the first round): the only place
    the GPU path compiles kernels. ``kernels.load_module`` caches each build per process
    (and CuPy on disk), so a later refinement, whatever its mesh, loads nothing new."""
    return [Variant(cp, size, tail_barrier) for size in CAVITY_SIZES]


class Variant:
    """One compiled size of the kernels: MAX_CAVITY bounds the local-memory cavity.
    Built by :func:`build_variants` only (all sizes at once, never on a mesh's demand)."""

    def __init__(self, cp: Any, max_cavity: int,
                 tail_barrier: barrier.BarrierMode | None = None) -> None:
        self.cp = cp
        self.max_cavity = max_cavity
        self.max_hood = 2 * max_cavity + 2
        defines = kernel_defines(max_cavity)
        module = kernels.load_module(KERNEL_FILE, defines=defines)
        # refine_tail comes from its own compile of the file (the cooperative barrier's
        # defines); None: the tail is off
        self.tail: barrier.PersistentGrid | None = None
        if tail_barrier is not None:
            self.tail = barrier.persistent_kernel(
                KERNEL_FILE, "refine_tail", mode=tail_barrier, block=BLOCK, defines=defines,
            )
        self.k = {
            name: module.get_function(name)
            for name in (
                "find_bad", "plan_and_race", "prioritycheck", "check", "ring_check_and_apply",
                "list_stuck",
                # the constrained triangulation's insertion rounds (cdt_gpu.py)
                "cdt_locate", "cdt_claim", "cdt_plan", "cdt_race", "cdt_prioritycheck",
                "cdt_check", "cdt_ring_lock", "cdt_apply", "cdt_relocate_pick",
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
    progress: Callable[[dict], None] | None = None, defer_depth: int = DEFER_DEPTH,
    profile: list[dict] | None = None, consecutive_plans: bool = CONSECUTIVE_PLANS,
    tail_threshold: int | None = None, tail_barrier: barrier.BarrierMode | None = None,
) -> tuple[Mesh, dict]:
    """Refine on the GPU; raises RuntimeError when ``max_rounds`` rounds leave bad
    triangles. ``defer_depth``: how far (edge steps, 0 to 3) a bad triangle looks for a
    higher-ranked bad one to give way to (see kernels/dmr.cu, ``defers``). ``profile``: a
    list that receives one dict per round with each kernel's time (CUDA events) and counts.
    ``consecutive_plans``: each planning thread takes a range of consecutive claimants
    (the paper's local worklist) rather than every n-th one. ``tail_threshold``: rounds of
    at most this many bad triangles run in one persistent launch (module doc; default
    ``TAIL_THRESHOLD``, 0: every round from the host); ``tail_barrier``: its grid
    barrier's mode (default ``TAIL_BARRIER``).
    """
    if defer_depth not in (0, 1, 2, 3):
        raise ValueError(f"defer_depth: expected 0 to 3, got {defer_depth}")
    threshold = TAIL_THRESHOLD if tail_threshold is None else int(tail_threshold)
    if threshold < 0:
        raise ValueError(f"tail_threshold: expected 0 or more, got {tail_threshold}")
    if profile is not None:
        threshold = 0
    mode = TAIL_BARRIER if tail_barrier is None else tail_barrier
    cp = backend.cupy_module()
    with backend.gpu_memory_guard("dmr.refine on the GPU"):
        return _refine(cp, mesh, min_angle, max_area, max_rounds, progress, defer_depth,
                       profile, consecutive_plans, threshold, mode)


class _Timeline:
    """CUDA events around each launch of a round, read once the loop is over."""

    def __init__(self, cp: Any, sink: list[dict] | None) -> None:
        self.cp, self.sink = cp, sink
        self.rounds: list[tuple[dict, list[tuple[str, Any]]]] = []

    def start(self, info: dict) -> None:
        if self.sink is not None:
            self.rounds.append((info, [("start", self._event())]))

    def note(self, **info: Any) -> None:
        if self.sink is not None:
            self.rounds[-1][0].update(info)

    def mark(self, name: str) -> None:
        if self.sink is not None:
            self.rounds[-1][1].append((name, self._event()))

    def _event(self) -> Any:
        ev = self.cp.cuda.Event()
        ev.record()
        return ev

    def flush(self) -> None:
        if self.sink is None:
            return
        self.cp.cuda.get_current_stream().synchronize()
        for info, events in self.rounds:
            row = dict(info)
            for (_, a), (name, b) in zip(events, events[1:]):
                row[name + "_ms"] = self.cp.cuda.get_elapsed_time(a, b)
            self.sink.append(row)


def _refine(cp, mesh, min_angle, max_area, max_rounds, progress, defer_depth, profile,
            consecutive_plans, tail_threshold, tail_barrier):
    # Most cavities are small: the everyday kernels keep 24 triangles in local memory;
    # what they give up on is retried by a build with room for 256. Both are loaded here,
    # before anything is known of the mesh's cavities (module doc, "Compiles"): building
    # the large one on first need made the first mesh with a stuck triangle pay a compile.
    tail_mode = tail_barrier if tail_threshold > 0 else None
    t_compile = time.perf_counter()
    variants = build_variants(cp, tail_mode)
    compile_seconds = time.perf_counter() - t_compile
    sms = backend.gpu_properties()["multiprocessors"]
    t_start = time.perf_counter()
    cap_t = max(1024, 2 * mesh.n_triangles)
    backend.require_gpu_bytes(cap_t * 88 + 2 * mesh.n_vertices * 24, "dmr.refine")
    dm = DeviceMesh(cp, mesh, cap_t, max(1024, 2 * mesh.n_vertices))
    seg_markers = cp.asarray(mesh.segment_markers, dtype=cp.int32)
    counters = cp.zeros(N_COUNTERS, dtype=cp.uint64)
    counters[C_TRIANGLES], counters[C_VERTICES] = dm.nt, dm.nv
    min_cos = math.cos(math.radians(min_angle))
    area_limit = float(max_area) if max_area is not None else 0.0
    # device_reduce, not CuPy's min/max: those compile per array size (issue 19)
    (x_lo, x_hi), (y_lo, y_hi) = device_reduce.min_max(mesh.x), device_reduce.min_max(mesh.y)
    span = max(x_hi - x_lo, y_hi - y_lo, 1e-300)
    min_split = MIN_SPLIT_FRACTION * span
    off_k = off_centre_constant(min_angle)
    n_input = np.int32(mesh.extra.get("n_input", mesh.n_vertices))
    stats: dict[str, Any] = {
        "rounds": 0, "refinements": 0, "claimants": 0, "large_rounds": 0, "stuck_retries": 0,
        "full_scans": 0, "missed_by_candidates": 0, "compile_seconds": compile_seconds,
        "tail_launches": 0, "tail_rounds": 0,
        # why each tail launch handed back: no bad triangle left, too many for the plan
        # buffers, slots that might run out, or the round cap
        "tail_exits": {"done": 0, "plans": 0, "slots": 0, "rounds": 0},
    }
    timeline = _Timeline(cp, profile)
    tail_events: list[tuple[Any, Any]] = []
    cp.cuda.get_current_stream().synchronize()
    t_loop = time.perf_counter()
    level = 0
    stuck_at_retry = 0  # stuck triangles when they were last cleared for a retry
    full_scan = True  # the first round tests every slot; later ones the candidate lists
    confirming = False  # this full scan checks that the candidate lists missed nothing
    confirmed = False  # such a check has run
    finished = False
    last_bad = -1  # bad triangles of the last round the host ran (-1: none yet)
    tail_seen = (0, 0)  # the tail's round and claimant counters as last read
    rnd = 0
    while rnd < max_rounds:
        v = variants[level]
        counters[C_BAD] = 0
        tail_cap = 0
        if v.tail is not None and not full_scan and last_bad >= 0:
            # the plan buffers the tail may fill: the threshold, or less when the arrays
            # cannot hold that many bad triangles anyway
            tail_cap = min(tail_threshold, MAX_CLAIMANTS, dm.triangle_capacity)
        if tail_cap and last_bad <= tail_cap:
            plans = v.plans_for(tail_cap)
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            v.tail.launch(
                dm.x, dm.y, dm.tri, dm.nbr, dm.seg, dm.vmark, dm.apex, n_input, dm.stuck,
                seg_markers, dm.marks, dm.mark_round, dm.bad_rank, dm.worklist,
                dm.candidates[0], dm.candidates[1], dm.queued, plans.px, plans.py,
                plans.hood, plans.n_cavity, plans.n_hood, plans.through, plans.split_a,
                plans.split_b, plans.split_seg, counters, np.float64(min_cos),
                np.float64(area_limit), np.float64(min_split), np.float64(off_k),
                np.int32(defer_depth), np.int32(consecutive_plans), np.int64(MAX_CLAIMANTS),
                np.uint64(rnd), np.int64(min(TAIL_MAX_ROUNDS, max_rounds - 1 - rnd)),
                np.int64(tail_cap), np.int64(dm.triangle_capacity), np.int64(len(dm.x)),
            )
            stop.record()
            tail_events.append((start, stop))
            read = [int(c) for c in counters.get()]
            v.tail.check()  # a barrier that timed out invalidates the mesh: raise
            ran = read[C_TAIL_ROUNDS] - tail_seen[0]
            claims = read[C_TAIL_CLAIMS] - tail_seen[1]
            tail_seen = (read[C_TAIL_ROUNDS], read[C_TAIL_CLAIMS])
            stats["tail_launches"] += 1
            stats["tail_rounds"] += ran
            stats["rounds"] += ran
            stats["large_rounds"] += level * ran
            stats["claimants"] += claims
            rnd += ran  # the tail stopped after this round's find_bad
            if progress is not None and ran:
                progress({"round": rnd - 1, "bad": read[C_TAIL_LAST],
                          "refined": read[C_REFINED], "triangles": read[C_TRIANGLES],
                          "tail_rounds": ran})
            n_bad, nt, nv, refined = read[:4]
            exit_reason = (
                "done" if n_bad == 0 else "plans" if n_bad > tail_cap
                else "rounds" if ran >= min(TAIL_MAX_ROUNDS, max_rounds - 1 - (rnd - ran))
                else "slots"
            )
            stats["tail_exits"][exit_reason] += 1
        else:
            stamp = np.uint32(rnd + 1)
            this, other = rnd % 2, (rnd + 1) % 2
            timeline.start({"round": rnd, "full_scan": full_scan})
            # a full scan needs dm.nt up to date: it follows a read taken after the last apply
            v.k["find_bad"](
                (sms * 8 if not full_scan else min(-(-dm.nt // BLOCK), sms * 8),), (BLOCK,),
                (dm.x, dm.y, dm.tri, dm.nbr, dm.seg, dm.apex, dm.stuck,
                 np.uint64(0) if full_scan else dm.candidates[this],  # 0: a null pointer
                 counters[C_CANDIDATES + this: C_CANDIDATES + this + 1],
                 np.int64(dm.nt), np.float64(min_cos), np.float64(area_limit), stamp,
                 dm.bad_rank, dm.worklist, np.int64(MAX_CLAIMANTS), counters[C_BAD:C_BAD + 1],
                 counters[C_CANDIDATES + other: C_CANDIDATES + other + 1]),
            )
            timeline.mark("find_bad")
            stats["full_scans"] += full_scan
            n_bad, nt, nv, refined = (int(c) for c in counters[:4].get())
        dm.nt, dm.nv = nt, nv
        stamp = np.uint32(rnd + 1)
        this, other = rnd % 2, (rnd + 1) % 2
        if confirming:
            # the candidate rule missed these if any (a bug: the tests expect none)
            stats["missed_by_candidates"] += n_bad
        confirming = False
        if n_bad == 0:
            rnd += 1
            if not full_scan and not confirmed:
                # the candidates are clean: confirm it once over every slot (later lists,
                # after stuck retries, are built by the same rule)
                full_scan = confirming = confirmed = True
                continue
            # Retry what the small kernels gave up on with the large ones; then retry the
            # large ones' leftovers while that helps: a triangle given up on early (a
            # cavity too big in the coarse mesh) often fits once the mesh around it is
            # refined, and every one finished here is one less for the host. The count
            # must fall from one retry to the next, so this ends.
            n_stuck = device_reduce.count_nonzero(dm.stuck[:nt])  # issue 19
            if n_stuck and (level + 1 < LEVELS or n_stuck < stuck_at_retry):
                level = min(level + 1, LEVELS - 1)
                stuck_at_retry = n_stuck
                stats["stuck_retries"] += 1
                dm.stuck.data.memset_async(0, dm.stuck.nbytes)  # no fill kernel: see _grown
                full_scan = True  # the retried slots are on no candidate list
                continue
            finished = True
            break
        full_scan = False
        n_claim = min(n_bad, MAX_CLAIMANTS)
        last_bad = n_bad
        if stats["rounds"] == 0:
            # Room for the whole refinement now rather than growth copies (and large
            # allocations) later: random meshes end with about 4.1 new triangles and 2.05
            # new vertices per bad triangle of the first round (4.05-4.07 at 1M and 10M).
            dm.reserve(int(nt + FIRST_ROUND_GROWTH * n_bad),
                       int(nv + FIRST_ROUND_GROWTH / 2 * n_bad))
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
             plans.split_b, plans.split_seg, dm.bad_rank, stamp, np.int32(defer_depth),
             np.int32(consecutive_plans)),
        )
        timeline.mark("plan_and_race")
        fgrid = -(-n_claim // BLOCK)
        v.k["prioritycheck"](
            (fgrid,), (BLOCK,), (dm.marks, plans.hood, plans.n_cavity, plans.n_hood, *common)
        )
        timeline.mark("prioritycheck")
        v.k["check"]((fgrid,), (BLOCK,), (dm.marks, plans.hood, plans.n_cavity, *common))
        timeline.mark("check")
        v.k["ring_check_and_apply"](
            (-(-n_bad // BLOCK),), (BLOCK,),
            (dm.x, dm.y, dm.tri, dm.nbr, dm.seg, dm.vmark, dm.apex, n_input, dm.stuck,
             seg_markers, dm.marks, dm.mark_round, plans.hood, plans.n_cavity, plans.n_hood,
             plans.px, plans.py, plans.through, plans.split_a, plans.split_b, plans.split_seg,
             *common, counters[C_TRIANGLES:C_TRIANGLES + 1],
             counters[C_VERTICES:C_VERTICES + 1], counters[C_REFINED:C_REFINED + 1],
             dm.worklist, np.int64(n_bad), stamp, dm.queued, dm.candidates[other],
             counters[C_CANDIDATES + other: C_CANDIDATES + other + 1],
             counters[C_GAVE_WAY:C_GAVE_WAY + 1]),
        )
        timeline.mark("apply")
        timeline.note(bad=n_bad, claimants=n_claim, refined_before=refined, triangles=nt)
        stats["rounds"] += 1
        stats["large_rounds"] += level
        stats["claimants"] += n_claim
        if progress is not None:
            progress({"round": rnd, "bad": n_bad, "refined": refined, "triangles": nt})
        rnd += 1
    cp.cuda.get_current_stream().synchronize()
    t_loop_end = time.perf_counter()
    if not finished:
        raise RuntimeError(
            f"dmr: {max_rounds} rounds were not enough (bad triangles remain); the mesh is "
            "not refined"
        )
    timeline.flush()
    final = counters.get()
    stats["refinements"], stats["gave_way"] = int(final[C_REFINED]), int(final[C_GAVE_WAY])
    # the persistent launches' share of the loop (CUDA events; the GPU is idle by now)
    stats["tail_seconds"] = sum(cp.cuda.get_elapsed_time(a, b) for a, b in tail_events) / 1e3
    stats["claimants"] -= stats["gave_way"]  # only those that planned a cavity claimed it
    stats["gpu_loop_seconds"] = t_loop_end - t_loop  # the builds were loaded before
    stats["abort_ratio"] = 1.0 - stats["refinements"] / max(1, stats["claimants"])
    stuck = _stuck_slots(cp, dm, variants[0], sms)
    stats["gpu_stuck"] = len(stuck)
    stats["gpu_seconds"] = time.perf_counter() - t_start
    stats["stuck"] = 0
    if len(stuck):
        # Finish with exact arithmetic on the host (uncertain signs, oversized cavities),
        # a window of the mesh around them at a time (finish.py): the mesh stays here.
        t_finish = time.perf_counter()
        fin = finish_stuck(dm, stuck, mesh.segment_markers, min_angle, max_area,
                           n_input=int(n_input), min_split=min_split)
        stats["finish_seconds"] = time.perf_counter() - t_finish
        stats["cpu_finish_refinements"] = fin["refinements"]
        stats["finish_windows"] = fin["windows"]
        stats["finish_window_triangles"] = fin["window_triangles"]
        stats["stuck"] = fin["stuck"]
    # The output dict is built on the device and each of its arrays crosses once (or not
    # at all, for CuPy input).
    return dm.on_device(mesh), stats


def _stuck_slots(cp: Any, dm: DeviceMesh, v: Variant, sms: int) -> np.ndarray:
    """The slots in use whose stuck flag is set, sorted (kernels/dmr.cu, list_stuck): one
    small read when there are none, where the flags themselves are a byte per slot."""
    count = cp.zeros(1, dtype=cp.uint64)  # a memset, no kernel
    v.k["list_stuck"](
        (max(1, min(-(-dm.nt // BLOCK), sms * 8)),), (BLOCK,),
        (dm.stuck, np.int64(dm.nt), dm.worklist, np.int64(len(dm.worklist)), count),
    )
    n = int(count.get()[0])
    return np.sort(dm.worklist[:n].get()).astype(np.int64) if n else np.zeros(0, np.int64)
