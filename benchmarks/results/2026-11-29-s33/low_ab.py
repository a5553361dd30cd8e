"""Session 33: the tiled search's global low (tiled.cu: a lower bound of every label still
to be relaxed, from the active tiles' keys and the running visits' lowest seeds). With a
global horizon Hg a visit expands only labels below low + Hg and a tile whose key lies
past it is put back untouched. Arms "h<H> g<Hg>" run the tree's kernel at per-visit horizon
H and global horizon Hg (g0: no global bound, the keys still kept); "before h<H>" runs
bc90f4d's kernel (kernels/tiled_before.cu, tile_visit.cuh inlined). Arms interleaved root
by root, one process, events around whole run_tiled calls (parents asked for, the map
back included), distances equal across arms on every root (a mismatch exits 1). Not a
benchmark: a record of run 3, which ran on commit 721d169; the global low lost on every
graph and was removed (its diff: global_low.patch.txt), so this no longer runs on the
tree.

Why: on Delaunay graphs the blocks are busy (one block per SM instead of two: 0.72x on
Delaunay 8M, run 2) with 15-23 visits per tile, most of them corrections of labels that a
visit far ahead of the front set too high; a bound relative to the front (not to the
visit's own lowest seed, itself possibly far ahead) stops that speculation compounding."""
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
from morphgpu.bfs.gpu.launch import NULL  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

BEFORE = str(Path(__file__).resolve().parent / "kernels" / "tiled_before.cu")
_before_grids = {}


def _before_grid(vid, eid, shared, eb):
    key = (vid, eid, shared, eb)
    if key not in _before_grids:
        defines = {**kernels.index_defines(np.dtype(vid), np.dtype(eid)),
                   "MG_TILED_BLOCK": tiled.BLOCK, "MG_TILED_EB": eb,
                   "MG_TILED_MIN_BLOCKS": tiled.BLOCKS_PER_SM}
        _before_grids[key] = barrier.persistent_kernel(BEFORE, "bfs_tiled",
                                                       mode="cooperative", block=tiled.BLOCK,
                                                       defines=defines, shared_mem=shared)
    return _before_grids[key]


def _before_search(ws, source, want_parents, tile_shift, edge_cap, blocks, horizons):
    """tiled._search with bc90f4d's kernel and arguments (no keys, no global horizon)."""
    g, n = ws.g, ws.g.n_vertices
    shift = tiled._shift(ws, tile_shift)
    cap = tiled.edge_capacity(shift, tiled.shared_budget())
    grid = _before_grid(str(g.indices.dtype), str(g.indptr.dtype),
                        tiled.shared_bytes(shift, cap),
                        tiled.edges_per_pass(ws.n_edges / max(n, 1)))
    st = tiled.state(ws, shift)
    tiled._last[ws] = st
    n_tiles = int(st.mark.size)
    rev = ws.reverse() if want_parents else g
    dist = cp.empty(n, dtype=cp.int32)
    parent = cp.empty(n, dtype=g.indices.dtype) if want_parents else None
    blocks = min(grid.grid, n_tiles)
    grid.kernel((blocks,), (grid.block,),
                (g.indptr, g.indices, rev.indptr, rev.indices, dist,
                 NULL if parent is None else parent, st.stamp, st.mark, st.lists, st.ctrl,
                 np.int64(n), g.indices.dtype.type(source), np.int32(shift), np.int32(cap),
                 np.int32(horizons[0]), np.int64(n_tiles), grid.state),
                shared_mem=grid.shared_mem)
    grid.check()
    return dist, parent


TREE_SEARCH = tiled._search
ARMS = {"before h24": (True, 24, 0), "before h48": (True, 48, 0),
        "h24 g0": (False, 24, 0), "h48 g0": (False, 48, 0),
        "h24 g16": (False, 24, 16), "h24 g32": (False, 24, 32),
        "h48 g16": (False, 48, 16), "h48 g32": (False, 48, 32), "h48 g64": (False, 48, 64),
        "h0 g24": (False, 0, 24)}


def run(arm, ws, r):
    before, h, hg = ARMS[arm]
    tiled._search = _before_search if before else TREE_SEARCH
    return tiled.run_tiled(ws, r, True, horizon=h, global_horizon=hg)


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
    mhz = cp.cuda.runtime.deviceGetAttribute(cp.cuda.runtime.cudaDevAttrClockRate, 0) / 1e3
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
        lv = float(np.mean(levels))
        base = min(statistics.mean(times["before h24"]), statistics.mean(times["before h48"]))
        for a in ARMS:
            m = statistics.mean(times[a])
            s = {k: float(np.mean([x[k] for x in stats[a]])) for k in stats[a][0]}
            v = max(s["tiles"], 1.0)
            extra = "" if ARMS[a][0] else (f" skips={s['skips']:.0f} "
                                           f"refreshes={s['refreshes']:.0f}")
            print(f"graph={name} arm={a} ms={m * 1e3:.3f} x_best_before={base / m:.3f} "
                  f"us_per_level={m * 1e6 / lv:.2f} visits={s['tiles']:.0f} "
                  f"levels_per_visit={s['levels'] / v:.1f} "
                  f"load_us={s['load_cycles'] / v / mhz:.2f} "
                  f"level_us={s['level_cycles'] / max(s['levels'], 1) / mhz:.3f} "
                  f"write_us={s['write_cycles'] / v / mhz:.2f} "
                  f"remote_lowered={s['remote_lowered']:.0f}{extra}", flush=True)
        print(f"graph={name} n={g.n_vertices} levels={lv:.1f} roots={roots_n} "
              f"first_calls_s={prep:.1f}", flush=True)
        del g, ws
        cp.get_default_memory_pool().free_all_blocks()
    return bad


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = [a[7:] for a in sys.argv[1:] if a.startswith("--only=")]
    sys.exit(main(int(args[0]) if args else 16, only))
