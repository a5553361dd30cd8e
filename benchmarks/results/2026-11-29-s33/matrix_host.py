"""Session 33: where a cupyx csr_matrix input's extra host time goes (bfs() on the matrix
against bfs() on its CSRGraph, second and later calls). Per graph: the host time until
bfs() returns (median of 200, the GPU idle at each call), the wall time with the GPU
synchronised, then a cProfile of 300 matrix calls (top functions by own time). Not a
benchmark: a record of run 4."""
import cProfile
import pstats
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")
import cupy as cp  # noqa: E402
import cupyx.scipy.sparse as cusp  # noqa: E402
import road_like  # noqa: E402

from morphgpu import generators  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402


def matrix_of(g):
    return cusp.csr_matrix((cp.ones(g.n_edges, dtype=cp.float32), g.indices.astype(cp.int32),
                            g.indptr.astype(cp.int32)), shape=g.shape)


def times(call, roots, sync_first=True):
    host, wall = [], []
    for r in roots:
        cp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter()
        call(int(r))
        t1 = time.perf_counter()
        cp.cuda.runtime.deviceSynchronize()
        t2 = time.perf_counter()
        host.append(t1 - t)
        wall.append(t2 - t)
    return statistics.median(host) * 1e6, statistics.median(wall) * 1e6


GRAPHS = {
    "grid 300x300": lambda: generators.grid2d(300, 300, device="gpu"),
    "delaunay 16k": lambda: road_like.delaunay(1 << 14, device="gpu"),
    "kron 16": lambda: generators.kronecker(16, 16, device="gpu"),
    "kron 21": lambda: generators.kronecker(21, 16, device="gpu"),
}

def one(name, build):
    g = build()
    m = matrix_of(g)
    deg = cp.diff(g.indptr).get()
    roots = np.random.default_rng(3).choice(np.flatnonzero(deg > 0), 200)
    ran = bfs(g, int(roots[0]), device="gpu").variant
    for _ in range(3):
        bfs(g, int(roots[0]), variant=ran, device="gpu", predecessors=True)
        bfs(m, int(roots[0]), variant=ran, device="gpu", predecessors=True)
    h_g, w_g = times(lambda r: bfs(g, r, variant=ran, device="gpu", predecessors=True), roots)
    h_m, w_m = times(lambda r: bfs(m, r, variant=ran, device="gpu", predecessors=True), roots)
    print(f"graph={name} ran={ran} csr_host_us={h_g:.1f} csr_wall_us={w_g:.1f} "
          f"matrix_host_us={h_m:.1f} matrix_wall_us={w_m:.1f} "
          f"wall_ratio={w_m / w_g:.3f}", flush=True)
    prof = cProfile.Profile()
    prof.enable()
    for r in roots[:150]:
        bfs(m, int(r), variant=ran, device="gpu", predecessors=True)
        cp.cuda.runtime.deviceSynchronize()
    prof.disable()
    print(f"--- cProfile, 150 matrix calls on {name} (each followed by a device sync)")
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(22)


for name, build in GRAPHS.items():
    one(name, build)
    cp.get_default_memory_pool().free_all_blocks()
