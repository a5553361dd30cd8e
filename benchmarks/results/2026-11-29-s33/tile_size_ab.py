"""Session 33: the tiled search with tiles of 8192 vertices and one block per SM, against
the tree's 4096-vertex tiles at two blocks per SM (and 4096 at one block per SM, which
separates the two changes). Arms interleaved root by root, one process, events around
whole run_tiled calls (parents asked for, the map back included), distances equal
across arms on every root (a mismatch exits 1). Not a benchmark: a record of run 2.

Why: a visit's load and write-back cost ~14 us whatever it advances, and on Delaunay
graphs the wavefront crosses a 4096-vertex tile in ~15-22 local levels (grids: ~30-48),
so per level Delaunay pays the most overhead; a tile twice as large is crossed in ~1.4x
the levels, with half the tiles (and half the blocks)."""
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402
import road_like  # noqa: E402

from morphgpu import barrier, generators, graph_io, kernels, testing  # noqa: E402
from morphgpu.bfs.gpu import tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

_cache = {}


def _grid(vid, eid, shared, eb):
    key = (tiled.BLOCKS_PER_SM, vid, eid, shared, eb)
    if key not in _cache:
        defines = {**kernels.index_defines(np.dtype(vid), np.dtype(eid)),
                   "MG_TILED_BLOCK": tiled.BLOCK, "MG_TILED_EB": eb,
                   "MG_TILED_MIN_BLOCKS": tiled.BLOCKS_PER_SM}
        _cache[key] = barrier.persistent_kernel(tiled.TILED_FILE, "bfs_tiled",
                                                mode="cooperative", block=tiled.BLOCK,
                                                defines=defines, shared_mem=shared)
    return _cache[key]


tiled._grid = _grid

# name: (blocks per SM, tile shift, horizon)
ARMS = {"T4096 h24": (2, 12, 24), "T4096 h48": (2, 12, 48),
        "T4096 1/SM h24": (1, 12, 24), "T4096 1/SM h48": (1, 12, 48),
        "T8192 1/SM h24": (1, 13, 24), "T8192 1/SM h48": (1, 13, 48),
        "T8192 1/SM h96": (1, 13, 96)}


def run(arm, ws, r):
    bps, shift, h = ARMS[arm]
    tiled.BLOCKS_PER_SM = bps
    return tiled.run_tiled(ws, r, True, tile_shift=shift, horizon=h)


def road(name):
    return lambda: graph_io.read_graph(testing.shared_path("data", "roads",
                                                           f"{name}.gr.xz")).to("gpu")


GRAPHS = {
    "delaunay 1M": lambda: road_like.delaunay(1 << 20, device="gpu"),
    "delaunay 2M seed 7": lambda: road_like.delaunay(2 << 20, seed=7, device="gpu"),
    "delaunay 4M": lambda: road_like.delaunay(1 << 22, device="gpu"),
    "delaunay 8M seed 3": lambda: road_like.delaunay(8 << 20, seed=3, device="gpu"),
    "grid-del 3000 p.75": lambda: road_like.grid_with_deletions(3000, 3000, keep=0.75,
                                                                device="gpu"),
    "grid 4000": lambda: generators.grid2d(4000, 4000, device="gpu"),
    "grid-del 12000x800 p.75": lambda: road_like.grid_with_deletions(12000, 800, keep=0.75,
                                                                     device="gpu"),
    "road NY": road("NY"),
    "road COL": road("COL"),
}


def main(roots_n, only):
    bad = 0
    mhz = None
    for name, build in GRAPHS.items():
        if only and not any(o in name for o in only):
            continue
        g = build()
        ws = workspace(g)
        deg = cp.diff(g.indptr).get()
        roots = np.random.default_rng(5).choice(np.flatnonzero(deg > 0), roots_n,
                                                replace=False)
        t0 = time.perf_counter()
        for a in ARMS:
            run(a, ws, int(roots[0]))
        cp.cuda.runtime.deviceSynchronize()
        prep = time.perf_counter() - t0
        times = {a: [] for a in ARMS}
        stats = {a: [] for a in ARMS}
        levels = []
        for r in roots:
            ref = None
            for a in ARMS:
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                dist, _ = run(a, ws, int(r))
                end.record()
                end.synchronize()
                times[a].append(cp.cuda.get_elapsed_time(start, end) * 1e-3)
                stats[a].append(tiled.last_stats(tiled.searched_workspace(ws)))
                if ref is None:
                    ref = dist
                    levels.append(int(dist.max()))
                elif not bool((ref == dist).all()):
                    print("MISMATCH", name, a, int(r), flush=True)
                    bad = 1
        if mhz is None:
            mhz = cp.cuda.runtime.deviceGetAttribute(cp.cuda.runtime.cudaDevAttrClockRate,
                                                     0) / 1e3
        lv = float(np.mean(levels))
        base = min(statistics.mean(times["T4096 h24"]), statistics.mean(times["T4096 h48"]))
        for a in ARMS:
            m = statistics.mean(times[a])
            s = {k: float(np.mean([x[k] for x in stats[a]])) for k in stats[a][0]}
            v = max(s["tiles"], 1.0)
            print(f"graph={name} arm={a} ms={m * 1e3:.3f} x_best_T4096={base / m:.3f} "
                  f"us_per_level={m * 1e6 / lv:.2f} visits={s['tiles']:.0f} "
                  f"n_tiles={g.n_vertices / s['tile_vertices']:.0f} "
                  f"levels_per_visit={s['levels'] / v:.1f} "
                  f"load_us={s['load_cycles'] / v / mhz:.2f} "
                  f"level_us={s['level_cycles'] / max(s['levels'], 1) / mhz:.3f} "
                  f"write_us={s['write_cycles'] / v / mhz:.2f} "
                  f"remote_lowered={s['remote_lowered']:.0f} global_rows={s['global_rows']:.0f}",
                  flush=True)
        print(f"graph={name} n={g.n_vertices} levels={lv:.1f} roots={roots_n} "
              f"first_calls_s={prep:.1f}", flush=True)
        del g, ws
        cp.get_default_memory_pool().free_all_blocks()
    return bad


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = [a[7:] for a in sys.argv[1:] if a.startswith("--only=")]
    sys.exit(main(int(args[0]) if args else 16, only))
