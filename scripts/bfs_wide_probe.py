"""The direction-optimising search (``beamer``) on wide graphs: an earlier direction.cu
against the tree's, in one process, roots interleaved, with per-level clocks.

    python3 scripts/bfs_wide_probe.py [--before .probe/bfs-before] [--roots 32]
        [--graphs kron21,kron22,uniform22] [--profile-roots 2] [--json out.json]

--before DIR holds an earlier tree's ``morphgpu/bfs/kernels/direction.cu`` (and the
``map_back.cuh`` beside it), its ``morphgpu/include`` headers and its
``morphgpu/bfs/gpu/direction.py`` (not in the repository; e.g. ``git archive <commit>
morphgpu/include morphgpu/bfs/kernels/direction.cu morphgpu/bfs/kernels/map_back.cuh
morphgpu/bfs/gpu/direction.py | tar -x -C DIR``). Its kernel is compiled against its own
headers with the defines main's modules.py gave it (BEFORE_DEFINES) and launched through its
own DirectionCall over the same workspace as the tree's.

Rows per graph, each timed with CUDA events around one call (the GPU idle before it):
``before`` and ``new`` (DirectionCall of each kernel: the launch and its result arrays),
``new bfs()`` (the whole public call, as benchmarks/bfs.py times it: from the second call
on a graph, its prepared path), ``new bfs(), full dispatch`` (the public call through its
full path, as every call went before the prepared path), ``new, relabel off`` (the tree's
kernel on the graph as given) and one per entry of VARIANTS (the tree's kernel with one
define varied). Each row also gives the host's median time from the call to its kernel
launch and to its return (perf_counter; every row launches through
direct_launch.PackedLaunch, which the probe stamps). GTEPS are Graph500's (undirected input
edges of the searched component, Kronecker duplicates as generated; harmonic mean over the
roots), as benchmarks/bfs.py counts them. Checks: every row's distances equal
``before``'s on every root and SciPy's on the first; on the first root every row's parents
are valid (each parent edge exists and is one level up), checked on the GPU.
``--profile-roots``: the tree's and the earlier kernel built with MG_BFS_PROFILE, block
0's clock per level (phase A, then phase B when not fused), in µs at the device's
reported clock rate.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402
import road_like  # noqa: E402
from bfs import harmonic_teps, pick_roots  # noqa: E402

from morphgpu import backend, barrier, direct_launch, generators, kernels  # noqa: E402
from morphgpu.bfs import api as bfs_api  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402
from morphgpu.bfs.gpu import direction, modules  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

# modules._direction_grid_on's defines at main 1ac73c1 (what the earlier kernel ran with).
BEFORE_DEFINES = {"MG_BFS_BLOCK": 512, "MG_BFS_SPREAD_QUEUE": 1, "MG_BFS_FUSED_FLAT": 0,
                  "MG_BFS_BU_BATCH": 2, "MG_BFS_BU_PROBE": 2}
# The tree's kernel with one change undone or varied (compile-time defines), each timed as
# a row.
VARIANTS: dict[str, dict[str, Any]] = {
    "new, bottom-up batch 2x2": {"MG_BFS_BU_BATCH": 2, "MG_BFS_BU_PROBE": 2},
}
GRAPHS = {
    "kron21": (lambda: generators.kronecker(21, 16, device="gpu"),
               lambda: road_like.kronecker_input_degrees(21, 16, device="gpu")),
    "kron22": (lambda: generators.kronecker(22, 16, device="gpu"),
               lambda: road_like.kronecker_input_degrees(22, 16, device="gpu")),
    "uniform22": (lambda: road_like.uniform_random(1 << 22, 16, device="gpu"), None),
}


def before_grid(before: Path, layout: tuple, profile: bool) -> barrier.PersistentGrid:
    """The earlier direction.cu compiled against its own headers (as kernels._load does
    for the package's files: defines in the source, the cooperative barrier)."""
    cp = backend.cupy_module()
    defines = {**dict(layout), **BEFORE_DEFINES, "MG_BARRIER_COOP": None}
    if profile:
        defines["MG_BFS_PROFILE"] = None
    path = before / "morphgpu" / "bfs" / "kernels" / "direction.cu"
    source = kernels.define_lines(defines) + f'#line 1 "{path}"\n' + path.read_text()
    module = cp.RawModule(code=source, options=(
        *kernels.BASE_OPTIONS, f"-I{before / 'morphgpu' / 'include'}",
        f"-I{before / 'morphgpu'}"), enable_cooperative_groups=True)
    module.compile()
    grid = barrier.PersistentGrid(module.get_function("bfs_direction_persistent"),
                                  block=BEFORE_DEFINES["MG_BFS_BLOCK"], mode="cooperative")
    grid.module = module
    return grid


def new_grid(layout: tuple, extra: dict[str, Any]) -> barrier.PersistentGrid:
    """The tree's direction.cu as modules.direction_grid builds it, with ``extra`` defines
    (a variant, or MG_BFS_PROFILE)."""
    if not extra:
        return modules.direction_grid(layout)
    grid = barrier.persistent_kernel(modules.DIRECTION_FILE, "bfs_direction_persistent",
                                     mode="cooperative", block=modules.DIRECTION_BLOCK,
                                     defines={**modules.direction_defines(layout), **extra})
    defines = {**modules.direction_defines(layout), **extra,
               **barrier.mode_defines("cooperative")}
    grid.module = kernels.load_module(modules.DIRECTION_FILE, defines=defines,
                                      cooperative=True)  # the same cached module
    return grid


def load_before_direction(before: Path, grids: dict) -> Any:
    """The earlier gpu/direction.py as a module of this package (its relative imports
    resolve here), its kernel grid taken from ``grids`` by layout."""
    path = before / "morphgpu" / "bfs" / "gpu" / "direction.py"
    spec = importlib.util.spec_from_file_location("morphgpu.bfs.gpu._direction_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.modules = types.SimpleNamespace(
        layout_key=modules.layout_key, csr_defines=modules.csr_defines,
        direction_grid=lambda layout: grids[layout])
    return module


def with_grid(call: Any, grid: barrier.PersistentGrid) -> Any:
    """A copy of a DirectionCall whose prepared launch runs ``grid``'s kernel (same
    arguments: a variant or profile build of the same file)."""
    if isinstance(call, direction.DirectionCall):
        return call.on_grid(grid)
    other = object.__new__(type(call))
    other.__dict__.update(call.__dict__)
    prepared = object.__new__(type(call.call))
    prepared.__dict__.update(call.call.__dict__)
    prepared.grid = grid
    prepared.fixed = {**call.call.fixed, "barrier_state": grid.state}
    prepared.packed = None
    other.call = prepared
    return other


def public_call(g: Any, dispatch: bool = False) -> Any:
    """bfs() on ``g`` as a DirectionCall-shaped callable (as benchmarks/bfs.py times it).
    ``dispatch``: through bfs()'s full path (argument checks, device and variant
    resolution, gpu.search), as every call went before the prepared path, by hiding the
    GPU package from bfs()'s first line."""
    def call(root: int, want_parents: bool) -> tuple[Any, Any, None]:
        if dispatch:
            bfs_api._gpu = None
        result = bfs(g, root, variant="beamer", device="gpu", predecessors=want_parents)
        return result.distances, result.predecessors, None
    return call


# Host clock at each packed launch (direction.cu's calls all launch through
# direct_launch.PackedLaunch), so a row's host time before its launch can be reported.
_launched: list[float] = []
_packed_launch = direct_launch.PackedLaunch.launch


def _stamped_launch(self: Any, *args: Any, **kwargs: Any) -> None:
    _launched.append(time.perf_counter())
    _packed_launch(self, *args, **kwargs)


direct_launch.PackedLaunch.launch = _stamped_launch


def timed_call(cp: Any, fn: Any) -> tuple[float, float, float, Any]:
    """(seconds between CUDA events around ``fn()`` with the GPU idle before it, host
    seconds from the call to its launch, host seconds of the whole call, its result)."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    _launched.clear()
    t0 = time.perf_counter()
    out = fn()
    t1 = time.perf_counter()
    stop.record()
    stop.synchronize()
    before_launch = (_launched[0] - t0) if _launched else float("nan")
    return cp.cuda.get_elapsed_time(start, stop) / 1e3, before_launch, t1 - t0, out


def parents_valid(cp: Any, g: Any, edge_keys: Any, root: int, dist: Any, parent: Any) -> bool:
    """Every reached vertex but the root has a parent one level up joined to it by an edge
    (edge_keys: the sorted row * n + column of every CSR entry); the root is its own."""
    n = g.n_vertices
    reached = cp.flatnonzero(dist >= 0)
    reached = reached[reached != root]
    p = parent[reached].astype(cp.int64)
    if int(parent[root]) != root or bool(((p < 0) | (p >= n)).any()):
        return False
    if not bool((dist[p] == dist[reached] - 1).all()):
        return False
    keys = reached.astype(cp.int64) * n + p  # (v, parent): the graph is symmetric
    at = cp.searchsorted(edge_keys, keys)
    at = cp.minimum(at, edge_keys.size - 1)
    return bool((edge_keys[at] == keys).all())


def scipy_distances(host: Any, root: int) -> np.ndarray:
    import scipy.sparse as sp  # noqa: PLC0415
    from scipy.sparse import csgraph  # noqa: PLC0415

    from morphgpu.bfs.order import distances_from_fifo  # noqa: PLC0415

    matrix = sp.csr_matrix((np.ones(host.indices.size), host.indices, host.indptr),
                           shape=host.shape)
    order, pred = csgraph.breadth_first_order(matrix, root, directed=True,
                                              return_predecessors=True)
    return distances_from_fifo(order, pred, host.n_vertices)


def profile_levels(cp: Any, grid: barrier.PersistentGrid, call: Any, root: int) -> dict:
    """One profiled search: block 0's clock stamps (direction.cu, MG_BFS_PROFILE) in µs."""
    stamps = cp.ndarray((256, 4), dtype=cp.uint64, memptr=grid.module.get_global("mg_bfs_profile"))
    stamps.fill(0)  # rows past this search's last level stay 0
    call(root, True)
    table = stamps.get().astype(np.int64)
    mhz = cp.cuda.runtime.getDeviceProperties(cp.cuda.runtime.getDevice())["clockRate"] / 1e3
    us = lambda cycles: round(float(cycles) / mhz, 1)  # noqa: E731
    start = table[0, 0]
    levels = []
    last = table[0, 2]
    for row in table[1:]:
        if row[0] == 0:
            break
        a_end = row[1] if row[1] else row[2]
        flags = int(row[3])
        levels.append({"dir": ("BU" if flags & 1 else "TD") + ("F" if flags & 2 else ""),
                       "n_f": flags >> 8, "A_us": us(a_end - row[0]),
                       "B_us": us(row[2] - row[1]) if row[1] else 0.0,
                       "us": us(row[2] - row[0])})
        last = row[2]
    return {"setup_us": us(table[0, 2] - start), "levels": levels,
            "tail_us": us(table[0, 3] - last) if table[0, 3] > last else None,
            "total_us": us(max(table[0, 3], last) - start)}


def probe_graph(name: str, args: argparse.Namespace, before: Path, out: dict) -> None:
    cp = backend.cupy_module()
    build, degrees_of = GRAPHS[name]
    t0 = time.perf_counter()
    g = build()
    input_degrees = degrees_of() if degrees_of is not None else None
    backend.synchronize()
    host = g.to("cpu")
    roots = pick_roots(host, args.roots)
    print(f"# {name}: n={g.n_vertices} m={g.n_edges} built in {time.perf_counter() - t0:.1f} s",
          flush=True)

    ws = workspace(g)
    ws.spare_results = {}  # the earlier DirectionCall's result arrays (gone from Workspace)
    layout = modules.layout_key(modules.csr_defines(g.indices.dtype, g.indptr.dtype))
    grids = {layout: before_grid(before, layout, False)}
    old_mod = load_before_direction(before, grids)
    new = direction.DirectionCall(ws, rule="beamer", use_cache=True, relabel="auto")
    calls = {
        "before": old_mod.DirectionCall(ws, rule="beamer", use_cache=True, relabel="auto"),
        "new": new,
        "new bfs()": public_call(g),
        "new bfs(), full dispatch": public_call(g, dispatch=True),
        "new, relabel off": direction.DirectionCall(ws, rule="beamer", use_cache=True,
                                                    relabel=False),
    }
    for label, extra in VARIANTS.items():
        if label in args.variant_list:
            calls[label] = with_grid(new, new_grid(layout, extra))
    # First calls, and the checks on the first root.
    reference = scipy_distances(host, roots[0])
    edge_keys = g.edge_sources().astype(cp.int64) * g.n_vertices + g.indices
    edge_keys.sort()
    for label, call in calls.items():
        dist, parent, _ = call(roots[0], True)
        if not np.array_equal(backend.to_host(dist), reference):
            raise AssertionError(f"{name}: {label} distances differ from SciPy's "
                                 f"(root {roots[0]})")
        if not parents_valid(cp, g, edge_keys, roots[0], dist, parent):
            raise AssertionError(f"{name}: {label} parents invalid (root {roots[0]})")
    del edge_keys
    print(f"# {name}: root {roots[0]}: every row's distances equal SciPy's, parents valid",
          flush=True)

    degrees = input_degrees if input_degrees is not None else g.degrees()
    times: dict[str, list[float]] = {label: [] for label in calls}
    host: dict[str, list[tuple[float, float]]] = {label: [] for label in calls}
    edges: list[float] = []
    for root in roots:
        dists = {}
        for label, call in calls.items():
            seconds, to_launch, call_s, (dist, _, _) = timed_call(
                cp, lambda c=call, r=root: c(r, True))
            times[label].append(seconds)
            host[label].append((to_launch, call_s))
            dists[label] = dist
        for label, dist in dists.items():
            if not bool(cp.array_equal(dist, dists["before"])):
                raise AssertionError(f"{name}: {label} distances differ from before's "
                                     f"(root {root})")
        reached = dists["before"] >= 0
        # Graph500's count: undirected input edges of the component (benchmarks/bfs.py)
        edges.append(float(degrees[reached].sum()) / 2)
    rows = {}
    base = float(np.mean(times["before"]))
    for label, ts in times.items():
        to_launch, call_s = np.median(np.array(host[label]), axis=0)
        rows[label] = {"mean_us": 1e6 * float(np.mean(ts)),
                       "median_us": 1e6 * float(np.median(ts)),
                       "gteps": harmonic_teps(edges, ts) / 1e9,
                       "x_before": base / float(np.mean(ts)),
                       "host_to_launch_us": 1e6 * float(to_launch),
                       "host_call_us": 1e6 * float(call_s)}
        print(f"{name:10s} {label:26s} mean {rows[label]['mean_us']:8.1f} us  median "
              f"{rows[label]['median_us']:8.1f} us  {rows[label]['gteps']:7.1f} GTEPS  "
              f"x{rows[label]['x_before']:.3f} vs before  host: launch at "
              f"{rows[label]['host_to_launch_us']:.1f} us, returns at "
              f"{rows[label]['host_call_us']:.1f} us (medians)", flush=True)
    out[name] = {"n": g.n_vertices, "m": g.n_edges, "roots": len(roots), "rows": rows}

    if args.profile_roots:
        pro_new = with_grid(new, new_grid(layout, {"MG_BFS_PROFILE": None}))
        pro_old = with_grid(calls["before"], before_grid(before, layout, True))
        out[name]["profile"] = []
        for root in roots[:args.profile_roots]:
            for label, call in (("before", pro_old), ("new", pro_new)):
                p = profile_levels(cp, call.call.grid, call, root)
                out[name]["profile"].append({"root": root, "kernel": label, **p})
                lv = "  ".join(f"L{i}:{x['dir']} n_f={x['n_f']} {x['A_us']}"
                               + (f"+{x['B_us']}" if x["B_us"] else "")
                               for i, x in enumerate(p["levels"]))
                print(f"  profile {name} {label:6s} root {root}: setup {p['setup_us']}  {lv}"
                      f"  tail {p['tail_us']}  total {p['total_us']} us", flush=True)
    del g, host, ws, calls, new
    cp.get_default_memory_pool().free_all_blocks()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, default=ROOT / ".probe" / "bfs-before")
    parser.add_argument("--graphs", default="kron21,kron22,uniform22")
    parser.add_argument("--roots", type=int, default=32)
    parser.add_argument("--profile-roots", type=int, default=2)
    parser.add_argument("--variants", default=";".join(VARIANTS),
                        help="rows of the tree's kernel with one change undone (';'-"
                             f"separated; default all of: {'; '.join(VARIANTS)}; '' none)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.variant_list = [v.strip() for v in args.variants.split(";") if v.strip()]
    unknown = set(args.variant_list) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; known: {list(VARIANTS)}")
    print(f"# {backend.device_name('gpu')}", flush=True)
    out: dict[str, Any] = {"device": backend.device_name("gpu")}
    try:
        for name in args.graphs.split(","):
            probe_graph(name.strip(), args, args.before.resolve(), out)
    finally:
        if args.json:
            args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
