"""Session 35: the degree relabel's order, A/B in one process (beamer through bfs(), the
same roots interleaved, CUDA events around whole calls, predecessors on): the tree's
exact degree order against degrees in octave classes (floor(log2(d + 1)), ties by id, so
a class keeps the input's order and the map back's gathers fall on runs of new ids) and
half-octave classes. Distances equal between arms on every root; Graph500's checks on
the first root of the octave arm (graphs below 70M entries).
Usage: python3 relabel_order_ab.py ROOTS [GRAPH,GRAPH...] [--no-check]
(run 6 checked Kronecker 21 with NumPy's Graph500 check, 63M entries: two minutes.)"""
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402

from morphgpu import backend, generators, reorder  # noqa: E402
from morphgpu.bfs import bfs, graph500_check  # noqa: E402
from morphgpu.csr import CSRGraph  # noqa: E402

cp = backend.cupy_module()
exact = reorder.degree_order


def classes(per_octave):
    def order(graph):
        g = CSRGraph.coerce(graph)
        n = g.n_vertices
        d = g.degrees().astype(cp.float64)
        cls = cp.floor(cp.log2(d + 1.0) * per_octave).astype(cp.int64)
        return cp.argsort((int(cls.max()) - cls) * n + cp.arange(n, dtype=cp.int64))
    return order


ARMS = {"exact": exact, "octave": classes(1), "half-octave": classes(2)}
GRAPHS = {
    "kron 21": lambda: generators.kronecker(21, 16, device="gpu"),
    "kron 22": lambda: generators.kronecker(22, 16, device="gpu"),
    "uniform 2^22 deg16": lambda: road_like.uniform_random(1 << 22, 16, device="gpu"),
    "uniform 2^23 deg8": lambda: road_like.uniform_random(1 << 23, 8, device="gpu"),
    "kron 20 ef32": lambda: generators.kronecker(20, 32, device="gpu"),
}
n_roots = int(sys.argv[1]) if len(sys.argv) > 1 else 32
if len(sys.argv) > 2 and not sys.argv[2].startswith("--"):
    GRAPHS = {k: v for k, v in GRAPHS.items() if k in sys.argv[2].split(",")}
check = "--no-check" not in sys.argv
print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
for label, build in GRAPHS.items():
    t0 = time.time()
    base = build()
    graphs = {}
    for arm, order in ARMS.items():
        g = CSRGraph(base.indptr.copy(), base.indices.copy(), None, base.n_vertices,
                     base.directed)
        reorder.degree_order = order
        try:
            bfs(g, 0, variant="beamer", device="gpu", predecessors=True)  # builds the copy
        finally:
            reorder.degree_order = exact
        graphs[arm] = g
    deg = base.degrees().get()
    rng = np.random.default_rng(1)
    roots = [int(r) for r in rng.choice(np.flatnonzero(deg > 0), n_roots, replace=False)]
    times = {arm: [] for arm in ARMS}
    ev = [cp.cuda.Event(), cp.cuda.Event()]
    host_indptr, host_indices = base.indptr.get(), base.indices.get()
    for i, r in enumerate(roots):
        arms = list(ARMS)[i % len(ARMS):] + list(ARMS)[:i % len(ARMS)]  # rotate the order
        dists = {}
        for arm in arms:
            for _ in range(2 if i == 0 else 1):  # a warm call first on the first root
                ev[0].record()
                res = bfs(graphs[arm], r, variant="beamer", device="gpu", predecessors=True)
                ev[1].record()
                ev[1].synchronize()
            times[arm].append(cp.cuda.get_elapsed_time(ev[0], ev[1]))
            dists[arm] = res.distances
            if check and i == 0 and arm == "octave" and base.n_edges < 70_000_000:
                graph500_check(host_indptr, host_indices, r, res.distances.get(),
                               res.predecessors.get())
        for arm in arms:
            assert bool((dists[arm] == dists["exact"]).all()), (label, arm, r)
    row = {arm: float(np.mean(t)) for arm, t in times.items()}
    print(f"graph={label} roots={n_roots} " + " ".join(f"{a}_ms={v:.4f}" for a, v in row.items())
          + " " + " ".join(f"x_{a}={row['exact'] / row[a]:.3f}" for a in ARMS if a != "exact")
          + f" built_s={time.time() - t0:.1f}", flush=True)
