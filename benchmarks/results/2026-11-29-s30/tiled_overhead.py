# ruff: noqa: B023  (each lambda runs within its own loop iteration)
"""Session 30: where bfs()'s time goes beyond the tiled kernel on deep graphs: CUDA events
around (a) the tiled launch alone (_search on the tiled copy), (b) run_tiled (the launch,
the error word's read, the map back), (c) bfs(variant="tiled"), (d) bfs(variant="auto")
after its choice; parents on and off; 8 roots, medians. Not a benchmark: a record."""
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402
import road_like  # noqa: E402

from morphgpu import graph_io, testing  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402
from morphgpu.bfs.gpu import deep_choice, tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

GRAPHS = {
    "road COL": lambda: graph_io.read_graph(
        testing.shared_path("data", "roads", "COL.gr.xz")).to("gpu"),
    "delaunay 1M": lambda: road_like.delaunay(1 << 20, device="gpu"),
}


def timed(fn):
    s, e = cp.cuda.Event(), cp.cuda.Event()
    cp.cuda.runtime.deviceSynchronize()
    t0 = time.perf_counter()
    s.record()
    fn()
    host = time.perf_counter() - t0
    e.record()
    e.synchronize()
    return cp.cuda.get_elapsed_time(s, e), host * 1e3


for name, build in GRAPHS.items():
    g = build()
    ws = workspace(g)
    deg = cp.diff(g.indptr).get()
    roots = np.random.default_rng(3).choice(np.flatnonzero(deg > 0), 8, replace=False)
    bfs(g, int(roots[0]), variant="tiled")
    for _ in range(3):
        bfs(g, int(roots[0]), variant="auto")
    deep_choice.choose_now(ws, int(roots[0]), True)
    bfs(g, int(roots[0]), variant="auto", predecessors=True)
    shift = tiled._shift(ws, None)
    copy = tiled.tile_copy(ws, shift)
    inner = workspace(copy.graph)
    arms = {}
    for parents in (False, True):
        arms[f"launch parents={parents}"] = lambda r, p=parents: tiled._search(
            inner, int(copy.inverse_host[r]), p, shift, None, None, 16)
        arms[f"run_tiled parents={parents}"] = lambda r, p=parents: tiled.run_tiled(ws, int(r), p)
        arms[f"bfs tiled parents={parents}"] = lambda r, p=parents: bfs(
            g, int(r), variant="tiled", predecessors=p)
        arms[f"bfs auto parents={parents}"] = lambda r, p=parents: bfs(
            g, int(r), variant="auto", predecessors=p)
    res = {a: [] for a in arms}
    for r in roots:
        for a, fn in arms.items():
            res[a].append(timed(lambda: fn(r)))
    for a, v in res.items():
        print(f"graph={name} arm={a!r} gpu_ms={statistics.median(x[0] for x in v):.3f} "
              f"host_ms={statistics.median(x[1] for x in v):.3f}")
