#!/usr/bin/env python3
"""Small runs of the dynamic graph's kernels, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python3 scripts/dynamic_sanitize.py
    compute-sanitizer --tool racecheck python3 scripts/dynamic_sanitize.py

Insert and delete batches (the row lookup kernel), BFS on the paged layout by every
variant that runs there (direction-optimising, frontier classes immediate and deferred,
dynamic parallelism) and the incremental repair, each checked against SciPy. The exit
code is non-zero if any check fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from scipy.sparse import csgraph

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import backend  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402
from morphgpu.dynamic_graph import DynamicGraph  # noqa: E402

failures: list[str] = []


def case(name: str, ok: bool) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {name}", flush=True)
    if not ok:
        failures.append(name)


def reference(dg: DynamicGraph, source: int) -> np.ndarray:
    m = dg.to_scipy()
    m.data[:] = 1
    d = csgraph.shortest_path(m, directed=dg.directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def main() -> int:
    rng = np.random.default_rng(4)
    n = 600
    for directed in (False, True):
        dg = DynamicGraph(n, directed=directed, weighted=True, device="gpu", page_size=8)
        hubs = rng.integers(0, n, 5)
        u = np.concatenate([rng.integers(0, n, 2000), np.repeat(hubs, 300)])
        v = np.concatenate([rng.integers(0, n, 2000), rng.integers(0, n, 1500)])
        dg.insert_edges(u, v, rng.random(u.size))
        dg.delete_edges(u[::3], v[::3])
        dg.insert_edges(u[::5], v[::5], rng.random(u[::5].size))
        try:
            dg.check()
            case(f"updates directed={directed}", True)
        except AssertionError as exc:
            case(f"updates directed={directed}: {exc}", False)
        for variant in ("auto", "persistent", "beamer", "top-down", "frontier-classes",
                        "frontier-classes-deferred", "dynamic-parallelism"):
            r = bfs(dg, int(hubs[0]), variant=variant, predecessors=True)
            case(f"bfs {variant} directed={directed}",
                 bool((backend.to_host(r.distances) == reference(dg, int(hubs[0]))).all()))
        first = bfs(dg, int(hubs[0]), predecessors=True)
        dg.insert_edges(rng.integers(0, n, 40), rng.integers(0, n, 40))
        again = bfs(dg, int(hubs[0]), predecessors=True, previous=first)
        case(f"repair directed={directed}", again.incremental and bool(
            (backend.to_host(again.distances) == reference(dg, int(hubs[0]))).all()))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
