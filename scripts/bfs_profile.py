"""Where the persistent BFS kernels spend their time, and whether their compile-time
alternatives are faster (issue 7's deep-graph and Kronecker targets). Needs a GPU.

    PYTHONPATH=$PWD python3 scripts/bfs_profile.py [--quick] [--graphs road,grid,kron,rmat]

Every alternative of kernels/persistent.cu and kernels/direction.cu is a #define (the
defaults are the faster ones measured; "=0" rows give the path before); this script
compiles each one next to gpu.py's own path and times them root by root
in turn, in one process, with CUDA events around the whole call (as benchmarks/bfs.py
does). Each alternative's distances must equal gpu.py's on every root, one root's equal
SciPy's, and on small graphs (directed, hubs, layered frontiers around the one-block
limits) every alternative passes Graph500's checks with parents. Builds with
-DMG_BFS_PROFILE then show where the time goes: one-block and grid rounds of the
persistent kernel, and each level's phases (expand / bottom-up, queue generation) of the
direction-optimising kernel.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bfs_sanitize import layered  # noqa: E402

from morphgpu import backend, barrier, generators, graph_io, kernels, testing  # noqa: E402
from morphgpu.bfs import gpu, graph500_check  # noqa: E402
from morphgpu.csr import CSRGraph  # noqa: E402

Runner = Callable[[int, bool], tuple[Any, Any]]

# name -> (extra defines, enter_local); None is gpu.py's own path.
ROWS_OFF = {"MG_BFS_LOCAL_ROWS": 0}  # the one-block levels before LocalRows
BIG_CAP = {"MG_BFS_LOCAL_CAP": 5632}  # clamped to what shared memory holds
ELL_AUTO = {"MG_BFS_ELL_K": -1}  # -1: the graph's ELL width (variant skipped where it has none)
# The H200 run of 2026-11-23 compared the ELL rows with the CSR paths before them (LocalRows
# one-block levels, rows=0/2, grid-only, cap5632); "ell=0" is that CSR default now, and
# "default again" runs gpu.py's path a second time, last, to show what the order of the rows
# alone does to a ratio.
# The per-call overhead options (gpu.IDLE_WAIT, SMALL_GRID, FAST_CALL) as run_persistent
# keyword rows (a dict): "before" is all three off (and the bitmap), the path measured on
# 2026-11-23.
BEFORE = {"idle_wait": False, "small_grid": 0, "fast": False, "bitmap": False,
          "adaptive": False}
PERSISTENT_VARIANTS: dict[str, tuple[dict[str, int], int] | dict[str, Any] | None] = {
    "default": None,
    # Block 0's visited bitmap (gpu.LOCAL_BITMAP): off is the path measured on 2026-11-23.
    "bitmap=off": {"bitmap": False},
    # The same through defines (full grid, no cached launch).
    "bitmap defines": ({**ELL_AUTO, "MG_BFS_IDLE_WAIT": 1, "MG_BFS_LOCAL_BITMAP": 1},
                       gpu.ENTER_LOCAL),
    "before": BEFORE,
    # Fewer blocks than ceil(n / SMALL_GRID) for the grid levels of wide-but-shallow-
    # frontier graphs (grid2d 5000² has frontiers of at most ~10^4 vertices; every grid
    # level pays a grid.sync() whose cost grows with the blocks): 16, 32, 63, 125 blocks
    # there.
    "adaptive=off": {"adaptive": False},
    "grid16": {"small_grid": 1_600_000, "adaptive": False},
    "grid32": {"small_grid": 800_000, "adaptive": False},
    "grid63": {"small_grid": 400_000, "adaptive": False},
    "grid125": {"small_grid": 200_000, "adaptive": False},
    "ell=0": ({}, gpu.ENTER_LOCAL),
    "grid-only": (ELL_AUTO, 0),
    "default again": None,
}
FUSED_BU_OFF = {"MG_BFS_FUSED_BOTTOM_UP": 0}
FUSED_TD_OFF = {"MG_BFS_FUSED_TOP_DOWN": 0}
SOURCE_OFF = {"MG_BFS_SOURCE_STATS": 0}
NONE_DIRECTION = {**FUSED_BU_OFF, **FUSED_TD_OFF, **SOURCE_OFF}  # the path before them
# name -> (extra defines, (alpha, beta) or None for gpu.py's); None is gpu.py's own path.
# Rows named "... sorted=1" / "sorted=0" scan the degree-sorted / plain reverse graph
# (gpu.SORTED_ROWS on / off); the others follow gpu.SORTED_ROWS.
DIRECTION_VARIANTS: dict[str, tuple[dict[str, int], tuple[float, float] | None] | None] = {
    "default": None,
    "sorted=1": ({}, None),
    "none": (NONE_DIRECTION, None),
    "fused-td=0": (FUSED_TD_OFF, None),
    "fused-bu=0": (FUSED_BU_OFF, None),
    "beta=96": ({}, (gpu.ALPHA, 96.0)),
    "fused-td=0 beta=96": (FUSED_TD_OFF, (gpu.ALPHA, 96.0)),
    "default again": None,
}


def _sorted_option(name: str) -> bool | None:
    """A row's sorted_rows: forced by "sorted=1" / "sorted=0" in its name, else gpu.py's."""
    if "sorted=1" in name:
        return True
    return False if "sorted=0" in name else None


PROFILE_SLOTS = ["local rounds", "local levels", "grid rounds", "give-ups", "local cycles",
                 "grid cycles", "grid barrier cycles", "total cycles"]
PROFILE_ELL_SLOTS = ["read cycles", "work cycles", "sync cycles", "entries"]


def say(*parts: Any) -> None:
    print(*parts, flush=True)


def _index_defines(g: CSRGraph) -> dict[str, Any]:
    return kernels.index_defines(g.indices.dtype, g.indptr.dtype)


def _profile_array(path: str, defines: dict[str, Any], shape: tuple[int, ...],
                   name: str = "mg_bfs_profile") -> Any:
    """The kernel module's global `name` as a CuPy array (the same cached module as the
    PersistentGrid's: same file, defines and cooperative flag)."""
    cp = backend.cupy_module()
    defs = dict(defines)
    cooperative = gpu.BARRIER_MODE == "cooperative"
    if cooperative:
        defs["MG_BARRIER_COOP"] = None
    module = kernels.load_module(path, defines=defs, cooperative=cooperative)
    return cp.ndarray(shape, dtype=cp.uint64, memptr=module.get_global(name))


def persistent_runner(g: CSRGraph, extra: dict[str, Any], enter_local: int
                      ) -> tuple[Runner, dict[str, Any]]:
    """run_persistent with extra defines (same arguments, same workspace). MG_BFS_ELL_K=-1
    stands for the graph's ELL width (ValueError where it has none)."""
    cp = backend.cupy_module()
    ws = gpu.workspace(g)
    defines = {**_index_defines(g), "MG_BFS_BLOCK": gpu.PERSISTENT_BLOCK,
               "MG_BFS_LOCAL_CAP": gpu.LOCAL_CAP, **extra}
    block = int(defines["MG_BFS_BLOCK"])
    if defines.get("MG_BFS_ELL_K") == -1:
        if ws.ell_width == 0:
            raise ValueError(f"no ELL form (maximum degree {ws.max_degree})")
        defines["MG_BFS_ELL_K"] = ws.ell_width
    ell = ws.ell() if defines.get("MG_BFS_ELL_K") else gpu.NULL
    shared = (gpu.bitmap_bytes(g.n_vertices, int(defines.get("MG_BFS_ELL_K") or 0), True)
              if defines.get("MG_BFS_LOCAL_BITMAP") else 0)
    if defines.get("MG_BFS_LOCAL_BITMAP") and not shared:  # block 0 would write past it
        raise ValueError(f"no bitmap for {g.n_vertices} vertices (gpu.BITMAP_MAX_VERTICES)")
    grid = barrier.persistent_kernel(gpu.PERSISTENT_FILE, "bfs_persistent",
                                     mode=gpu.BARRIER_MODE,  # type: ignore[arg-type]
                                     block=block, defines=defines, shared_mem=shared)
    options = ((1 if gpu.LOCAL_BATCH else 0) | (2 if gpu.SPREAD_WIDE else 0)
               | (4 if gpu.LOCAL_HYSTERESIS else 0))
    vid = g.indices.dtype.type

    def run(source: int, want_parents: bool) -> tuple[Any, Any]:
        dist = cp.empty(g.n_vertices, dtype=cp.int32)
        parent = cp.empty(g.n_vertices, dtype=g.indices.dtype) if want_parents else None
        gpu._launch(grid, g.indptr, g.indices, dist, gpu._ptr(parent), ws.queues[0],
                    ws.queues[1], ws.tails, ws.ctrl, np.int64(g.n_vertices), vid(source),
                    np.int32(enter_local), np.int64(ws.max_degree), np.int32(options), ell)
        grid.check()
        return dist, parent

    return run, defines


def direction_runner(g: CSRGraph, extra: dict[str, Any], rule: str = "beamer",
                     alpha_beta: tuple[float, float] | None = None, *,
                     sorted_rows: bool | None = None, block: int | None = None
                     ) -> tuple[Runner, dict[str, Any]]:
    """run_direction_persistent with extra defines and gpu.py's option defaults (or other
    alpha and beta, in-neighbour order, block size)."""
    alpha, beta = alpha_beta or (gpu.ALPHA, gpu.BETA)
    block = block or gpu.DIRECTION_BLOCK
    sorted_rows = gpu.SORTED_ROWS if sorted_rows is None else sorted_rows
    cp = backend.cupy_module()
    defines = {**_index_defines(g), "MG_BFS_BLOCK": block, **extra}
    grid = barrier.persistent_kernel(gpu.DIRECTION_FILE, "bfs_direction_persistent",
                                     mode=gpu.BARRIER_MODE,  # type: ignore[arg-type]
                                     block=block, defines=defines)
    ws = gpu.workspace(g)
    if rule == "top-down":
        rev = g
    else:
        rev = ws.sorted_reverse() if sorted_rows else ws.reverse()
    vid = g.indices.dtype.type

    def run(source: int, want_parents: bool) -> tuple[Any, Any]:
        dist = cp.empty(g.n_vertices, dtype=cp.int32)
        parent = cp.empty(g.n_vertices, dtype=g.indices.dtype) if want_parents else None
        gpu._launch(grid, g.indptr, g.indices, rev.indptr, rev.indices, dist,
                    gpu._ptr(parent), ws.queues[0], ws.hub_queue, ws.stats,
                    np.int64(g.n_vertices), vid(source),
                    np.int64(ws.hub_degree), np.int64(ws.n_hubs), np.int64(ws.n_edges),
                    np.int32(gpu.RULES[rule]), np.int32(1), np.float32(gpu.GAMMA),
                    np.float32(alpha), np.float32(beta), np.int32(gpu.WARP_BOTTOM_UP),
                    np.int32(gpu.FLAT_HUBS), np.int32(gpu.WARP_RESERVE),
                    ws.frontier_bits if gpu.FRONTIER_BITMAP else gpu.NULL,
                    np.int64(ws.bottom_up_end() if gpu.TRIM_BOTTOM_UP and rule != "top-down"
                             else g.n_vertices),
                    gpu.NULL, gpu.NULL, gpu.NULL, gpu.NULL)  # no map back
        grid.check()
        return dist, parent

    return run, defines


def _add(out: dict[str, Runner], name: str, make: Callable[[], Runner]) -> None:
    """out[name] = make(), unless it fails (a compile error): then said and left out."""
    try:
        out[name] = make()
    except Exception as exc:
        say(f"variant {name}: not built ({type(exc).__name__}: {str(exc)[:2000]})")


def runners_for(g: CSRGraph, kind: str, *, small: bool = False) -> dict[str, Runner]:
    out: dict[str, Runner] = {}
    if kind == "persistent":
        ws = gpu.workspace(g)
        for name, spec in PERSISTENT_VARIANTS.items():
            if spec is None:
                out[name] = lambda s, p, ws=ws: gpu.run_persistent(ws, s, p)
            elif isinstance(spec, dict):
                out[name] = lambda s, p, ws=ws, spec=spec: gpu.run_persistent(ws, s, p, **spec)
            elif small and g.n_vertices < 8192 and "cap" in name and "ell" not in name:
                continue  # the workspace's queues hold max(n, gpu.LOCAL_CAP) entries
            elif "MG_BFS_ELL_K" in spec[0] and ws.ell_width == 0:
                continue  # no ELL form (maximum degree above gpu.ELL_MAX_DEGREE)
            else:
                _add(out, name, lambda spec=spec: persistent_runner(g, spec[0], spec[1])[0])
    else:
        rules = ("beamer", "gamma", "bottom-up", "top-down") if small else ("beamer",)
        for rule in rules:
            for name, spec in DIRECTION_VARIANTS.items():
                tag = name if rule == "beamer" else f"{rule} {name}"
                if spec is None:
                    out[tag] = (lambda s, p, g=g, rule=rule: gpu.run_direction_persistent(
                        gpu.workspace(g), s, p, rule=rule))
                elif not (small and spec[1] is not None):
                    block = int(name.split("block=")[1]) if "block=" in name else None
                    _add(out, tag, lambda spec=spec, rule=rule, name=name, block=block:
                         direction_runner(g, spec[0], rule, spec[1],
                                          sorted_rows=_sorted_option(name),
                                          block=block)[0])
    return out


def scipy_distances(host: CSRGraph, source: int) -> np.ndarray:
    """Levels from SciPy's BFS tree: each reached vertex's depth, by pointer jumping."""
    matrix = sp.csr_matrix((np.ones(host.n_edges, dtype=np.float64), host.indices,
                            host.indptr), shape=host.shape)
    order, pred = csgraph.breadth_first_order(matrix, source, directed=True,
                                              return_predecessors=True)
    up = np.arange(host.n_vertices, dtype=np.int64)  # unreached vertices point to themselves
    up[order[1:]] = pred[order[1:]]
    depth = np.zeros(host.n_vertices, dtype=np.int64)
    depth[order[1:]] = 1
    while True:
        above = up[up]
        if np.array_equal(above, up):
            break
        depth += depth[up]
        up = above
    dist = np.full(host.n_vertices, -1, dtype=np.int64)
    dist[order] = depth[order]
    return dist


def pick_roots(host: CSRGraph, count: int, seed: int = 1) -> list[int]:
    candidates = np.flatnonzero(np.diff(host.indptr) > 0)
    rng = np.random.default_rng(seed)
    return [int(v) for v in rng.choice(candidates, size=min(count, candidates.size),
                                       replace=False)]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    cp = backend.cupy_module()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    out = fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / 1e3, out


def compare(label: str, g: CSRGraph, kind: str, n_roots: int, *, check_parents: bool) -> None:
    """Each variant once per root in turn (so drift hits all alike); distances equal."""
    cp = backend.cupy_module()
    host = g.to("cpu")
    roots = pick_roots(host, n_roots)
    t0 = time.perf_counter()
    runners = runners_for(g, kind)
    reference = scipy_distances(host, roots[0])
    for name, run in list(runners.items()):  # warm-up (compiles) and the checks on root 0
        dist, parent = run(roots[0], True)
        try:
            if not np.array_equal(dist.get(), reference):
                raise AssertionError("distances differ from SciPy's")
            if check_parents:
                graph500_check(host.indptr, host.indices, roots[0], dist.get(), parent.get())
        except AssertionError as exc:
            say(f"{label} {name}: WRONG ({exc}); not timed")
            del runners[name]
    say(f"{label}: n={g.n_vertices} m={g.n_edges}; compiled and checked "
        f"{len(runners)} variants in {time.perf_counter() - t0:.1f} s")
    seconds: dict[str, list[float]] = {name: [] for name in runners}
    levels: list[int] = []
    edges: list[int] = []
    for root in roots:
        base = None
        for name, run in runners.items():
            s, (dist, _) = timed(lambda run=run, root=root: run(root, True))
            seconds[name].append(s)
            if base is None:
                base = dist
                levels.append(int(dist.max()) + 1)
                edges.append(gpu.edges_out_of_reached(g, dist))
            elif not bool(cp.array_equal(dist, base)):
                say(f"{label} {name}: WRONG distances on root {root}")
    mean_levels = float(np.mean(levels))
    base_mean = float(np.mean(seconds["default"]))
    say(f"  {len(roots)} roots, {mean_levels:.1f} levels on average")
    for name, ts in seconds.items():
        rates = [e / t for e, t in zip(edges, ts) if t > 0 and e > 0]
        teps = len(rates) / sum(1 / r for r in rates) if rates else 0.0
        mean = float(np.mean(ts))
        say(f"  {name:<22} mean {mean * 1e3:8.3f} ms  median {np.median(ts) * 1e3:8.3f} ms  "
            f"{mean * 1e6 / mean_levels:7.2f} us/level  {teps / 1e9:8.2f} GTEPS  "
            f"x{base_mean / mean:5.3f} vs default")


_SPIN = r"""
extern "C" __global__ void mg_spin(long long ns) {
    long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""


def overhead(label: str, g: CSRGraph, names: tuple[str, ...] = ("bitmap=off", "default"),
             n_roots: int = 8) -> None:
    """Where a call's time goes, per variant: the event time as the benchmarks take it
    (idle GPU: host work before the launch counts), the event time with the GPU kept busy
    by a 1 ms spin kernel queued first (the host work is hidden: launch gap plus kernel),
    and the host's own time per call (perf_counter, launches queued behind a spin)."""
    cp = backend.cupy_module()
    spin = cp.RawKernel(_SPIN, "mg_spin")
    host = g.to("cpu")
    roots = pick_roots(host, n_roots, seed=3)
    runners = runners_for(g, "persistent")
    for name in names:
        run = runners.get(name)
        if run is None:
            continue
        run(roots[0], True)
        idle, busy, cpu = [], [], []
        for root in roots:
            idle.append(timed(lambda run=run, root=root: run(root, True))[0])
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            spin((1,), (1,), (np.int64(1_000_000),))
            t0 = time.perf_counter()
            start.record()
            run(root, True)
            cpu.append(time.perf_counter() - t0)
            stop.record()
            stop.synchronize()
            busy.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
        say(f"  overhead {label} {name:<10}: idle-GPU events {np.mean(idle) * 1e6:7.1f} us, "
            f"busy-GPU events {np.mean(busy) * 1e6:7.1f} us (difference "
            f"{(np.mean(idle) - np.mean(busy)) * 1e6:5.1f}), host per call "
            f"{np.median(cpu) * 1e6:5.1f} us")


def _tag(extra: dict[str, Any]) -> str:
    return "+".join(f"{k.removeprefix('MG_BFS_').lower()}={v}" for k, v in extra.items()) \
        or "default"


def profile_persistent(label: str, g: CSRGraph, n_roots: int, extra: dict[str, Any]) -> None:
    cp = backend.cupy_module()
    host = g.to("cpu")
    run, defines = persistent_runner(g, {**extra, "MG_BFS_PROFILE": None}, gpu.ENTER_LOCAL)
    clock_khz = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["clockRate"]
    counters = _profile_array(gpu.PERSISTENT_FILE, defines, (len(PROFILE_SLOTS),))
    ell = bool(defines.get("MG_BFS_ELL_K")) and defines.get("MG_BFS_ELL_LOCAL", 1) != 0
    ell_counters = (_profile_array(gpu.PERSISTENT_FILE, defines, (len(PROFILE_ELL_SLOTS),),
                                   "mg_bfs_profile_ell") if ell else None)
    run(pick_roots(host, 1)[0], True)  # compile
    sums = np.zeros(len(PROFILE_SLOTS))
    ell_sums = np.zeros(len(PROFILE_ELL_SLOTS))
    event_seconds = 0.0
    roots = pick_roots(host, n_roots)
    for root in roots:
        counters.fill(0)
        if ell_counters is not None:
            ell_counters.fill(0)
        event_seconds += timed(lambda root=root: run(root, True))[0]
        sums += counters.get().astype(np.float64)
        if ell_counters is not None:
            ell_sums += ell_counters.get().astype(np.float64)
    c = dict(zip(PROFILE_SLOTS, sums / len(roots)))
    us = 1e3 / clock_khz  # microseconds per cycle
    # The whole call as the benchmarks time it (CUDA events around the Python call) against
    # the kernel's own span: the difference is launch and host overhead.
    say(f"  profile call: {event_seconds / len(roots) * 1e6:.0f} us per call (events), "
        f"kernel span {c['total cycles'] * us:.0f} us")
    if ell_counters is not None:
        e = dict(zip(PROFILE_ELL_SLOTS, ell_sums / len(roots)))
        levels = max(c["local levels"], 1.0)
        say(f"  profile ELL levels: {levels:.0f} levels of {e['entries'] / levels:.0f} entries; "
            f"per level read+sync {e['read cycles'] * us / levels:.2f} us, claims+pushes "
            f"{e['work cycles'] * us / levels:.2f} us, closing sync "
            f"{e['sync cycles'] * us / levels:.2f} us (thread 0's view)")

    def per(cycles: str, count: str) -> float:
        return c[cycles] * us / max(c[count], 1.0)

    tag = _tag(extra)
    say(f"  profile ({tag}, block 0, {clock_khz / 1e3:.0f} MHz): "
        f"{c['local rounds']:.0f} one-block rounds running {c['local levels']:.0f} levels, "
        f"{c['grid rounds']:.0f} grid rounds, {c['give-ups']:.0f} give-ups; "
        f"one-block {per('local cycles', 'local levels'):.2f} us/level "
        f"({c['local cycles'] * us:.0f} us), grid {per('grid cycles', 'grid rounds'):.2f} "
        f"us/round of which barrier wait {per('grid barrier cycles', 'grid rounds'):.2f} "
        f"({c['grid cycles'] * us:.0f} us); kernel {c['total cycles'] * us:.0f} us")


def profile_direction(label: str, g: CSRGraph, extra: dict[str, Any]) -> None:
    cp = backend.cupy_module()
    host = g.to("cpu")
    run, defines = direction_runner(g, {**extra, "MG_BFS_PROFILE": None})
    clock_khz = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["clockRate"]
    rows = _profile_array(gpu.DIRECTION_FILE, defines, (256, 4))
    roots = pick_roots(host, 3)
    run(roots[0], True)  # compile
    us = 1e3 / clock_khz
    tag = _tag(extra)
    for root in roots:
        rows.fill(0)
        run(root, True)
        table = rows.get().astype(np.int64)
        start = table[0, 0]
        init = (table[0, 2] - start) * us
        parts = [f"init {init:.1f}"]
        level = 0
        while level + 1 < table.shape[0] and table[level + 1, 0] != 0:
            begin, mid, end, flags = table[level + 1]
            direction = "BU" if flags & 1 else "TD"
            fused = "f" if flags & 2 else ""
            n_f = flags >> 8
            phase_a = ((mid if mid else end) - begin) * us
            phase_b = (end - mid) * us if mid else 0.0
            parts.append(f"L{level} {direction}{fused} A {phase_a:.1f} B {phase_b:.1f} "
                         f"-> {n_f}")
            level += 1
        total = (table[level, 2] - start) * us
        say(f"  profile ({tag}) root {root}: total {total:.1f} us; " + "; ".join(parts))


def small_graph_checks() -> None:
    """Every variant, with parents, on small graphs with traps: directed edges, hubs,
    frontiers around the one-block limits, an isolated source."""
    isolated = CSRGraph.from_edges(np.array([1, 2, 3]), np.array([2, 3, 1]), n_vertices=5,
                                   symmetrize=True, merge_duplicates="first")
    graphs = {
        "grid 40x30": generators.grid2d(40, 30, device="gpu"),
        "kron 12": generators.kronecker(12, 16, device="gpu"),
        "rmat 11 directed": generators.rmat(11, 8, device="gpu", directed=True),
        "layered": layered([1, 64, 900, 900, 900, 300, 1100, 2047, 1, 3, 4000, 6000,
                            5000, 200, 9000, 7]).to("gpu"),
        "isolated source": isolated.to("gpu"),
    }
    checked = failed = 0
    for label, g in graphs.items():
        host = g.to("cpu")
        degrees = np.diff(host.indptr)
        sources = [int(np.argmax(degrees)), *pick_roots(host, 2, seed=7)]
        if label == "isolated source":
            sources = [0, 4, 1]
        for kind in ("persistent", "direction"):
            for name, run in runners_for(g, kind, small=True).items():
                for source in sources:
                    dist, parent = run(source, True)
                    d, p = dist.get(), parent.get()
                    try:
                        graph500_check(host.indptr, host.indices, source, d, p)
                        if not np.array_equal(d, scipy_distances(host, source)):
                            raise AssertionError("distances differ from SciPy's")
                        checked += 1
                    except AssertionError as exc:
                        failed += 1
                        say(f"small-graph check FAILED: {label} {kind} {name} from {source}: "
                            f"{exc}")
    say(f"small-graph checks: {checked} searches passed Graph500's checks and equal SciPy, "
        f"{failed} failed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer roots, smaller grid")
    parser.add_argument("--graphs", default="small,road,grid,kron,rmat",
                        help="also kronrel: the level profile of Kronecker's relabelled copy")
    args = parser.parse_args()
    wanted = set(args.graphs.split(","))
    cp = backend.cupy_module()
    say(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}; "
        f"gpu.py: barrier {gpu.BARRIER_MODE}, local_batch {gpu.LOCAL_BATCH}, "
        f"bitmap {gpu.FRONTIER_BITMAP}")
    if "small" in wanted:
        small_graph_checks()
    graphs: list[tuple[str, str, Callable[[], CSRGraph], int]] = []
    if "road" in wanted:
        for name in ("NY", "BAY", "COL"):
            path = testing.shared_path("data", "roads", f"{name}.gr.xz")
            if path is not None:
                graphs.append((f"road {name}", "persistent",
                               lambda p=path: graph_io.read_graph(p).to("gpu"),
                               8 if args.quick else 24))
    if "grid" in wanted:
        side = 2000 if args.quick else 5000
        graphs.append((f"grid2d {side}x{side}", "persistent",
                       lambda side=side: generators.grid2d(side, side, device="gpu"),
                       2 if args.quick else 3))
    if "kron" in wanted:
        scale = 18 if args.quick else 21
        graphs.append((f"kron {scale} ef16", "direction",
                       lambda scale=scale: generators.kronecker(scale, 16, device="gpu"),
                       16 if args.quick else 48))
    if "rmat" in wanted:  # the Merrill paper's rmat.2Mv.128Me (R-MAT 0.45/0.15/0.15)
        scale = 18 if args.quick else 21
        graphs.append((f"rmat {scale} ef32", "direction",
                       lambda scale=scale: generators.rmat(scale, 32, a=0.45, b=0.15, c=0.15,
                                                           device="gpu"),
                       8 if args.quick else 24))
    if "kronrel" in wanted:  # the levels of the search "auto" runs on Kronecker graphs
        scale = 18 if args.quick else 21
        kron = generators.kronecker(scale, 16, device="gpu")
        relabelled = gpu.workspace(kron).degree_relabelled()[0]
        spread = {"MG_BFS_SPREAD_QUEUE": int(gpu.SPREAD_QUEUE_RELABELLED)}
        profile_direction(f"kron {scale} ef16 relabelled", relabelled, spread)
        # One vertex at a time bottom-up; the flat-hub level fused.
        profile_direction(f"kron {scale} ef16 relabelled", relabelled,
                          {**spread, "MG_BFS_BU_BATCH": 1})
        profile_direction(f"kron {scale} ef16 relabelled", relabelled,
                          {**spread, "MG_BFS_FUSED_FLAT": 1})
        del kron, relabelled
    for label, kind, build, n_roots in graphs:
        try:
            g = build()
            compare(label, g, kind, n_roots, check_parents=g.n_edges <= 20_000_000)
            if kind == "persistent":
                overhead(label, g)
                if gpu.workspace(g).ell_width:
                    profile_persistent(label, g, min(n_roots, 3), ELL_AUTO)
                    profile_persistent(label, g, min(n_roots, 3),
                                       {**ELL_AUTO, "MG_BFS_IDLE_WAIT": 1})
                    if gpu.bitmap_bytes(g.n_vertices, gpu.workspace(g).ell_width, True):
                        profile_persistent(label, g, min(n_roots, 3),
                                           {**ELL_AUTO, "MG_BFS_IDLE_WAIT": 1,
                                            "MG_BFS_LOCAL_BITMAP": 1})
                else:
                    profile_persistent(label, g, min(n_roots, 3), {})
            else:
                profile_direction(label, g, {})
                profile_direction(label, g, FUSED_TD_OFF)
        except Exception as exc:  # one graph's failure (memory, data) does not stop the rest
            say(f"{label}: FAILED {type(exc).__name__}: {exc}")
        finally:
            g = None
            cp.get_default_memory_pool().free_all_blocks()
    return 0


if __name__ == "__main__":
    sys.exit(main())
