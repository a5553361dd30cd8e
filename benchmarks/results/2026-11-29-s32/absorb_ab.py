"""Session 32 run 7: tiled.cu absorbing labels lowered from outside while a visit runs
(tile_visit.cuh's absorb_lowered: at a local level's end, where the tile went DIRTY, the
visit reads the tile's labels again and follows the lowered ones in its next level)
against "before", HEAD 1086ce7's kernel (tiled.cu with tile_visit.cuh inlined, written
into the ignored kernels/ and carried), at horizons 48 / 24 / 96. Arms interleaved root by
root on deep graphs, one process, distances equal across arms on every root (a mismatch
exits 1); ``--more``: other shapes. Not a benchmark: a record of a run."""
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402
import road_like  # noqa: E402

from morphgpu import barrier, generators, graph_io, kernels, testing  # noqa: E402
from morphgpu.bfs.gpu import tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

BEFORE = str(Path(__file__).resolve().parent / "kernels" / "tiled_before.cu")
arm = ["absorb"]
cache = {}
tree_grid = tiled._grid


def grid(vid, eid, shared, eb):
    if arm[0] != "before":
        return tree_grid(vid, eid, shared, eb)
    key = (vid, eid, shared, eb)
    if key not in cache:
        defines = {**kernels.index_defines(np.dtype(vid), np.dtype(eid)),
                   "MG_TILED_BLOCK": 512, "MG_TILED_EB": eb,
                   "MG_TILED_MIN_BLOCKS": tiled.BLOCKS_PER_SM}
        cache[key] = barrier.persistent_kernel(BEFORE, "bfs_tiled", mode="cooperative",
                                               block=512, defines=defines, shared_mem=shared)
    return cache[key]


tiled._grid = grid


def run(kern, ws, r, want, **opts):
    """One search of arm kind ``kern``: "before" or "absorb" (the tree's kernel)."""
    arm[0] = kern
    return tiled.run_tiled(ws, r, want, **opts)


def ab(roots_n):
    graphs = {
        "delaunay 1M": (lambda: road_like.delaunay(1 << 20, device="gpu"), 12),
        "delaunay 4M": (lambda: road_like.delaunay(1 << 22, device="gpu"), 12),
        "grid 4000": (lambda: generators.grid2d(4000, 4000, device="gpu"), 32),
        "grid-del 3000 p.75": (lambda: road_like.grid_with_deletions(3000, 3000, keep=0.75,
                                                                     device="gpu"), 32),
        "road COL": (lambda: graph_io.read_graph(testing.shared_path("data", "roads",
                                                                     "COL.gr.xz")).to("gpu"), 32),
    }
    if "--more" in sys.argv:  # other shapes: a 25M grid with deletions, a long strip
        graphs = {
            "grid-del 5000 p.75": (lambda: road_like.grid_with_deletions(
                5000, 5000, keep=0.75, device="gpu"), 32),
            "grid-del 12000x800 p.75": (lambda: road_like.grid_with_deletions(
                12000, 800, keep=0.75, device="gpu"), 32),
            "delaunay 2M seed 7": (lambda: road_like.delaunay(2 << 20, seed=7,
                                                              device="gpu"), 12),
            "road NY": (lambda: graph_io.read_graph(testing.shared_path(
                "data", "roads", "NY.gr.xz")).to("gpu"), 32),
            "delaunay 8M seed 3": (lambda: road_like.delaunay(8 << 20, seed=3,
                                                              device="gpu"), 12),
        }
    bad = 0
    for name, (build, h) in graphs.items():
        del h
        arms = {f"{kern} h{hz}": (kern, hz) for hz in (48, 24, 96)
                for kern in ("before", "absorb")}
        g = build()
        ws = workspace(g)
        deg = cp.diff(g.indptr).get()
        roots = np.random.default_rng(5).choice(np.flatnonzero(deg > 0), roots_n, replace=False)
        times = {a: [] for a in arms}
        stats = {a: None for a in arms}
        for kern, hz in arms.values():
            run(kern, ws, int(roots[0]), False, horizon=hz)
        cp.cuda.runtime.deviceSynchronize()
        levels = 1
        for r in roots:
            ref = None
            for a, (kern, hz) in arms.items():
                t = time.perf_counter()
                dist, _ = run(kern, ws, int(r), False, horizon=hz)
                cp.cuda.runtime.deviceSynchronize()
                times[a].append(time.perf_counter() - t)
                stats[a] = tiled.last_stats(tiled.searched_workspace(ws))
                if ref is None:
                    ref = dist
                    levels = int(dist.max())
                elif not bool((ref == dist).all()):
                    print("MISMATCH", name, a, int(r))
                    bad = 1
        for a in arms:
            base = statistics.median(times["before" + a[a.index(" "):]])
            m = statistics.median(times[a])
            s = stats[a]
            print(f"graph={name} arm={a} ms={m * 1e3:.3f} x_before={base / m:.3f} "
                  f"us_per_level={m * 1e6 / levels:.2f} visits={s['tiles']} "
                  f"again={s['again']} levels_per_visit="
                  f"{s['levels'] / max(s['tiles'], 1):.1f} "
                  f"load_us={s['load_cycles'] / max(s['tiles'], 1) / 1980:.2f} "
                  f"level_us={s['level_cycles'] / max(s['levels'], 1) / 1980:.3f} "
                  f"write_us={s['write_cycles'] / max(s['tiles'], 1) / 1980:.2f} "
                  f"wait_us_all_blocks={s['wait_cycles'] / 1980:.0f} "
                  f"absorbed={s.get('absorbed', 0) if a.startswith('absorb') else '-'}",
                  flush=True)
        del g, ws
    return bad


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(ab(int(args[0]) if args else 16))
