"""Session 39 (session 38's script plus grid-del 5000^2, 25M vertices, under --more): the
package's ``overlay`` variant against ``tiled`` (and ``persistent``),
bfs() calls, one process, the same roots, labels compared; ms per search with and
without parents, us per level, and the overlay's preparation (its first search: the
tiled copy at tiles of 1024, D, the two arms timed).
Usage: python3 overlay_package_ab.py [--more]  (--more: also the shared road networks,
Delaunay 4M, grid 4000^2 and grid-del 3000^2)"""
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402
from harness import event_seconds, road_graph_thunks  # noqa: E402

from morphgpu import backend, generators  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402
from morphgpu.bfs.gpu import overlay, tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace, workspaces  # noqa: E402

GRAPHS = {
    "delaunay 1M": lambda: road_like.delaunay(1_000_000, device="gpu"),
    "grid-del 1000^2": lambda: road_like.grid_with_deletions(1000, 1000, device="gpu"),
}


MORE = {
    "delaunay 4M": lambda: road_like.delaunay(4_000_000, device="gpu"),
    "grid 4000^2": lambda: generators.grid2d(4000, 4000, device="gpu"),
    "grid-del 3000^2": lambda: road_like.grid_with_deletions(3000, 3000, device="gpu"),
    "grid-del 5000^2": lambda: road_like.grid_with_deletions(5000, 5000, device="gpu"),
}


def main() -> None:
    cp = backend.cupy_module()
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    graphs = dict(GRAPHS)
    if "--more" in sys.argv:
        graphs.update(road_graph_thunks("gpu"))
        graphs.update(MORE)
    for label, make in graphs.items():
        g = make()
        degree = cp.asnumpy(cp.diff(g.indptr))
        roots = [int(r) for r in np.random.default_rng(1).choice(np.flatnonzero(degree), 6)]
        t0 = time.perf_counter()
        bfs(g, roots[0], variant="overlay", device="gpu").distances.get()
        first = time.perf_counter() - t0
        copy = tiled.preparation(workspace(g), overlay.SHIFT)
        ov = overlay.build(workspaces[copy.graph], overlay.SHIFT)
        print(f"graph={label} overlay first call {first:.3f} s (tiled copy {copy.seconds:.3f} "
              f"s, D {ov.seconds:.3f} s, {ov.d_entries / 1e6:.1f}M entries) arm={ov.arm} "
              f"ms_by_arm={ {k: round(v, 3) for k, v in ov.ms_by_arm.items()} }", flush=True)
        ref = {}
        for parents in (False, True):
            base = None
            for variant in ("tiled", "overlay", "persistent"):
                bfs(g, roots[0], variant=variant, device="gpu", predecessors=parents)
                secs, levels, same = [], [], True
                for r in roots:
                    s, res = event_seconds(lambda r=r, v=variant, g=g, p=parents: bfs(
                        g, r, variant=v, device="gpu", predecessors=p))
                    secs.append(s)
                    levels.append(res.n_levels)
                    d = res.distances
                    if r in ref:
                        same &= bool((d == ref[r]).all())
                    else:
                        ref[r] = d
                ms = 1e3 * float(np.mean(secs))
                base = ms if base is None else base
                print(f"graph={label} parents={parents} variant={variant} ms={ms:.4f} "
                      f"us_per_level={1e6 * float(np.sum(secs)) / float(np.sum(levels)):.3f} "
                      f"tiled_over_this={base / ms:.3f} labels_equal={same}", flush=True)
        cp.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
