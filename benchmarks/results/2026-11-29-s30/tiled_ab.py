"""Session 30 A/B of tiled.cu (the earlier kernels: ``bash kernels.sh.txt`` first, which
writes them from git into ``kernels/``, carried to the device with the run): arms
interleaved root by root in one process, distances equal across arms on every root (a
mismatch exits 1). Run 2's arms: "before" (session 29's tiled.cu, tiled_before.cu),
"tree", the tree's kernel with MG_TILED_BLOCK=256. Run 3's (``--run3``): "before" (run
2's tree, tiled_run2.cu), "tree", the tree's kernel at one block per SM
(MG_TILED_MIN_BLOCKS=1: no register bound of 64) and without the label read before the
claim (MG_TILED_DIRECT=1, a define of that run's kernel only). Runs 4, 5, 6 and 8: the
modes ``--run4``, ``--run5``, ``--final``, ``--run8`` below (run 8's "tree" was the
output in the caller's ids, deleted after it). Not a benchmark: a record of a run."""
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

HERE = Path(__file__).resolve().parent
# The earlier kernels the arms name: written by kernels.sh.txt beside this file (from git).
KERNELS = HERE / "kernels"
ARMS = {"before": (str(KERNELS / "tiled_before.cu"), 512, {}), "tree": (tiled.TILED_FILE, 512, {}),
        "block256": (tiled.TILED_FILE, 256, {})}
if "--run3" in sys.argv:
    sys.argv.remove("--run3")
    ARMS = {"before": (str(KERNELS / "tiled_run2.cu"), 512, {}),
            "tree": (tiled.TILED_FILE, 512, {}),
            "one-block-per-sm": (tiled.TILED_FILE, 512, {"MG_TILED_MIN_BLOCKS": 1}),
            "direct-claim": (tiled.TILED_FILE, 512, {"MG_TILED_DIRECT": 1})}
if "--run4" in sys.argv:  # both arms the tree's kernel (direct claims), 2 or 1 blocks per SM
    sys.argv.remove("--run4")
    ARMS = {"before": (tiled.TILED_FILE, 512, {}), "one-block-per-sm": (tiled.TILED_FILE, 512, {})}
if "--run5" in sys.argv:  # the tile's edge range loaded by all threads; VB 2 / 4 / 8
    sys.argv.remove("--run5")
    ARMS = {"before": (str(KERNELS / "tiled_run4.cu"), 512, {}),
            "tree": (tiled.TILED_FILE, 512, {}),
            "vb4": (tiled.TILED_FILE, 512, {"MG_TILED_VB": 4}),
            "vb8": (tiled.TILED_FILE, 512, {"MG_TILED_VB": 8})}
if "--final" in sys.argv:  # session 29's kernel against the tree, six deep graphs
    sys.argv.remove("--final")
    ARMS = {"before": (str(KERNELS / "tiled_before.cu"), 512, {}),
            "tree": (tiled.TILED_FILE, 512, {})}
OLD_HOST = set()  # arms whose kernel writes labels in place (mapped back by a second launch)
PARENTS = set()  # arms timed with parents
if "--run8" in sys.argv:  # the output phase in the caller's ids against run 6's kernel
    sys.argv.remove("--run8")
    ARMS = {"before": (str(KERNELS / "tiled_run6.cu"), 512, {}),
            "tree": (tiled.TILED_FILE, 512, {}),
            "before+parents": (str(KERNELS / "tiled_run6.cu"), 512, {}),
            "tree+parents": (tiled.TILED_FILE, 512, {})}
    OLD_HOST = {"before", "before+parents"}
    PARENTS = {"tree+parents", "before+parents"}
PER_SM = {"one-block-per-sm": 1}


def search(a, ws, r, horizon):
    """One tiled search of arm ``a``: (labels, parents) in the caller's ids."""
    want = a in PARENTS
    if a not in OLD_HOST:
        return tiled.run_tiled(ws, r, want, horizon=horizon)
    from morphgpu.bfs.gpu import relabel  # noqa: PLC0415

    shift = tiled._shift(ws, None)
    copy = tiled.tile_copy(ws, shift)
    inner = workspace(copy.graph)
    tiled._searched[ws] = __import__("weakref").ref(inner)
    dist, parent = tiled._search(inner, int(copy.inverse_host[r]), want, shift, None, None,
                                 horizon)
    return relabel.back(ws, copy, dist, parent)
arm = ["tree"]
cache = {}


def grid(vid, eid, shared, eb):
    key = (arm[0], vid, eid, shared, eb)
    if key not in cache:
        path, block, extra = ARMS[arm[0]]
        defines = {**kernels.index_defines(np.dtype(vid), np.dtype(eid)),
                   "MG_TILED_BLOCK": block, "MG_TILED_EB": eb,
                   "MG_TILED_MIN_BLOCKS": tiled.BLOCKS_PER_SM, **extra}
        cache[key] = barrier.persistent_kernel(path, "bfs_tiled", mode="cooperative",
                                               block=block, defines=defines, shared_mem=shared)
    return cache[key]


tiled._grid = grid


def cache_blocks(a):
    return [c.grid for k, c in cache.items() if k[0] == a]
GRAPHS4 = {
    "grid 4000": (lambda: generators.grid2d(4000, 4000, device="gpu"), 32),
    "grid-del 5000 p.75": (lambda: road_like.grid_with_deletions(5000, 5000, keep=0.75,
                                                                 device="gpu"), 32),
    "road COL": (lambda: graph_io.read_graph(testing.shared_path("data", "roads", "COL.gr.xz"))
                 .to("gpu"), 32),
}
GRAPHS = {
    "delaunay 1M": (lambda: road_like.delaunay(1 << 20, device="gpu"), 12),
    "delaunay 4M": (lambda: road_like.delaunay(1 << 22, device="gpu"), 12),
    "grid-del 3000 p.75": (lambda: road_like.grid_with_deletions(3000, 3000, keep=0.75,
                                                                 device="gpu"), 32),
}
if (ARMS.keys() in ({"before", "one-block-per-sm"}, {"before", "tree"}) or "vb4" in ARMS
        or "tree+parents" in ARMS):
    GRAPHS.update(GRAPHS4)
roots_n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
bad = 0
for name, (build, horizon) in GRAPHS.items():
    g = build()
    ws = workspace(g)
    n = g.n_vertices
    deg = cp.diff(g.indptr).get()
    cand = np.flatnonzero(deg > 0)
    roots = np.random.default_rng(5).choice(cand, roots_n, replace=False)
    times = {a: [] for a in ARMS}
    stats = {a: [] for a in ARMS}
    for a in ARMS:  # compile and the tiled copy, outside the clock
        arm[0] = a
        tiled.BLOCKS_PER_SM = PER_SM.get(a, 2)
        search(a, ws, int(roots[0]), horizon)
    cp.cuda.runtime.deviceSynchronize()
    levels = None
    for r in roots:
        ref = None
        for a in ARMS:
            arm[0] = a
            tiled.BLOCKS_PER_SM = PER_SM.get(a, 2)
            t = time.perf_counter()
            dist, parent = search(a, ws, int(r), horizon)
            cp.cuda.runtime.deviceSynchronize()
            times[a].append(time.perf_counter() - t)
            st = tiled.last_stats(tiled.searched_workspace(ws))
            stats[a].append(st)
            if ref is None:
                ref = dist
                levels = int(dist.max())
            elif not bool((ref == dist).all()):
                print("MISMATCH", name, a, int(r))
                bad = 1
            if parent is not None:  # each reached vertex's parent is one level up
                ok = dist >= 0
                pd = dist[cp.where(ok, parent, 0)]
                src = cp.arange(n) == int(r)
                if not bool(cp.all(~ok | src | (pd == dist - 1))):
                    print("BAD PARENTS", name, a, int(r))
                    bad = 1
    base = statistics.median(times["before"])
    if "before+parents" in times:
        for a in ("before+parents", "tree+parents"):
            m = statistics.median(times[a])
            b = statistics.median(times["before+parents"])
            print(f"graph={name} arm={a} ms={m*1e3:.3f} x_before_parents={b / m:.3f}")
    for a in ARMS:
        m = statistics.median(times[a])
        s = stats[a][-1]
        lv = s["level_cycles"] / max(s["levels"], 1) / 1980.0
        print(f"graph={name} arm={a} ms={m*1e3:.3f} x_before={base/m:.3f} "
              f"us_per_level={m*1e6/levels:.2f} local_level_us={lv:.3f} rounds={s['rounds']} "
              f"tiles={s['tiles']} load_us={s['load_cycles']/max(s['tiles'],1)/1980:.2f} "
              f"write_us={s['write_cycles']/max(s['tiles'],1)/1980:.2f} blocks={cache_blocks(a)}")
    del g, ws
sys.exit(bad)
