"""Deep graphs (issue 22): main's persistent kernel against this tree's variants, in one
process, on Delaunay graphs of random points, grids with deleted edges, a full grid and a
shared road network.

    python3 scripts/bfs_deep_probe.py [--graphs delaunay-1M,grid-4000] [--roots 6]
                                      [--before .probe/bfs-deep-before] [--json out.json]
                                      [--variants persistent,async,tiled]

--before DIR (optional: without it, or where it does not exist, the two "main" rows are
left out) holds main's persistent.cu as it was before the deep-graph work (copies kept
outside the repository's history: `git show 1ac73c1:morphgpu/bfs/kernels/persistent.cu`)
and main's traversal/expand.cuh of then (`git show 1ac73c1:morphgpu/include/morphgpu/
traversal/expand.cuh > DIR/expand.cuh`; this tree's lost the lane-per-row grid levels main
calls); it is compiled from a temporary copy that includes that expand.cuh (this tree's
other headers) and launched as main launched it. The row "main kernel, tree launcher"
launches that same kernel through this tree's run_persistent: equal to "main persistent"
means the launch path costs nothing, so a gap between main's and this tree's rows is their
kernels' (the 2026-11-26 runs had this tree's lane-per-row form 0.85-0.90x main's on
Delaunay graphs with near-identical machine code).
--variants keeps only the rows whose labels are listed (default: all). The ``tiled`` rows
(bfs/gpu/tiled.py: default launch, a horizon of tiled.HORIZON levels per round; no
horizon) also report,
per search, the kernel's rounds, tiles processed, local levels summed over tiles and
remote labels lowered (tiled.last_stats), and the copy's tile count.
Per graph: ms per search and us per level of each variant (CUDA events around the whole
call, parents asked for, mean over the roots; levels = the search's largest label + 1);
the variants run in a rotated order at each root (root i starts at variant i), so no
variant always follows the same one (the 2026-11-26 run had this tree's persistent 0.87-0.90x
main's on Delaunay graphs with the same machine code: compiled SASS identical but for
register names, so the order was suspect; run 2 rotated it and kept the gap). Per-root
times are in the JSON. The
locality-relabelled copy's preparation time is reported apart (not in any search), after
a copy of a small graph has been built once, so it leaves out first-use compiles (the
first run's 10.96 s on Delaunay 1M against 0.09 s on 4M); the warm-up's own seconds are
printed. Every variant's distances equal to main's persistent on every root and to SciPy's
on the first, and parents one level up. With the profile build (MG_BFS_PROFILE) of this
tree's persistent kernel, one root: rounds of each kind and block 0's cycles per grid
round and in its barrier.
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402

from morphgpu import backend, barrier, generators, kernels  # noqa: E402
from morphgpu.bfs import gpu  # noqa: E402
from morphgpu.bfs.gpu import (  # noqa: E402
    asynchronous,
    launch,
    modules,
    persistent,
    relabel,
    tiled,
)
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

GRAPHS: dict[str, Callable[[], Any]] = {}


def _graphs() -> None:
    import harness  # noqa: PLC0415
    import road_like  # noqa: PLC0415

    GRAPHS.update({
        "delaunay-1M": lambda: road_like.delaunay(1_000_000, device="gpu"),
        "delaunay-4M": lambda: road_like.delaunay(4_000_000, device="gpu"),
        "grid-del-2000": lambda: road_like.grid_with_deletions(2000, 2000, device="gpu"),
        "grid-del-4000": lambda: road_like.grid_with_deletions(4000, 4000, device="gpu"),
        "grid-4000": lambda: generators.grid2d(4000, 4000, device="gpu"),
    })
    for label, thunk in harness.road_graph_thunks("gpu"):
        if label.endswith("COL"):
            GRAPHS["road-COL"] = thunk


def persistent_defines(g: Any, ws: Any, profile: bool = False) -> tuple[dict, int]:
    width = ws.ell_width
    bits = persistent.bitmap_bytes(g.n_vertices, width)
    defines = {**modules.csr_defines(g.indices.dtype, g.indptr.dtype),
               "MG_BFS_BLOCK": modules.PERSISTENT_BLOCK, "MG_BFS_LOCAL_CAP": modules.LOCAL_CAP,
               "MG_BFS_ELL_K": width, "MG_BFS_IDLE_WAIT": 1}
    if bits:
        defines["MG_BFS_LOCAL_BITMAP"] = 1
    if profile:
        defines["MG_BFS_PROFILE"] = 1
    return defines, bits


@functools.cache
def before_source(before: Path) -> Path:
    """main's persistent.cu (``before``/persistent.cu) as a temporary copy that includes
    main's expand.cuh of then (``before``/expand.cuh, fetched with git where missing)."""
    expand = before / "expand.cuh"
    if not expand.exists():
        commit = (before / "MAIN_COMMIT").read_text().strip()
        try:
            text = subprocess.run(
                ["git", "-C", str(REPO), "show",
                 f"{commit}:morphgpu/include/morphgpu/traversal/expand.cuh"],
                check=True, capture_output=True, text=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            raise SystemExit(f"{expand} missing and git could not give it ({exc}); run "
                             f"git show {commit}:morphgpu/include/morphgpu/traversal/"
                             f"expand.cuh > {expand}") from exc
        expand = Path(tempfile.mkdtemp()) / "expand.cuh"
        expand.write_text(text)
    source = (before / "persistent.cu").read_text()
    include = "#include <morphgpu/traversal/expand.cuh>"
    if include not in source:
        raise SystemExit(f"{before / 'persistent.cu'} does not include {include}")
    out = Path(tempfile.mkdtemp()) / "persistent_main.cu"
    out.write_text(source.replace(include, f'#include "{expand.resolve()}"'))
    return out


class BeforePersistent:
    """main's persistent.cu, launched as main's gpu/persistent.py launches it."""

    def __init__(self, path: Path, ws: Any) -> None:
        g = ws.g
        self.ws = ws
        self.grid = before_grid(path, ws)
        grid = self.grid
        self.call = persistent.prepare(
            grid, (g.indptr, g.indices), queues=ws.queues, tails=ws.tails, ctrl=ws.ctrl,
            n=g.n_vertices, enter_local=persistent.ENTER_LOCAL, max_degree=ws.max_degree,
            ell=ws.ell() if ws.ell_width else None)
        self.calls = 0
        self.widest = 0

    def __call__(self, source: int) -> tuple[Any, Any]:
        ws, g, cp = self.ws, self.ws.g, self.ws.cp
        self.calls += 1  # main re-reads the widest frontier at its 2nd, 4th, 8th, ... call
        if self.calls >= 2 and self.calls & (self.calls - 1) == 0:
            self.widest = int(ws.ctrl[persistent.CTRL_WIDEST_FRONTIER].get())
        widest = self.widest
        blocks = launch.grid_blocks(self.call.grid, g.n_vertices, widest=widest)
        dist = cp.empty(g.n_vertices, dtype=cp.int32)
        parent = cp.empty(g.n_vertices, dtype=g.indices.dtype)
        self.call(blocks, dist=dist, parent=parent, source=g.indices.dtype.type(source))
        return dist, parent


def before_grid(path: Path, ws: Any) -> Any:
    defines, bits = persistent_defines(ws.g, ws)
    return barrier.persistent_kernel(str(path), "bfs_persistent", mode="cooperative",
                                     block=modules.PERSISTENT_BLOCK, defines=defines,
                                     shared_mem=bits)


def with_options(options: int, fn: Callable[[], Any]) -> Any:
    """fn() with persistent.OPTIONS set to ``options`` (prepared launches key on it)."""
    saved = persistent.OPTIONS
    persistent.OPTIONS = options
    try:
        return fn()
    finally:
        persistent.OPTIONS = saved


# An option bit neither kernel reads: the tree's launch cache keys on OPTIONS, so the
# main-kernel-through-the-tree's-launcher row gets launches of its own.
OPT_UNREAD = 1 << 20


def variants(g: Any, ws: Any, before: Path | None) -> dict[str, Callable[[int], Any]]:
    out: dict[str, Callable[[int], Any]] = {}
    if before is not None:
        main_source = before_source(before)
        out["main persistent"] = BeforePersistent(main_source, ws)
        main_grid = out["main persistent"].grid

        def main_through_tree(s: int) -> Any:
            saved = modules.persistent_grid
            modules.persistent_grid = lambda *args, **kwargs: main_grid
            try:
                return with_options(persistent.OPTIONS | OPT_UNREAD,
                                    lambda: persistent.run_persistent(ws, s, True,
                                                                      relabel=False))
            finally:
                modules.persistent_grid = saved

        out["main kernel, tree launcher"] = main_through_tree
    out["persistent"] = lambda s: persistent.run_persistent(ws, s, True, relabel=False)
    out["persistent relabelled"] = lambda s: persistent.run_persistent(ws, s, True,
                                                                      relabel=True)
    out["async"] = lambda s: asynchronous.run_async(ws, s, True)
    out["auto"] = lambda s: gpu.run(g, s, variant="auto", want_parents=True)[:2]
    out["tiled"] = lambda s: tiled.run_tiled(ws, s, True)
    out["tiled no horizon"] = lambda s: tiled.run_tiled(ws, s, True, horizon=0)
    return out


def tiled_stats(ws: Any) -> dict[str, int]:
    """The last tiled search's counters (on the copy's workspace) and the copy's tiles."""
    inner = tiled.searched_workspace(ws)
    stats = tiled.last_stats(inner)
    stats["n_tiles"] = -(-inner.g.n_vertices // max(stats.get("tile_vertices", 1), 1))
    return stats


def timed(cp: Any, fn: Callable[[], Any]) -> tuple[Any, float]:
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    out = fn()
    stop.record()
    stop.synchronize()
    return out, cp.cuda.get_elapsed_time(start, stop)


def scipy_reference(g: Any, root: int) -> np.ndarray:
    from scipy.sparse import csgraph  # noqa: PLC0415

    from morphgpu.bfs.order import distances_from_fifo  # noqa: PLC0415

    host = g.to("cpu")
    matrix = host.to_scipy()
    order, pred = csgraph.breadth_first_order(matrix, root, directed=True,
                                              return_predecessors=True)
    return distances_from_fifo(order, pred, host.n_vertices)


def parents_ok(cp: Any, dist: Any, parent: Any, source: int) -> bool:
    reached = dist > 0
    p = parent[reached].astype(cp.int64)
    return bool(cp.all(dist[p] == dist[reached] - 1)) and int(parent[source]) == source


def clock_mhz(cp: Any) -> float:
    """The SM clock the profile's cycles are divided by (the device's rated clock)."""
    device = cp.cuda.runtime.getDevice()
    try:
        return cp.cuda.runtime.deviceGetAttribute(13, device) / 1e3  # cudaDevAttrClockRate
    except Exception:  # noqa: BLE001
        return float(cp.cuda.runtime.getDeviceProperties(device).get("clockRate", 1.98e6)) / 1e3


def profile(g: Any, ws: Any, source: int, options: int | None = None) -> dict[str, Any]:
    """One search by the MG_BFS_PROFILE build of this tree's persistent.cu (block 0's
    counters: PROFILE_* in the kernel), with persistent.OPTIONS or ``options``."""
    if options is not None:
        return with_options(options, lambda: profile(g, ws, source))
    cp = ws.cp
    defines, bits = persistent_defines(g, ws, profile=True)
    grid = barrier.persistent_kernel(modules.PERSISTENT_FILE, "bfs_persistent",
                                     mode="cooperative", block=modules.PERSISTENT_BLOCK,
                                     defines=defines, shared_mem=bits)
    module = kernels.load_module(modules.PERSISTENT_FILE,
                                 defines={**defines, **barrier.mode_defines("cooperative")},
                                 cooperative=True)
    call = persistent.prepare(
        grid, (g.indptr, g.indices), queues=ws.queues, tails=ws.tails, ctrl=ws.ctrl,
        n=g.n_vertices, enter_local=persistent.ENTER_LOCAL, max_degree=ws.max_degree,
        ell=ws.ell() if ws.ell_width else None)
    widest = int(ws.ctrl[persistent.CTRL_WIDEST_FRONTIER].get())
    blocks = launch.grid_blocks(grid, g.n_vertices, widest=widest)
    dist = cp.empty(g.n_vertices, dtype=cp.int32)
    call(blocks, dist=dist, parent=launch.NULL, source=g.indices.dtype.type(source))
    cp.cuda.get_current_stream().synchronize()
    ptr = module.get_global("mg_bfs_profile")
    words = cp.ndarray((8,), dtype=cp.uint64, memptr=ptr).get().astype(np.int64)
    local_rounds, local_levels, grid_rounds, give_ups, local_c, grid_c, bar_c, total_c = words
    mhz = clock_mhz(cp)
    per = max(int(grid_rounds), 1)
    return {
        "blocks": blocks, "levels": int(dist.max()) + 1, "local_rounds": int(local_rounds),
        "local_levels": int(local_levels), "grid_rounds": int(grid_rounds),
        "give_ups": int(give_ups), "clock_mhz": mhz,
        "us_per_local_level": float(local_c) / max(int(local_levels), 1) / mhz,
        "us_per_grid_round": float(grid_c) / per / mhz,
        "us_barrier_per_grid_round": float(bar_c) / per / mhz,
        "total_ms": float(total_c) / mhz / 1e3,
    }


def probe(name: str, build: Callable[[], Any], n_roots: int, before: Path | None,
          do_profile: bool, keep: list[str]) -> dict[str, Any]:
    cp = backend.cupy_module()
    t0 = time.perf_counter()
    g = build()
    cp.cuda.get_current_stream().synchronize()
    build_s = time.perf_counter() - t0
    ws = workspace(g)
    deg = cp.diff(g.indptr)
    candidates = cp.flatnonzero(deg > 0).get()
    rng = np.random.default_rng(22)
    roots = [int(r) for r in rng.choice(candidates, size=min(n_roots, candidates.size),
                                        replace=False)]
    row: dict[str, Any] = {"graph": name, "n": g.n_vertices, "m": g.n_edges,
                           "max_degree": ws.max_degree, "ell_width": ws.ell_width,
                           "build_s": round(build_s, 2), "roots": roots}
    print(f"== {name}: n={g.n_vertices} m={g.n_edges} max degree {ws.max_degree} "
          f"(built in {build_s:.1f} s)", flush=True)
    runs = variants(g, ws, before)
    if keep:
        runs = {k: v for k, v in runs.items() if k in keep}
    # Warm-up on the first root: compiles, the relabelled copy (timed apart), auto's second
    # call (its copy decision).
    first_s: dict[str, float] = {}
    failed: dict[str, str] = {}
    for label, fn in runs.items():
        t = time.perf_counter()
        try:
            fn(roots[0])
            if label == "auto":
                fn(roots[0])
            cp.cuda.get_current_stream().synchronize()
        except Exception as exc:  # noqa: BLE001  (report, go on with the others)
            failed[label] = f"{type(exc).__name__}: {exc}"
            print(f"   {label}: FAILED {failed[label]}", flush=True)
        first_s[label] = time.perf_counter() - t
    runs = {k: v for k, v in runs.items() if k not in failed}
    copy = relabel.preparation(ws)
    if copy is not None:
        row["relabel_prep_s"] = round(copy.seconds, 4)
        row["wavefront_locality_given"] = round(copy.locality_given, 4)
        row["wavefront_locality_copy"] = round(copy.locality_copy, 4)
        row["auto_uses_copy"] = relabel.serves_better(copy)
    prep = {1 << sh: round(c.seconds, 3) for sh in range(tiled.TILE_MIN_SHIFT,
                                                          tiled.TILE_LIMIT_SHIFT + 1)
            if (c := tiled.preparation(ws, sh)) is not None}
    if prep:
        row["tiled_copy_prep_s"] = prep
        print(f"   tiled copies (tile size: seconds, landmark copy included): {prep}",
              flush=True)
    times: dict[str, list[float]] = {k: [] for k in runs}
    counters: dict[str, list[dict[str, int]]] = {k: [] for k in runs if k.startswith("tiled")}
    reference = next(k for k in ("main persistent", "persistent", *runs) if k in runs)
    levels: list[int] = []
    equal: dict[str, bool] = {k: True for k in runs}
    parents: dict[str, bool] = {k: True for k in runs}
    labels = list(runs)
    for i, root in enumerate(roots):
        dists: dict[str, Any] = {}
        turn = i % len(labels)
        for label in labels[turn:] + labels[:turn]:
            (dist, parent), ms = timed(cp, lambda fn=runs[label], root=root: fn(root))
            times[label].append(ms)
            if label in counters:
                counters[label].append(tiled_stats(ws))
            dists[label] = dist
            parents[label] &= parents_ok(cp, dist, parent, root)
            del parent
        ref = dists[reference]
        levels.append(int(ref.max()) + 1)
        if i == 0:
            sp = scipy_reference(g, root)
            row["scipy_equal_first_root"] = bool(np.array_equal(ref.get(), sp))
        for label, dist in dists.items():
            equal[label] &= bool(cp.array_equal(dist, ref))
        del dists, ref
    row["levels"] = levels
    row["variants"] = {}
    base = float(np.mean(times[reference]))
    row["baseline"] = reference
    for label in runs:
        ms = np.asarray(times[label])
        per_level = ms * 1e3 / np.asarray(levels)
        entry = {"ms_mean": round(float(ms.mean()), 4), "us_per_level": round(
            float(per_level.mean()), 3), "x_baseline": round(base / float(ms.mean()), 3),
                 "equal_to_baseline": equal[label], "parents_ok": parents[label],
                 "first_call_s": round(first_s[label], 3),
                 "ms_per_root": [round(t, 4) for t in times[label]]}
        extra = ""
        if counters.get(label):
            per = {k: float(np.mean([c[k] for c in counters[label]]))
                   for k in counters[label][0]}
            entry["tiled_per_search"] = per
            mhz = clock_mhz(cp)
            tiles, rounds = max(per["tiles"], 1), max(per["rounds"], 1)
            us = {"load_us_per_tile": per["load_cycles"] / tiles / mhz,
                  "us_per_local_level": per["level_cycles"] / max(per["levels"], 1) / mhz,
                  "write_us_per_tile": per["write_cycles"] / tiles / mhz,
                  "barrier_us_per_round": per["barrier_cycles"] / rounds / mhz,
                  "us_per_round": per["loop_cycles"] / rounds / mhz}
            entry["tiled_us"] = {k: round(v, 3) for k, v in us.items()}
            extra = (f"  rounds {per['rounds']:.0f} tiles {per['tiles']:.0f}/{per['n_tiles']:.0f}"
                     f" levels/tile {per['levels'] / tiles:.1f}"
                     f" remote {per['remote_lowered']:.0f} T={per['tile_vertices']:.0f};"
                     f" us: load/tile {us['load_us_per_tile']:.2f}"
                     f" local level {us['us_per_local_level']:.3f}"
                     f" write/tile {us['write_us_per_tile']:.2f}"
                     f" barrier/round {us['barrier_us_per_round']:.2f}"
                     f" round {us['us_per_round']:.2f}")
        row["variants"][label] = entry
        print(f"   {label:28s} {entry['ms_mean']:9.3f} ms  {entry['us_per_level']:7.3f} us/level"
              f"  x{entry['x_baseline']:.3f} vs {reference}  equal={equal[label]}"
              f" parents={parents[label]}{extra}", flush=True)
    if "async" in runs:
        row["async stats (last root)"] = asynchronous.last_stats(ws)
    row["failed"] = failed
    print(f"   levels {levels}; SciPy equal on the first root: "
          f"{row.get('scipy_equal_first_root')}; relabel prep "
          f"{row.get('relabel_prep_s')} s, vertices per level and line "
          f"{row.get('wavefront_locality_given')} -> {row.get('wavefront_locality_copy')}",
          flush=True)
    if do_profile:
        try:
            row["profile_given"] = profile(g, ws, roots[0])
            print(f"   profile (given ids): {row['profile_given']}", flush=True)
            if copy is not None and copy.graph is not None:
                inner = workspace(copy.graph)
                row["profile_relabelled"] = profile(copy.graph, inner,
                                                    int(copy.inverse_host[roots[0]]))
                print(f"   profile (relabelled): {row['profile_relabelled']}", flush=True)
        except Exception as exc:  # noqa: BLE001
            row["profile_error"] = f"{type(exc).__name__}: {exc}"
            print(f"   profile failed: {row['profile_error']}", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default="delaunay-1M,grid-del-2000,grid-4000,road-COL,"
                        "delaunay-4M,grid-del-4000")
    parser.add_argument("--roots", type=int, default=6)
    parser.add_argument("--before", type=Path, default=REPO / ".probe" / "bfs-deep-before")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--variants", default="",
                        help="comma-separated row labels to keep (default: all)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cp = backend.cupy_module()
    print(f"device: {backend.gpu_properties()['name']}", flush=True)
    _graphs()
    t = time.perf_counter()
    small_graph = generators.grid2d(300, 200, device="gpu")  # the workspace holds it weakly
    small = workspace(small_graph)
    persistent.run_persistent(small, 0, True, relabel=True)
    cp.cuda.get_current_stream().synchronize()
    print(f"relabel warm-up (first-use compiles; a 300x200 grid's copy): "
          f"{time.perf_counter() - t:.2f} s, of which the copy's build "
          f"{relabel.preparation(small).seconds:.2f} s", flush=True)
    del small, small_graph
    before = args.before.resolve() if args.before.is_dir() else None
    if before is None:
        print(f"no {args.before}: main's rows left out; baseline persistent", flush=True)
    keep = [v.strip() for v in args.variants.split(",") if v.strip()]
    rows = []
    for name in [w.strip() for w in args.graphs.split(",") if w.strip()]:
        if name not in GRAPHS:
            print(f"== {name}: not available", flush=True)
            continue
        rows.append(probe(name, GRAPHS[name], args.roots, before, not args.no_profile,
                          keep))
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1, default=str))
        gpu.workspace_module.workspaces.clear()
        cp.get_default_memory_pool().free_all_blocks()
    summary(rows)


def summary(rows: list[dict[str, Any]]) -> None:
    """One line per (graph, variant): ms per search, us per level, the ratio against the
    graph's baseline, exactness, and the tiled kernel's rounds and tiles per search."""
    print(f"{'graph':15s} {'variant':22s} {'ms':>9s} {'us/lvl':>7s} {'x base':>7s} ok "
          f"{'rounds':>7s} {'tiles':>8s} {'of':>7s}", flush=True)
    for row in rows:
        for label, e in row["variants"].items():
            t = e.get("tiled_per_search", {})
            ok = "y" if e["equal_to_baseline"] and e["parents_ok"] else "N"
            print(f"{row['graph']:15s} {label:22s} {e['ms_mean']:9.3f} {e['us_per_level']:7.3f}"
                  f" {e['x_baseline']:7.3f} {ok:2s} {t.get('rounds', 0):7.0f}"
                  f" {t.get('tiles', 0):8.0f} {t.get('n_tiles', 0):7.0f}", flush=True)


if __name__ == "__main__":
    main()
