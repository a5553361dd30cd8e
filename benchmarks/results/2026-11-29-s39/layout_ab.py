"""Session 39: the tiled copy's layout, reorder.cell_layout (cells of T/4 packed 4 to a
tile, as in the package) against reorder.relaxed_cell_layout (Lloyd-relaxed cells of
3T/4), for bfs() tiled and overlay; one process, two copies of each graph (one per
layout: the copies are cached per graph), the same roots, labels compared on every root.
Prints ms per search (distances), us per level, the copies' preparation and the
overlay's size and rounds.
Usage: python3 layout_ab.py [--more]"""
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402
from harness import event_seconds, road_graph_thunks  # noqa: E402

from morphgpu import backend, generators, reorder  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402
from morphgpu.bfs.gpu import overlay, tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402
from morphgpu.csr import CSRGraph  # noqa: E402

GRAPHS = {
    "delaunay 1M": lambda: road_like.delaunay(1_000_000, device="gpu"),
    "grid-del 1000^2": lambda: road_like.grid_with_deletions(1000, 1000, device="gpu"),
}
MORE = {
    "delaunay 4M": lambda: road_like.delaunay(4_000_000, device="gpu"),
    "grid 4000^2": lambda: generators.grid2d(4000, 4000, device="gpu"),
    "grid-del 3000^2": lambda: road_like.grid_with_deletions(3000, 3000, device="gpu"),
}
PACKAGE = tiled._layout


def relaxed(g, tile):
    return reorder.relaxed_cell_layout(g, tile * 3 // 4, tile)


def main() -> None:
    cp = backend.cupy_module()
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    graphs = dict(GRAPHS)
    if "--more" in sys.argv:
        graphs.update(road_graph_thunks("gpu"))
        graphs.update(MORE)
    for label, make in graphs.items():
        g0 = make()
        copies = {"cells": g0, "relaxed": CSRGraph(g0.indptr.copy(), g0.indices.copy(), None,
                                                   g0.n_vertices, g0.directed)}
        degree = cp.asnumpy(cp.diff(g0.indptr))
        roots = [int(r) for r in np.random.default_rng(1).choice(np.flatnonzero(degree), 6)]
        for name, g in copies.items():
            tiled._layout = PACKAGE if name == "cells" else relaxed
            for variant in ("tiled", "overlay"):
                t0 = time.perf_counter()
                bfs(g, roots[0], variant=variant, device="gpu").distances.get()
                first = time.perf_counter() - t0
                stats = overlay.last_stats(workspace(g)) if variant == "overlay" else {}
                copy = tiled.preparation(workspace(g), overlay.SHIFT)
                print(f"graph={label} layout={name} variant={variant} first_call_s={first:.3f} "
                      f"copy_s={copy.seconds if copy else float('nan'):.3f} "
                      f"copy_ids={copy.graph.n_vertices if copy else 0} {stats}", flush=True)
            tiled._layout = PACKAGE
        ref = {}
        base = None
        for variant in ("tiled", "overlay", "persistent"):
            for name, g in copies.items():
                if variant == "persistent" and name == "relaxed":
                    continue
                bfs(g, roots[0], variant=variant, device="gpu")
                secs, levels, same = [], [], True
                for r in roots:
                    s, res = event_seconds(lambda r=r, v=variant, g=g: bfs(
                        g, r, variant=v, device="gpu"))
                    secs.append(s)
                    levels.append(res.n_levels)
                    d = res.distances
                    if r in ref:
                        same &= bool((d == ref[r]).all())
                    else:
                        ref[r] = d
                ms = 1e3 * float(np.mean(secs))
                base = ms if base is None else base
                stats = overlay.last_stats(workspace(g)) if variant == "overlay" else {}
                print(f"graph={label} layout={name} variant={variant} ms={ms:.4f} "
                      f"us_per_level={1e6 * float(np.sum(secs)) / float(np.sum(levels)):.3f} "
                      f"tiled_cells_over_this={base / ms:.3f} labels_equal={same} {stats}",
                      flush=True)
        del copies, g0, ref
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
