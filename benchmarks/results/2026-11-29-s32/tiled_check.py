"""Session 32: the exactness sweep of session 31 (schedules_ab.py --check) on the one tiled
schedule left (the ring, tiles kept): tiled.run_tiled against SciPy on small graphs, small
tiles so that many tiles and ring laps occur, small edge capacities for global rows, 1 / 2 /
all blocks, horizons 0 / 1 / 3 / 12 / 24 / 48 / 96, directed inputs, several components.
Not a benchmark: a record of a run."""
import sys

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402
import road_like  # noqa: E402
import scipy.sparse as sps  # noqa: E402
from scipy.sparse import csgraph  # noqa: E402

from morphgpu import generators  # noqa: E402
from morphgpu.bfs.gpu import tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402


def scipy_dist(g, r):
    ip, ix = g.indptr.get() if hasattr(g.indptr, "get") else g.indptr, \
        g.indices.get() if hasattr(g.indices, "get") else g.indices
    n = g.n_vertices
    m = sps.csr_matrix((np.ones(len(ix)), ix, ip), shape=(n, n))
    d = csgraph.shortest_path(m, unweighted=True, indices=r, directed=True)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def check():
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
                     {"relabel": False, "tile_shift": 7}, {"horizon": 12}, {"horizon": 24},
                     {"horizon": 96}):
            for r in roots:
                ref = scipy_dist(g, int(r))
                for want in (False, True):
                    dist, parent = tiled.run_tiled(ws, int(r), want, **opts)
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


if __name__ == "__main__":
    sys.exit(1 if check() else 0)
