"""Session 37, prepared for the next GPU session, to run on a tree with
prepared-deep-runners.patch.txt applied: bfs() with ``persistent`` and ``tiled`` named,
on the CSRGraph and on a cupyx csr_matrix of it, with the prepared path for them on
(gpu.PREPARED_RUNNERS as the patch sets it) and off (empty: the general path), arms
interleaved root by root in one process; event time per call and the matrix / CSRGraph
ratio of each arm. Labels are checked against the first arm's on every root.
Usage: python3 prepared_deep_ab.py"""
import sys

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402
from harness import event_seconds  # noqa: E402

from morphgpu import backend, generators, graph_cache  # noqa: E402
from morphgpu.bfs import bfs, gpu  # noqa: E402

GRAPHS = {
    "grid 300^2": lambda: generators.grid2d(300, 300, device="gpu"),
    "grid-del 256^2": lambda: road_like.grid_with_deletions(256, 256, device="gpu"),
    "delaunay 16k": lambda: road_like.delaunay(1 << 14, device="gpu"),
    "grid-del 1000^2": lambda: road_like.grid_with_deletions(1000, 1000, device="gpu"),
}
ROOTS = 32


def main() -> None:
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as cusp

    prepared = gpu.PREPARED_RUNNERS  # what the patch sets
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
          "prepared runners", prepared, flush=True)
    for label, make in GRAPHS.items():
        g = make()
        matrix = cusp.csr_matrix((cp.ones(g.n_edges, dtype=cp.float32), g.indices,
                                  g.indptr), shape=g.shape)
        degree = cp.asnumpy(cp.diff(g.indptr))
        roots = [int(r) for r in
                 np.random.default_rng(2).choice(np.flatnonzero(degree), ROOTS)]
        for variant in ("persistent", "tiled"):
            times: dict[tuple[str, str], list[float]] = {}
            for r in roots:
                reference = None
                for on in (True, False):
                    gpu.PREPARED_RUNNERS = prepared if on else ()
                    for name, x in (("csr", g), ("matrix", matrix)):
                        bfs(x, r, variant=variant, device="gpu")  # (prepares, when on)
                        if not on:  # a call kept before stays prepared: forget it
                            inner = g if x is g else graph_cache.unchanged_cupy_graph(x)
                            gpu.workspace(inner).searches.pop(variant, None)
                        s, res = event_seconds(lambda x=x, r=r, v=variant: bfs(
                            x, r, variant=v, device="gpu", predecessors=True))
                        times.setdefault((name, "on" if on else "off"), []).append(s)
                        if reference is None:
                            reference = res.distances
                        assert bool((res.distances == reference).all()), (label, r)
            gpu.PREPARED_RUNNERS = prepared
            mean = {k: 1e6 * float(np.mean(v)) for k, v in times.items()}
            print(f"graph={label} variant={variant} "
                  + " ".join(f"{a}_{b}_us={v:.1f}" for (a, b), v in mean.items())
                  + f" matrix_over_csr_on={mean['matrix', 'on'] / mean['csr', 'on']:.3f}"
                  + f" matrix_over_csr_off={mean['matrix', 'off'] / mean['csr', 'off']:.3f}"
                  + f" csr_off_over_on={mean['csr', 'off'] / mean['csr', 'on']:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
