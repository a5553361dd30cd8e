"""Session 32: the queue schedule keeping a tile it must visit again (tiled_queue.cu,
MG_TILED_KEEP): 0 pushes it to the ring as before; 1 keeps it (and its row offsets and
column ids in shared memory, tile_visit.cuh's ``reuse``) when no tile waits in the ring;
2 also when it was lowered from outside while it ran (DIRTY). ``--check``: exactness
sweep of each keep rule against SciPy on small graphs (session 31's sweep). Default:
arms interleaved root by root on deep graphs, one process, distances equal across arms
on every root (a mismatch exits 1). Not a benchmark: a record of runs 2 and 3, which ran
on the tree before commit bf5b2b3 with the experimental define MG_TILED_KEEP in
tiled_queue.cu (since removed with the rule kept, 2, and the rounds schedule it compared
with: it no longer runs on today's tree)."""
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402
import road_like  # noqa: E402
import scipy.sparse as sps  # noqa: E402
from scipy.sparse import csgraph  # noqa: E402

from morphgpu import barrier, generators, graph_io, kernels, testing  # noqa: E402
from morphgpu.bfs.gpu import tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

arm = ["rounds"]
# Run 3 (--run3): rule 2 at other horizons and tile sizes, rule 3 (keep whenever the tile
# must be visited again), against rule 0 (session 31's schedule) and rule 2 at 48.
RUN3 = "--run3" in sys.argv
RUN3_ARMS = {"keep0": ("keep0", 48, None), "keep2": ("keep2", 48, None),
             "keep2 h24": ("keep2", 24, None), "keep2 h96": ("keep2", 96, None),
             "keep3": ("keep3", 48, None), "keep2 T2048": ("keep2", 48, 11)}
cache = {}
tree_grid = tiled._grid


def grid(vid, eid, shared, eb, schedule="rounds"):
    if not arm[0].startswith("keep"):
        return tree_grid(vid, eid, shared, eb, schedule)
    key = (arm[0], vid, eid, shared, eb)
    if key not in cache:
        defines = {**kernels.index_defines(np.dtype(vid), np.dtype(eid)),
                   "MG_TILED_BLOCK": 512, "MG_TILED_EB": eb,
                   "MG_TILED_MIN_BLOCKS": tiled.BLOCKS_PER_SM,
                   "MG_TILED_KEEP": int(arm[0][4:])}
        path, name = tiled.SCHEDULES["queue"]
        cache[key] = barrier.persistent_kernel(path, name, mode="cooperative",
                                               block=512, defines=defines, shared_mem=shared)
    return cache[key]


tiled._grid = grid


def run(kern, ws, r, want, **opts):
    """One search of arm kind ``kern``: "rounds" or "keepK" (the queue, MG_TILED_KEEP=K)."""
    arm[0] = kern
    return tiled.run_tiled(ws, r, want, schedule="rounds" if kern == "rounds" else "queue",
                           **opts)


def scipy_dist(g, r):
    ip, ix = g.indptr.get() if hasattr(g.indptr, "get") else g.indptr, \
        g.indices.get() if hasattr(g.indices, "get") else g.indices
    n = g.n_vertices
    m = sps.csr_matrix((np.ones(len(ix)), ix, ip), shape=(n, n))
    d = csgraph.shortest_path(m, unweighted=True, indices=r, directed=True)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def check():
    bad = 0
    for k in ("keep1", "keep2"):
        print(f"== {k}", flush=True)
        bad += check_one(k)
    return bad


def check_one(kern):
    rng = np.random.default_rng(31)
    graphs = {
        "grid 60x50": generators.grid2d(60, 50, device="gpu"),
        "grid-del 80x80": road_like.grid_with_deletions(80, 80, keep=0.7, device="gpu"),
        "delaunay 20k": road_like.delaunay(20000, device="gpu"),
        "gnm 3000 directed": generators.gnm(3000, 7000, directed=True, device="gpu"),
        "gnm 5000 sparse (components)": generators.gnm(5000, 3000, device="gpu"),
        "rmat 12 directed": generators.rmat(12, 8, device="gpu"),
        "grid3d 20": generators.grid3d(20, 20, 20, device="gpu"),
    }
    bad = runs = 0
    for name, g in graphs.items():
        ws = workspace(g)
        deg = cp.diff(g.indptr).get()
        roots = rng.choice(np.flatnonzero(deg > 0), 3, replace=False)
        for opts in ({}, {"tile_shift": 6}, {"tile_shift": 7, "horizon": 1},
                     {"tile_shift": 6, "horizon": 0}, {"tile_shift": 8, "horizon": 3},
                     {"tile_shift": 6, "blocks": 1}, {"tile_shift": 7, "blocks": 2},
                     {"tile_shift": 7, "edge_cap": 64}, {"tile_shift": 6, "edge_cap": 0},
                     {"relabel": False, "tile_shift": 7}, {"horizon": 12}):
            for r in roots:
                ref = scipy_dist(g, int(r))
                for want in (False, True):
                    dist, parent = run(kern, ws, int(r), want, **opts)
                    d = dist.get().astype(np.int64)
                    runs += 1
                    if not np.array_equal(d, ref):
                        bad += 1
                        print("MISMATCH", name, opts, int(r), int((d != ref).sum()))
                    if want:
                        p = parent.get().astype(np.int64)
                        ok = d >= 0
                        src = np.arange(len(d)) == int(r)
                        pd = np.where(ok, d[np.where(ok, p, 0)], 0)
                        if not np.all(~ok | src | (pd == d - 1)):
                            bad += 1
                            print("BAD PARENTS", name, opts, int(r))
        st = tiled.last_stats(tiled.searched_workspace(ws))
        print(f"checked {name}: last stats {st}", flush=True)
    print(f"check: {runs} searches, {bad} bad")
    return bad


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
        arms = RUN3_ARMS if RUN3 else {"keep0": ("keep0", 48), "rounds": ("rounds", h),
                                       "keep1": ("keep1", 48), "keep2": ("keep2", 48)}
        g = build()
        ws = workspace(g)
        deg = cp.diff(g.indptr).get()
        roots = np.random.default_rng(5).choice(np.flatnonzero(deg > 0), roots_n, replace=False)
        times = {a: [] for a in arms}
        stats = {a: None for a in arms}
        arms = {a: (v + (None,))[:3] for a, v in arms.items()}
        for kern, hz, sh in arms.values():
            run(kern, ws, int(roots[0]), False, horizon=hz, tile_shift=sh)
        cp.cuda.runtime.deviceSynchronize()
        levels = 1
        for r in roots:
            ref = None
            for a, (kern, hz, sh) in arms.items():
                t = time.perf_counter()
                dist, _ = run(kern, ws, int(r), False, horizon=hz, tile_shift=sh)
                cp.cuda.runtime.deviceSynchronize()
                times[a].append(time.perf_counter() - t)
                stats[a] = tiled.last_stats(tiled.searched_workspace(ws))
                if ref is None:
                    ref = dist
                    levels = int(dist.max())
                elif not bool((ref == dist).all()):
                    print("MISMATCH", name, a, int(r))
                    bad = 1
        base = statistics.median(times["keep0"])
        for a in arms:
            m = statistics.median(times[a])
            s = stats[a]
            print(f"graph={name} arm={a} ms={m * 1e3:.3f} x_keep0={base / m:.3f} "
                  f"us_per_level={m * 1e6 / levels:.2f} visits={s['tiles']} "
                  f"requeued_or_rounds={s['rounds']} levels_per_visit="
                  f"{s['levels'] / max(s['tiles'], 1):.1f} "
                  f"load_us={s['load_cycles'] / max(s['tiles'], 1) / 1980:.2f} "
                  f"level_us={s['level_cycles'] / max(s['levels'], 1) / 1980:.3f} "
                  f"write_us={s['write_cycles'] / max(s['tiles'], 1) / 1980:.2f} "
                  f"wait_or_barrier_us_block0={s['barrier_cycles'] / 1980:.1f}", flush=True)
        del g, ws
    return bad


if __name__ == "__main__":
    if "--check" in sys.argv:
        sys.exit(1 if check() else 0)
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sys.exit(ab(int(args[0]) if args else 16))
