"""BFS speed: Graph500 TEPS and microseconds per level, with SciPy's time in the same run.

    python benchmarks/bfs.py [--quick] [--big] [--other-shapes] [--graphs 'kron,grid2d']
        [--roots N] [--variants tiled] [--no-extras] [--before DIR] [--define NAME=VALUE]
        [--relabel-rows] [--tiled-rows] [--profile-levels N] [--json PATH]

The one way to measure BFS speed. Conventions (Graph500's, so headline numbers compare with
published ones):

- Time per search: CUDA events around a whole ``morphgpu.bfs.bfs(g, root, variant=...,
  device="gpu", predecessors=True)`` call on a GPU CSRGraph whose first call is done:
  argument checks, the search, the edge count and the level count, everything the caller
  waits for. That first call, per variant and graph, is timed alone (wall clock, then
  synchronised) as ``prepare_s``: the workspace and derived copies (reverse graph,
  relabelled copy) and kernel loads (compiles when the disk cache is cold); a later
  variant's first call reuses what an earlier one built.
- TEPS: per search, Graph500's edge count over that time; ``gteps`` is the harmonic mean
  over the roots: 64 random vertices of degree > 0 (8 with --quick; --roots N), fewer
  only where the per-variant time cap (--slice) ran out (``roots`` says how many; never
  fewer than SciPy's).
  Graph500 counts the undirected input edges within the searched component, self-loops and
  duplicates as generated: on a symmetric CSR half the entries out of reached vertices (as
  stored), on Kronecker graphs the generator's edge tuples with the duplicates the CSR
  merged (road_like.kronecker_input_degrees). Directed CSR entries per second appear only
  as ``directed_entry_gteps``.
- Roots are interleaved: each root runs every variant in turn, starting at variant
  i mod (variants) at root i, so drift hits all alike and no variant always follows the
  same one.
- ``gpu_busy_ms``: the same call on a few roots with a 2 ms spin kernel queued first, so the
  host issues the call while the GPU is busy: its work before the call's first wait on the
  GPU is hidden. ``host_hidden_us`` = events with an idle GPU minus that, on those roots.
  In those calls, ``host_to_launch_us``: the host's median time from the call to its first
  packed launch (the persistent kernels' prepared calls, direction.cu and persistent.cu;
  null for calls without one; a call that waits on the GPU before launching shows the
  spin's 2 ms here), ``host_call_us``: from the call to its return.
- SciPy: ``breadth_first_order`` (float64 data, directed=True, with predecessors) on the
  first roots (3, or 2 above 10M vertices or with --quick) in this process; ``vs_scipy`` =
  SciPy's mean over ours on those same roots.
- Checks, per graph: every variant's distances equal SciPy's on the first root, and auto's
  result there passes Graph500's checks (parents too up to 20M CSR entries: the parent-edge
  check sorts every edge on the host); every variant's distances equal the others' on
  every root (a failed check stops the run: every row printed is exact).
- ``auto`` on deep graphs chooses persistent or tiled (and tiled's horizon),
  by timing them (bfs/gpu/deep_choice.py),
  once its searches of a graph have cost the expected measuring cost; here the choice is
  made at once after the second call (``deep_choice.choose_now``), outside the timed calls,
  which run the choice (``ran``). The row carries ``auto_choice``, the measured
  ``auto_choice_persistent_ms`` / ``auto_choice_tiled_ms`` (the fastest tiled arm, at
  ``auto_choice_horizon``; every arm's in ``auto_choice_ms_by_arm``, as
  "tiled:24=2.101/tiled:48=2.450/..."), ``auto_choice_s`` (the
  measuring's wall time), ``auto_expected_s`` (the cost auto's searches must reach first)
  and ``auto_due_after_searches`` (that cost in persistent searches of the row's mean).
- ``x_persistent``: the ``persistent`` row's mean time over the row's (bfs()'s persistent,
  which may search the locality copy; ``persistent runner``, the graph as given, comes with
  any bfs_ab option, e.g. --tiled-rows).
- Rows that ran ``tiled`` (``--variants tiled``, ``--tiled-rows``) carry the kernel's
  counters, means over the roots (bfs_ab.tiled_fields): visits followed by another of
  their tile, visits of the copy's tiles, local levels per visit, us per visit in the load
  and the write-back, per local level, the blocks' waits for a tile (summed) and block 0's
  whole loop. (These were scripts/bfs_deep_probe.py's, folded in.)
- The run ends with a summary, one line per (graph, row): ms, us per level, x_persistent
  and the tiled counters.
- ``--other-shapes`` runs, instead, graphs the targets were not measured on: road-like ones
  (other deletion rates, a 12000 x 800 strip, Delaunay 2M, ids shuffled) and wide ones of
  other sizes and degrees (uniform 2^21 deg 32 and 2^23 deg 8, Kronecker 20 ef32 and 23 ef16).
- ``--graphs`` takes parts of labels, and the short names of the deep probe: grid-4000,
  delaunay-1M, delaunay-4M, road-COL (any road NAME), grid-del-SIDE.

Rows: one per (graph, variant) as above (variants: ``auto`` and the best per family:
``persistent`` on deep graphs, ``beamer`` and ``direction-optimizing`` on wide ones; more
with --variants); ``sparse-matrix input`` per graph: second-and-later calls on a
cupyx.scipy.sparse csr_matrix of the graph against the CSRGraph (target ratio <= 1.1);
``first call``: a new process (import, build, first bfs(), later calls), run twice, the
second reported (target: first-call overhead <= 50 ms with the disk kernel cache warm).

A/B and profile rows (benchmarks/bfs_ab.py, the former scripts/bfs_wide_probe.py and
bfs_deep_probe.py): ``--before DIR`` an earlier direction.cu / persistent.cu kept outside
the repository, timed beside the tree's kernel launched the same way (``x_before`` on every
row); ``--define NAME=VALUE`` the tree's kernel with one define changed; ``--relabel-rows``
its runner on the graph orders it did not choose; ``--profile-levels N`` per-level clocks of the
MG_BFS_PROFILE build on N roots. These rows call a kernel's runner, not bfs(): compare
them with the family's runner row (``beamer runner``, ``persistent runner``), which comes
with any of them. ``--no-extras`` leaves out the busy-GPU calls and the sparse-matrix input
rows (a short A/B of variants, e.g. the tiled measurement:
``--graphs grid-4000,delaunay-1M,road-COL,delaunay-4M --variants tiled --roots 4
--no-extras``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bfs_ab
import harness
import numpy as np
import road_like
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import backend, generators, reorder
from morphgpu.bfs import bfs, graph500_check, variants
from morphgpu.bfs.order import distances_from_fifo
from morphgpu.csr import CSRGraph

REPO = Path(__file__).resolve().parent.parent

# Variants timed per family: "deep" graphs (roads, grids, Delaunay: many levels, narrow
# frontiers) and "wide" ones (Kronecker, uniform random: few levels, wide frontiers).
FAMILY_VARIANTS = {"deep": ("auto", "persistent", "async", "overlay"),
                   "wide": ("auto", "beamer", "direction-optimizing")}
FULL_CHECK_MAX_EDGES = 20_000_000  # parents checked by Graph500's rules up to this size
SPIN_MS = 2.0  # longer than any call's host work before its first wait
FIRST_CALL_TARGET_MS = 50.0
MATRIX_TARGET_RATIO = 1.1
# --graphs short names (scripts/bfs_deep_probe.py's) -> a part of the cases' labels.
GRAPH_ALIASES = {"grid-4000": "grid2d 4000x4000", "delaunay-1M": "delaunay 1M",
                 "delaunay-4M": "delaunay 4M", "delaunay-9M": "delaunay 9M"}


@dataclass(frozen=True)
class Case:
    label: str
    family: str  # a key of FAMILY_VARIANTS
    build: Callable[[], CSRGraph]
    # Graph500's input edges per vertex (x2), where the CSR merged the generated ones.
    input_degrees: Callable[[], Any] | None = None
    target_ms: float | None = None  # the target for the mean time per search


def _kron(scale: int, edge_factor: int = 16) -> Case:
    return Case(f"kron {scale} ef{edge_factor}", "wide",
                lambda: generators.kronecker(scale, edge_factor, device="gpu"),
                input_degrees=lambda: road_like.kronecker_input_degrees(scale, edge_factor,
                                                                        device="gpu"))


def _uniform(scale: int, degree: int = 16) -> Case:
    return Case(f"uniform 2^{scale} deg{degree}", "wide",
                lambda: road_like.uniform_random(1 << scale, degree, device="gpu"))


def _grid_deleted(side: int) -> Case:
    return Case(f"grid-del {side}x{side} p.75", "deep",
                lambda: road_like.grid_with_deletions(side, side, keep=0.75, device="gpu"))


def _delaunay(n: int, label: str) -> Case:
    return Case(f"delaunay {label}", "deep", lambda: road_like.delaunay(n, device="gpu"))


def shuffled_ids(n: int) -> np.ndarray:
    """The fixed random order of ``n`` ids that the shuffled cases use (new id i is old id
    ``shuffled_ids(n)[i]``, :func:`reorder.apply`'s convention)."""
    return np.random.default_rng(7).permutation(n)


def _shuffled(label: str, build: Callable[[], CSRGraph]) -> Case:
    """``build``'s graph with its vertex ids in a random order: a road network or a mesh
    read from a file numbered by anything but locality."""
    def make() -> CSRGraph:
        g = build()
        return reorder.apply(g, shuffled_ids(g.n_vertices))
    return Case(f"{label} shuffled", "deep", make)


def other_shapes() -> list[Case]:
    """Graphs whose shapes and sizes the targets were not measured on (--other-shapes):
    road-like ones with other deletion rates, a long strip, a size between the Delaunay
    rows, ids in random order; wide ones of other sizes and degrees. They check that a gain
    holds off the issue's own rows."""
    roads = harness.road_graph_thunks("gpu")
    out = [
        Case("grid-del 2500x2500 p.6", "deep",
             lambda: road_like.grid_with_deletions(2500, 2500, keep=0.6, device="gpu")),
        Case("grid-del 2500x2500 p.9", "deep",
             lambda: road_like.grid_with_deletions(2500, 2500, keep=0.9, device="gpu")),
        Case("grid-del 12000x800 p.75", "deep",
             lambda: road_like.grid_with_deletions(12000, 800, keep=0.75, device="gpu")),
        _delaunay(2_000_000, "2M"),
        _shuffled("grid-del 2000x2000 p.75",
                  lambda: road_like.grid_with_deletions(2000, 2000, keep=0.75, device="gpu")),
    ]
    out += [_shuffled(label, build) for label, build in roads[:1]]
    out += [_uniform(21, 32), _uniform(23, 8), _kron(20, 32), _kron(23, 16)]
    return out


def cases(quick: bool, big: bool = False, others: bool = False) -> list[Case]:
    """The graphs, in the order they run (the issue's targets first, the slow builds last);
    ``others``: only :func:`other_shapes`."""
    if others:
        return other_shapes()
    roads = harness.road_graph_thunks("gpu")
    if quick:
        return [
            *(Case(label, "deep", build) for label, build in roads[:1]),
            Case("grid2d 300x300", "deep", lambda: generators.grid2d(300, 300, device="gpu")),
            _grid_deleted(256),
            _delaunay(1 << 14, "16k"),
            _kron(14),
            _uniform(14),
        ]
    out = [Case(label, "deep", build) for label, build in roads]
    out.append(Case("grid2d 4000x4000", "deep",
                    lambda: generators.grid2d(4000, 4000, device="gpu"), target_ms=16.0))
    out += [_kron(21), _kron(22), _uniform(22)]
    out += [_grid_deleted(side) for side in (1000, 2000, 3000, 4000, 5000)]
    out += [_delaunay(1_000_000, "1M"), _delaunay(4_000_000, "4M")]
    if big:
        out += [_grid_deleted(6000), _delaunay(9_000_000, "9M")]
    return out


def pick_roots(host: CSRGraph, count: int, seed: int = 1) -> list[int]:
    """``count`` distinct random vertices of degree > 0 (Graph500's rule)."""
    candidates = np.flatnonzero(np.diff(host.indptr) > 0)
    rng = np.random.default_rng(seed)
    return [int(v) for v in rng.choice(candidates, size=min(count, candidates.size),
                                       replace=False)]


def harmonic_teps(edges: list[float], seconds: list[float]) -> float:
    """Graph500's mean: the harmonic mean of edges / time over the searches."""
    rates = [e / s for e, s in zip(edges, seconds, strict=True) if s > 0 and e > 0]
    return len(rates) / sum(1.0 / r for r in rates) if rates else 0.0


def graph500_edges(result: Any, input_degrees: Any, symmetric: bool) -> float:
    """Graph500's edge count of one search: undirected input edges within the component."""
    if input_degrees is None:
        count = result.n_edges_traversed
    else:
        count = int((input_degrees * (result.distances >= 0)).sum())
    return count / 2 if symmetric else float(count)


# Busy-waits on the GPU's nanosecond timer (as scripts/bfs_profile.py did, now deleted).
_SPIN = r"""
extern "C" __global__ void mg_spin(long long ns) {
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""


def _spin_kernel() -> Callable[[], None]:
    """Queue a one-thread kernel that keeps the GPU busy for SPIN_MS."""
    kernel = backend.cupy_module().RawKernel(_SPIN, "mg_spin")
    ns = np.int64(SPIN_MS * 1e6)
    return lambda: kernel((1,), (1,), (ns,))


def _scipy_matrix(host: CSRGraph) -> Any:
    """The structure as SciPy CSR with float64 data (what SciPy converts to, so no copy is
    charged to the baseline); the data is a read-only broadcast, no array is written."""
    ones = np.broadcast_to(np.float64(1.0), (host.indices.size,))
    index = np.int32 if host.n_edges < 2**31 else np.int64  # SciPy's own index type
    return sp.csr_matrix((ones, host.indices.astype(index, copy=False),
                          host.indptr.astype(index, copy=False)), shape=host.shape)


def bench_graph(case: Case, g: CSRGraph, args: Any, record: harness.Record,
                spin: Callable[[], None]) -> list[int]:
    host = g.to("cpu")
    symmetric = not g.directed or road_like.is_symmetric(host.indptr, host.indices)
    roots = pick_roots(host, args.roots or (8 if args.quick else 64))
    names = list(dict.fromkeys([*FAMILY_VARIANTS[case.family], *args.variant_list]))
    n_scipy = min(len(roots), 2 if args.quick or g.n_vertices > 10_000_000 else 3)
    input_degrees = case.input_degrees() if case.input_degrees is not None else None
    record.note(f"{case.label}: n={g.n_vertices} m={g.n_edges} (CSR entries), "
                f"{'symmetric' if symmetric else 'not symmetric'}, {len(roots)} roots")

    # SciPy first: its distances on the first root are the reference.
    matrix = _scipy_matrix(host)
    scipy_s: list[float] = []
    reference = None
    for root in roots[:n_scipy]:
        t0 = time.perf_counter()
        order, pred = csgraph.breadth_first_order(matrix, root, directed=True,
                                                  return_predecessors=True)
        scipy_s.append(time.perf_counter() - t0)
        if reference is None:
            reference = distances_from_fifo(order, pred, host.n_vertices)
    del matrix

    # The searches timed: bfs() per variant, then bfs_ab's rows (a kernel's runner called
    # directly, returning (labels, parents)), made after bfs()'s first calls so that
    # those calls' prepare_s still include the workspace's derived copies.
    searches: dict[str, Callable[[int], Any]] = {
        name: (lambda r, v=name: bfs(g, r, variant=v, device="gpu", predecessors=True))
        for name in names}
    extra: dict[str, bfs_ab.Row] = {}

    from morphgpu.bfs.gpu import deep_choice, relabel, workspace  # noqa: PLC0415  (GPU only)

    # First calls (prepare_s) and the checks on the first root.
    prepare_s: dict[str, float] = {}
    second_s: dict[str, float] = {}
    ran: dict[str, str] = {}
    full = g.n_edges <= FULL_CHECK_MAX_EDGES
    checked: list[str] = []

    def first_calls(label: str) -> None:
        t0 = time.perf_counter()
        out = searches[label](roots[0])
        backend.synchronize()
        prepare_s[label] = time.perf_counter() - t0
        t0 = time.perf_counter()
        second = searches[label](roots[0])
        backend.synchronize()
        second_s[label] = time.perf_counter() - t0
        ran[label] = extra[label].ran if label in extra else second.variant
        if label == "auto" and ran[label] in deep_choice.CANDIDATES:
            # auto's deep choice, made now rather than after the searches that would reach
            # its expected cost, so the timed calls below run what it chose.
            ran[label] = deep_choice.choose_now(workspace(g), roots[0], True).variant
        labels_of, parents_of = _labels_parents(out)
        dist = backend.to_host(labels_of)
        if not np.array_equal(dist, reference):
            raise AssertionError(f"{case.label}: {label} distances differ from SciPy's "
                                 f"(root {roots[0]})")
        # Graph500's checks on auto, and on the extra rows where parents are checked
        # (their distances were just compared with SciPy's).
        if label == "auto" or (label in extra and full):
            graph500_check(host.indptr, host.indices, roots[0], dist,
                           backend.to_host(parents_of) if full else None)
            checked.append(label)

    for name in names:
        first_calls(name)
    extra = bfs_ab.rows(case.family, g, args)
    searches.update({label: row.search for label, row in extra.items()})
    for label in extra:
        first_calls(label)
    labels = list(searches)
    record.note(f"{case.label}: checked on root {roots[0]}: distances equal SciPy's "
                f"({', '.join(labels)}), Graph500's checks on {', '.join(checked)} "
                f"({'with' if full else 'without'} parents)")

    # Root by root, every search in turn.
    per_variant_s = args.slice or (0.5 if args.quick else 4.0)
    deadline = time.perf_counter() + per_variant_s * len(labels)
    times: dict[str, list[float]] = {label: [] for label in labels}
    tiled_runs: dict[str, list[dict[str, int]]] = {
        label: [] for label in labels
        if ran[label] == "tiled" or label.startswith("tiled")}
    edges: list[float] = []
    entries: list[int] = []
    levels: list[int] = []
    for i, root in enumerate(roots):
        seen = set()
        kept: dict[str, Any] = {}  # labels, checked against the first bfs() row's
        # The order rotates root by root: a variant run right after another variant's
        # search finds the L2 cache holding that one's arrays (a fixed order charged it to
        # the first variant: Kronecker 21 auto 0.169 ms against beamer 0.146 ms, the same
        # prepared call; H100, 2026-11-26).
        k = i % len(labels)
        for label in labels[k:] + labels[:k]:
            seconds, out = harness.event_seconds(lambda r=root, f=searches[label]: f(r))
            times[label].append(seconds)
            if label in tiled_runs:
                tiled_runs[label].append(bfs_ab.tiled_counters(g))
            if label in extra:
                kept[label] = out[0]
            else:
                seen.add((out.n_levels, out.n_edges_traversed))
                kept[label] = out.distances
                result = out
        if len(seen) != 1:
            raise AssertionError(f"{case.label}: variants disagree on root {root}: {seen}")
        for label, dist in kept.items():
            if not bool(backend.cupy_module().array_equal(dist, result.distances)):
                raise AssertionError(f"{case.label}: {label} distances differ from "
                                     f"{result.variant}'s (root {root})")
        del kept
        levels.append(result.n_levels)
        entries.append(result.n_edges_traversed)
        edges.append(graph500_edges(result, input_degrees, symmetric))
        if time.perf_counter() > deadline and i + 1 >= n_scipy:
            break

    # The GPU's time with the host's work before the first wait hidden, and the host's
    # clocks of those calls.
    n_busy = 0 if args.no_extras else min(4, len(edges))
    busy: dict[str, float] = {}
    to_launch: dict[str, float | None] = {}
    host_call: dict[str, float] = {}
    for label in labels:
        spent, launched_s, call_s = [], [], []
        for root in roots[:n_busy]:
            spin()
            seconds, launched, returned = bfs_ab.clocked_call(
                lambda r=root, f=searches[label]: f(r))
            spent.append(seconds)
            call_s.append(returned)
            if launched is not None:
                launched_s.append(launched)
        busy[label] = float(np.mean(spent)) if spent else float("nan")
        to_launch[label] = float(np.median(launched_s)) if launched_s else None
        host_call[label] = float(np.median(call_s)) if call_s else float("nan")

    scipy_mean = float(np.mean(scipy_s))
    mean_levels = float(np.mean(levels))

    copy = relabel.preparation(workspace(g))
    relabel_prep = None if copy is None else copy.seconds
    choice = deep_choice.preparation(workspace(g))
    before = [label for label in extra if label.startswith("before")]
    before_mean = float(np.mean(times[before[0]])) if before else None
    persistent_mean = float(np.mean(times["persistent"])) if "persistent" in times else None
    for name in labels:
        ts = times[name]
        mean_s = float(np.mean(ts))
        row: dict[str, Any] = dict(
            graph=case.label, family=case.family, variant=name, ran=ran[name],
            n=g.n_vertices, m=g.n_edges, symmetric=symmetric, roots=len(ts),
            gteps=harmonic_teps(edges, ts) / 1e9,
            directed_entry_gteps=harmonic_teps([float(e) for e in entries], ts) / 1e9,
            mean_ms=mean_s * 1e3, median_ms=statistics.median(ts) * 1e3,
            levels=mean_levels, us_per_level=mean_s * 1e6 / max(mean_levels, 1.0),
            prepare_s=prepare_s[name], second_call_s=second_s[name],
            relabel_prep_s=relabel_prep,
            gpu_busy_ms=busy[name] * 1e3 if n_busy else None,
            host_hidden_us=(float(np.mean(ts[:n_busy])) - busy[name]) * 1e6 if n_busy else None,
            host_to_launch_us=None if to_launch[name] is None else to_launch[name] * 1e6,
            host_call_us=host_call[name] * 1e6 if n_busy else None,
            scipy_ms=scipy_mean * 1e3, scipy_roots=len(scipy_s),
            vs_scipy=scipy_mean / float(np.mean(ts[:len(scipy_s)])))
        if name == "auto" and choice is not None:
            row.update(auto_choice=choice.variant, auto_choice_persistent_ms=choice.persistent_ms,
                       auto_choice_tiled_ms=choice.tiled_ms,
                       auto_choice_horizon=choice.horizon,
                       auto_choice_ms_by_arm="/".join(
                           f"{v}:{h}={ms:.3f}" for (v, h), ms in choice.ms_by_arm.items()
                           if v != "persistent"),
                       auto_choice_s=choice.seconds,
                       auto_expected_s=choice.expected_s)
            if persistent_mean is not None:
                row["auto_due_after_searches"] = choice.expected_s / persistent_mean
        if before_mean is not None:
            row["x_before"] = before_mean / mean_s
        if persistent_mean is not None:
            row["x_persistent"] = persistent_mean / mean_s
        if name in tiled_runs:
            row.update(bfs_ab.tiled_fields(tiled_runs[name]))
        if case.target_ms is not None:
            row.update(target_ms=case.target_ms, meets_target=mean_s * 1e3 <= case.target_ms)
        record.row(**row)
    for entry in bfs_ab.profile(case.family, g, args, roots):
        record.row(graph=case.label, family=case.family, variant="profile", **entry)
    return roots


def _labels_parents(out: Any) -> tuple[Any, Any]:
    """(labels, parents) of a bfs() result or of a runner's (labels, parents)."""
    if isinstance(out, tuple):
        return out[0], out[1]
    return out.distances, out.predecessors


def bench_matrix_input(case: Case, g: CSRGraph, roots: list[int], args: Any,
                       record: harness.Record) -> None:
    """bfs() on a cupyx.scipy.sparse csr_matrix of the graph against bfs() on the CSRGraph:
    second and later calls, interleaved root by root. Both name the variant auto picks on
    the CSRGraph, so the ratio is the matrix path's own cost; a matrix comes in as a
    directed graph, and what auto picks for it is reported as ``matrix_auto_ran``."""
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as cusp  # noqa: PLC0415

    index = cp.int32 if g.n_edges < 2**31 and g.n_vertices < 2**31 else cp.int64
    matrix = cusp.csr_matrix((cp.ones(g.n_edges, dtype=cp.float32),
                              g.indices.astype(index, copy=False),
                              g.indptr.astype(index, copy=False)), shape=g.shape)

    csr_ran = bfs(g, roots[0], device="gpu").variant
    matrix_auto_ran = bfs(matrix, roots[0], device="gpu").variant

    def call(graph: Any, root: int) -> Any:
        return bfs(graph, root, variant=csr_ran, device="gpu", predecessors=True)

    call(matrix, roots[0])  # first calls are not counted
    call(g, roots[0])
    matrix_s, csr_s = [], []
    for root in roots[:3 if args.quick else 8]:
        matrix_s.append(harness.event_seconds(lambda r=root: call(matrix, r))[0])
        csr_s.append(harness.event_seconds(lambda r=root: call(g, r))[0])
    matrix_ms, csr_ms = 1e3 * float(np.mean(matrix_s)), 1e3 * float(np.mean(csr_s))
    record.row(graph=case.label, family=case.family, variant="sparse-matrix input",
               ran=csr_ran, matrix_auto_ran=matrix_auto_ran, roots=len(csr_s),
               matrix_ms=matrix_ms,
               csr_ms=csr_ms, matrix_vs_csr=matrix_ms / csr_ms,
               target_ratio=MATRIX_TARGET_RATIO,
               meets_target=matrix_ms / csr_ms <= MATRIX_TARGET_RATIO)


# A new process's first call: import, build or read the graph, the first bfs() call, and
# later ones, each end to end (wall clock, synchronised); one JSON line on stdout.
FIRST_CALL_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from morphgpu import backend, generators, graph_io
from morphgpu.bfs import bfs
import_s = time.perf_counter() - t0
kind, arg = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
g = (graph_io.read_graph(arg).to("gpu") if kind == "file"
     else generators.kronecker(int(arg), 16, device="gpu"))
backend.synchronize()
build_s = time.perf_counter() - t0
root = int((backend.to_host(g.indptr[1:] - g.indptr[:-1]) > 0).argmax())
def call():
    t0 = time.perf_counter()
    result = bfs(g, root, device="gpu", predecessors=True)
    backend.synchronize()
    return time.perf_counter() - t0, result.variant
first_s, variant = call()
later = [call()[0] for _ in range(5)]
print(json.dumps({"import_s": import_s, "build_s": build_s, "variant": variant,
                  "first_ms": first_s * 1e3, "second_ms": later[0] * 1e3,
                  "steady_ms": sorted(later)[2] * 1e3}))
"""


def _first_call_child(kind: str, arg: str) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    done = subprocess.run([sys.executable, "-c", FIRST_CALL_CHILD, kind, arg], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_first_call(args: Any, record: harness.Record) -> None:
    """A new process's first bfs() call, twice: the first run finds the disk kernel cache
    as it is, the second finds it warm and is the one reported. The package's bytecode is
    compiled first, as an installed package's is: the GPU machine's environment writes no
    .pyc, and compiling the BFS modules the first call imports took 42 ms of it there."""
    from morphgpu import testing  # noqa: PLC0415

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "morphgpu")],
                   check=False, capture_output=True, timeout=300)

    graphs: list[tuple[str, str, str]] = []
    road = testing.shared_path("data", "roads", f"{harness.ROAD_NETWORKS[0]}.gr.xz")
    if road is not None and not args.quick:  # --quick: Kronecker alone, to stay short
        graphs.append((f"road {harness.ROAD_NETWORKS[0]}", "file", str(road)))
    scale = 14 if args.quick else 18
    graphs.append((f"kron {scale} ef16", "kron", str(scale)))
    for label, kind, arg in graphs:
        try:
            cold = _first_call_child(kind, arg)
            warm = _first_call_child(kind, arg)
        except Exception as exc:  # reported, the rest of the benchmark goes on
            record.note(f"first call on {label}: failed ({type(exc).__name__}: {exc})")
            continue
        overhead = warm["first_ms"] - warm["steady_ms"]
        record.row(graph=label, variant="first call", ran=warm["variant"],
                   import_s=warm["import_s"], build_s=warm["build_s"],
                   first_call_ms=warm["first_ms"], second_call_ms=warm["second_ms"],
                   steady_ms=warm["steady_ms"], first_call_overhead_ms=overhead,
                   cold_first_call_ms=cold["first_ms"], target_ms=FIRST_CALL_TARGET_MS,
                   meets_target=overhead <= FIRST_CALL_TARGET_MS)


def _wanted(label: str, wanted: list[str]) -> bool:
    """Whether --graphs names ``label``: a part of it, or a short name (GRAPH_ALIASES,
    road-NAME, grid-del-SIDE)."""
    return not wanted or any(_alias(w) in label for w in wanted)


def _alias(name: str) -> str:
    if name in GRAPH_ALIASES:
        return GRAPH_ALIASES[name]
    if name.startswith("road-"):
        return f"road {name[5:]}"
    if name.startswith("grid-del-") and name[9:].isdigit():
        return f"grid-del {name[9:]}x{name[9:]} "
    return name


def summary(record: harness.Record) -> None:
    """One line per (graph, timed row): ms per search, us per level, x_persistent, and for
    rows that ran tiled: visits followed by another of their tile, visits / the copy's
    tiles, local levels per visit, us per visit load, local level, visit write-back, the
    blocks' waits for a tile (summed) and block 0's loop."""
    rows = [r for r in record.data["rows"] if "mean_ms" in r and "us_per_level" in r]
    if not rows:
        return
    print(f"{'graph':22s} {'row':27s} {'ms':>8s} {'us/lvl':>7s} {'x pers':>6s}  tiled: "
          "again visits/of lvl/visit | us: load/visit level write/visit wait loop",
          flush=True)
    for r in rows:
        ratio = r.get("x_persistent")
        line = (f"{r['graph'][:22]:22s} {r['variant'][:27]:27s} {r['mean_ms']:8.3f}"
                f" {r['us_per_level']:7.3f} {ratio if ratio is not None else float('nan'):6.3f}")
        if "tiled_again" in r:
            line += (f"  {r['tiled_again']:.0f} {r['tiled_tiles']:.0f}/{r['tiled_n_tiles']:.0f}"
                     f" {r['tiled_levels_per_tile']:.1f} | {r['tiled_load_us_per_tile']:.2f}"
                     f" {r['tiled_us_per_local_level']:.3f} {r['tiled_write_us_per_tile']:.2f}"
                     f" {r['tiled_wait_us']:.0f} {r['tiled_loop_us']:.0f}")
        if "auto_choice" in r:
            # The record keeps an arm that was not timed as the string "nan".
            line += (f"  auto chose {r['auto_choice']} (measured ms: persistent "
                     f"{float(r['auto_choice_persistent_ms']):.2f}, "
                     f"{r['auto_choice_ms_by_arm']}; {float(r['auto_choice_s']):.2f} s;"
                     " due after "
                     f"{float(r.get('auto_due_after_searches', 'nan')):.0f} searches)")
        print(line, flush=True)


def run(args: Any, record: harness.Record) -> None:
    bfs_ab.resolve_args(args)  # a bad --before / --define fails before any graph is built
    if args.roots is not None and args.roots < 1:
        raise ValueError(f"--roots must be >= 1, not {args.roots}")
    if args.side != "gpu":
        record.note("no GPU: timing the CPU path only")
        grid = generators.grid2d(300, 300, device="cpu")
        t = harness.cpu_seconds(lambda: bfs(grid, 0, device="cpu"))
        record.row(graph="grid2d 300x300", variant="cpu-auto", mean_ms=t * 1e3)
        return
    args.variant_list = [v.strip() for v in (args.variants or "").split(",") if v.strip()]
    for name in args.variant_list:
        variants.check(name)
    record.note("times: CUDA events around whole bfs(g, root, variant=..., device='gpu', "
                "predecessors=True) calls on a prepared GPU graph, roots interleaved across "
                "variants; gteps: Graph500's (undirected input edges of the component, "
                "harmonic mean); directed_entry_gteps: CSR entries out of reached vertices; "
                "prepare_s: each variant's first call; SciPy: breadth_first_order on the "
                "first roots, same process")
    budget = time.perf_counter() + (args.budget or (60 if args.quick else 300))
    wanted = [w.strip() for w in (args.graphs or "").split(",") if w.strip()]
    if _wanted("first call", wanted):
        bench_first_call(args, record)
    spin = _spin_kernel()
    for case in cases(args.quick, args.big, args.other_shapes):
        if not _wanted(case.label, wanted):
            continue
        if time.perf_counter() > budget:
            record.note(f"{case.label}: skipped (time budget spent)")
            continue
        try:
            t0 = time.perf_counter()
            g = case.build()
            backend.synchronize()
            record.note(f"{case.label}: built in {time.perf_counter() - t0:.1f} s")
        except Exception as exc:  # a generator that cannot build this size is reported
            record.note(f"{case.label}: not built ({type(exc).__name__}: {exc})")
            continue
        roots = bench_graph(case, g, args, record, spin)
        try:
            if not args.no_extras:
                bench_matrix_input(case, g, roots, args, record)
        except Exception as exc:  # the matrix path failing is a finding, not a stop
            record.note(f"{case.label}: sparse-matrix input failed "
                        f"({type(exc).__name__}: {exc})")
        del g
        from morphgpu.bfs import gpu  # noqa: PLC0415  (GPU runs only)

        gpu.workspace_module.workspaces.clear()  # the graph's copies go with it
        backend.cupy_module().get_default_memory_pool().free_all_blocks()
    summary(record)


def _add_args(parser: Any) -> None:
    parser.add_argument("--big", action="store_true",
                        help="also the largest graphs (grid-del 6000x6000, Delaunay 9M)")
    parser.add_argument("--other-shapes", action="store_true",
                        help="instead of the issue's graphs, road-like and wide graphs of "
                             "other shapes, sizes and id orders (other_shapes())")
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds after the start when no further graph is started "
                             "(default 300, 60 with --quick)")
    parser.add_argument("--graphs", default=None,
                        help="comma-separated parts of labels to run (default: all), e.g. "
                             "'kron 21,grid2d,first call'")
    parser.add_argument("--slice", type=float, default=None,
                        help="seconds of searches per variant and graph before fewer than 64 "
                             "roots are taken (default 4, 0.5 with --quick)")
    parser.add_argument("--variants", default=None,
                        help="comma-separated variants to time besides each family's")
    parser.add_argument("--no-extras", action="store_true",
                        help="leave out the busy-GPU calls and the sparse-matrix input rows")
    parser.add_argument("--roots", type=int, default=None,
                        help="random roots of degree > 0 per graph (default 64, 8 with "
                             "--quick)")
    bfs_ab.add_args(parser)


if __name__ == "__main__":
    harness.main("bfs", run, _add_args)
