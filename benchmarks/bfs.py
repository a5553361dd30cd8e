"""BFS: every GPU variant against SciPy's breadth_first_order, on the issue's graphs.

For each graph: random non-isolated roots (64; 8 with --quick); each variant's time per
root with CUDA events (one search per root after a warm-up); harmonic-mean TEPS counting
directed CSR entries out of reached vertices, and Graph500's count (undirected edges of
the component, half the directed count on symmetric graphs); microseconds per level; SciPy
on a prefix of the same roots (fewer: it is ~100x slower), run in this process; the ratio
of mean times on the roots both ran. One result per graph is checked with Graph500's
checks and every variant's distances are compared with it.

The couplings of the load-balanced paper (merge-path-separate/-ib/-bi/-hybrid), the
frontier classes and expand-contract with Merrill's culling ("expand-contract cull=all")
run only on graphs with wide frontiers (auto is not `persistent`).

Rows named "... measured-before" run the persistent / beamer kernels as they were before
the performance follow-up (its options off, the atomic-free barrier); "... <option>=..."
rows change one default of gpu.py, so each default's effect reads as a ratio of two rows.
"""

from __future__ import annotations

import time
from typing import Any

import harness
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import backend, generators
from morphgpu.bfs import gpu, graph500_check, variants
from morphgpu.csr import CSRGraph

GPU_VARIANTS = ["persistent", "expand-contract", "two-phase", "contract-expand", "hybrid",
                "merge-path", "direction-optimizing", "beamer", "async"]
# The load-balanced paper's couplings and the frontier classes: host-launched levels of
# three to four launches, made for wide frontiers (the paper itself loses on deep graphs),
# so they run on the graphs auto does not send to `persistent`, on half a slice each.
WIDE_ONLY_VARIANTS = ["merge-path-separate", "merge-path-ib", "merge-path-bi",
                      "merge-path-hybrid", "frontier-classes"]


def _graphs(quick: bool) -> list[tuple[str, Any]]:
    """(label, thunk building a GPU CSRGraph); road networks from the shared data."""
    out: list[tuple[str, Any]] = harness.road_graph_thunks("gpu")
    if quick:
        out += [
            ("grid2d 1000x1000", lambda: generators.grid2d(1000, 1000, device="gpu")),
            ("kron 18 ef16", lambda: generators.kronecker(18, 16, device="gpu")),
        ]
    else:
        out += [
            ("kron 21 ef16", lambda: generators.kronecker(21, 16, device="gpu")),
            ("grid2d 5000x5000", lambda: generators.grid2d(5000, 5000, device="gpu")),
            ("rmat 2M/128M", lambda: generators.rmat(21, 32, a=0.45, b=0.15, c=0.15,
                                                     device="gpu")),
            ("kron 20 ef16", lambda: generators.kronecker(20, 16, device="gpu")),
            ("grid3d 300^3", lambda: generators.grid3d(300, 300, 300, device="gpu")),
        ]
    return out


def _roots(host: CSRGraph, count: int, seed: int = 1) -> list[int]:
    degrees = np.diff(host.indptr)
    candidates = np.flatnonzero(degrees > 0)
    rng = np.random.default_rng(seed)
    return [int(v) for v in rng.choice(candidates, size=min(count, candidates.size),
                                       replace=False)]


def _harmonic_teps(edges: list[int], seconds: list[float]) -> float:
    rates = [e / s for e, s in zip(edges, seconds) if s > 0 and e > 0]
    return len(rates) / sum(1.0 / r for r in rates) if rates else 0.0


def bench_graph(label: str, g: CSRGraph, args: Any, record: harness.Record) -> None:
    cp = backend.cupy_module()
    host = g.to("cpu")
    n_roots = 8 if args.quick else 64
    roots = _roots(host, n_roots)
    ws = gpu.workspace(g)
    symmetric = not g.directed
    auto = gpu.choose(ws, "auto")
    n_scipy = min(len(roots), 2 if args.quick else 3)
    record.note(f"{label}: n={g.n_vertices} m={g.n_edges} (directed CSR entries), "
                f"max degree {ws.max_degree}, auto -> {auto}")
    reference = None
    runs: list[tuple[str, str, dict[str, Any]]] = [(v, v, {}) for v in GPU_VARIANTS]
    # The defaults (gpu.py) were chosen from earlier runs of these same rows; each row
    # below changes one of them, so every default keeps being measured against its
    # alternative. "measured-before" is the path before the performance follow-up.
    if auto == "persistent":
        runs += [("persistent measured-before", "persistent",
                  {"local_batch": False, "spread": False, "hysteresis": False,
                   "mode": "xiao-feng", "ell": False}),
                 ("persistent ell=off", "persistent", {"ell": False}),
                 ("persistent bitmap=off", "persistent", {"bitmap": False}),
                 ("persistent adaptive=off", "persistent", {"adaptive": False})]
        if not args.quick:
            runs += [("persistent enter_local=0", "persistent", {"enter_local": 0}),
                     ("persistent xiao-feng", "persistent", {"mode": "xiao-feng"}),
                     ("persistent local_batch=on", "persistent", {"local_batch": True}),
                     ("persistent spread=off", "persistent", {"spread": False}),
                     ("persistent hysteresis=off", "persistent", {"hysteresis": False})]
    if auto in ("beamer", "direction-optimizing"):
        runs += [("beamer measured-before", "beamer",
                  {"bitmap": False, "flat_hubs": False, "warp_reserve": False,
                   "mode": "xiao-feng", "sorted_rows": False}),
                 ("beamer sorted_rows=on", "beamer", {"sorted_rows": True}),
                 ("beamer relabel=on", "beamer", {"relabel": True}),
                 ("beamer map_back=launch", "beamer", {"map_back": "launch"}),
                 ("beamer fast=off", "beamer", {"fast": False}),
                 ("beamer trim=off", "beamer", {"trim": False}),
                 ("beamer bottom_up_batch=1x2", "beamer", {"bottom_up_batch": (1, 2)}),
                 ("beamer fused_flat=on", "beamer", {"fused_flat": True}),
                 ("beamer relabel=off", "beamer", {"relabel": False}),
                 ("beamer spread_queue=off", "beamer", {"spread_queue": False}),
                 ("beamer relabel=off spread_queue=off", "beamer",
                  {"relabel": False, "spread_queue": False}),
                 ("beamer flat_hubs=off", "beamer", {"flat_hubs": False}),
                 ("beamer warp_reserve=off", "beamer", {"warp_reserve": False}),
                 ("beamer bitmap=on", "beamer", {"bitmap": True}),
                 ("beamer warp-bottom-up", "beamer", {"warp_bottom_up": True})]
    half_slice: set[str] = set()
    if auto != "persistent":
        runs += [(v, v, {}) for v in WIDE_ONLY_VARIANTS]
        runs += [("expand-contract cull=all", "expand-contract", {"cull": "all"})]
        half_slice |= {tag for tag, _, _ in runs[-len(WIDE_ONLY_VARIANTS) - 1:]}
    if auto in ("beamer", "direction-optimizing") and not args.quick:
        runs += [("direction-optimizing no-hub-cache", "direction-optimizing",
                  {"use_cache": False}),
                 ("direction-optimizing host-loop", "direction-optimizing", {"loop": "host"}),
                 ("direction-optimizing relabel=off spread_queue=off", "direction-optimizing",
                  {"relabel": False, "spread_queue": False}),
                 ("direction-optimizing xiao-feng", "direction-optimizing",
                  {"mode": "xiao-feng"}),
                 ("beamer host-loop", "beamer", {"loop": "host"})]
    full_check = g.n_edges <= 20_000_000
    # Each variant gets a slice of time; it always runs SciPy's roots (the first n_scipy),
    # so the ratio compares the same searches.
    per_variant_s = args.slice or (0.5 if args.quick else 2.0)
    mean_ms: dict[str, float] = {}
    half_slice |= {tag for tag, _, options in runs if options}
    for tag, name, options in runs:
        def search(root: int, name: str = name, options: dict = options) -> Any:
            return gpu.run(g, root, variant=name, want_parents=True, **options)

        search(roots[0])  # warm-up: compile, workspace
        # Rows with options (the comparisons) get half a slice, to stay in the time budget.
        deadline = time.perf_counter() + (per_variant_s / 2 if tag in half_slice
                                          else per_variant_s)
        times, edges, levels = [], [], []
        for root in roots:
            holder: dict[str, Any] = {}
            times.append(harness.gpu_seconds(lambda r=root, h=holder: h.update(out=search(r)),
                                             repeat=1, warmup=0))
            dist, parent, _ = holder["out"]
            edges.append(gpu.edges_out_of_reached(g, dist))
            levels.append(int(dist.max()) + 1)
            if reference is None:
                # Graph500's checks; on the largest graphs distances only (the parent-edge
                # check sorts every edge on the host).
                graph500_check(host.indptr, host.indices, root, dist.get(),
                               parent.get() if full_check else None)
                reference = (root, dist.copy())
            elif root == reference[0] and not bool(cp.array_equal(dist, reference[1])):
                raise AssertionError(f"{label}: {tag} distances differ from the reference")
            if time.perf_counter() > deadline and len(times) >= n_scipy:
                break
        teps = _harmonic_teps(edges, times)
        mean_s = float(np.mean(times))
        mean_ms[tag] = 1e3 * float(np.mean(times[:n_scipy]))
        record.row(graph=label, variant=tag, roots=len(times), mean_ms=mean_s * 1e3,
                   levels=float(np.mean(levels)),
                   us_per_level=mean_s * 1e6 / max(float(np.mean(levels)), 1.0),
                   gteps=teps / 1e9, gteps_graph500=teps / 1e9 / (2 if symmetric else 1))
    # float64 data: SciPy converts any other dtype to float64 inside every call, which
    # would charge the baseline for a copy it need not make.
    matrix = sp.csr_matrix((np.ones(host.n_edges, dtype=np.float64), host.indices,
                            host.indptr), shape=host.shape)
    scipy_times = []
    for root in roots[:n_scipy]:
        t0 = time.perf_counter()
        csgraph.breadth_first_order(matrix, root, directed=True, return_predecessors=True)
        scipy_times.append(time.perf_counter() - t0)
    scipy_ms = 1e3 * float(np.mean(scipy_times))
    best = min(mean_ms, key=mean_ms.__getitem__)
    record.row(graph=label, variant="scipy", roots=n_scipy, mean_ms=scipy_ms, best=best,
               best_vs_scipy=scipy_ms / mean_ms[best], auto=auto,
               auto_vs_scipy=scipy_ms / mean_ms[auto], auto_vs_best=mean_ms[best] / mean_ms[auto])


def run(args: Any, record: harness.Record) -> None:
    if args.side != "gpu":
        record.note("no GPU: timing the CPU path only")
        from morphgpu.bfs import bfs  # noqa: PLC0415

        grid = generators.grid2d(300, 300, device="cpu")
        t = harness.cpu_seconds(lambda: bfs(grid, 0, device="cpu"))
        record.row(graph="grid2d 300x300", variant="cpu-auto", mean_ms=t * 1e3)
        return
    record.note("ours: up to 64 roots (8 quick) per variant, at least SciPy's and at most "
                "2 s (0.5 s quick) of searches per variant; SciPy: the first 3 roots (2 quick); "
                "ratios = SciPy mean / ours on those same roots")
    record.note(f"variants implemented: {variants.names()}; missing: "
                f"{sorted(set(variants.names(implemented_only=False)) - set(variants.names()))}")
    budget = time.perf_counter() + (args.budget or (35 if args.quick else 140))
    wanted = [w.strip() for w in (args.graphs or "").split(",") if w.strip()]
    for label, build in _graphs(args.quick):
        if wanted and not any(w in label for w in wanted):
            continue
        if time.perf_counter() > budget:
            record.note(f"{label}: skipped (time budget spent)")
            continue
        try:
            t0 = time.perf_counter()
            g = build()
            backend.synchronize()
            record.note(f"{label}: built in {time.perf_counter() - t0:.1f} s")
        except Exception as exc:  # a generator that cannot build this size is reported
            record.note(f"{label}: not built ({type(exc).__name__}: {exc})")
            continue
        bench_graph(label, g, args, record)
        del g
        backend.cupy_module().get_default_memory_pool().free_all_blocks()


def _add_args(parser: Any) -> None:
    parser.add_argument("--budget", type=float, default=None,
                        help="seconds after which no further graph is started")
    parser.add_argument("--graphs", default=None,
                        help="comma-separated parts of graph labels to run (default: all), "
                             "e.g. 'kron 21,rmat'")
    parser.add_argument("--slice", type=float, default=None,
                        help="seconds of searches per variant (default 2, 0.5 with --quick; "
                             "rows with options get half)")


if __name__ == "__main__":
    harness.main("bfs", run, _add_args)
