"""Session 36: where a cupyx csr_matrix input's extra time goes in bfs() (the sparse-matrix
rows: +50-110 us per call on graphs of 16k-264k vertices, whatever their size). Per graph:
CUDA-event time per call of bfs() on the CSRGraph and on the matrix (second and later
calls); host wall time per call; the graph cache's check alone (graph_of + confirm), its
GPU part alone; a cProfile of matrix calls (top functions by own time).
Usage: python3 matrix_path_profile.py"""
import cProfile
import pstats
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402

from morphgpu import backend, generators, graph_cache  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402
from morphgpu.csr import _sparse_to_graph  # noqa: E402

GRAPHS = {
    "kron 14": lambda: generators.kronecker(14, 16, device="gpu"),
    "uniform 2^14": lambda: road_like.uniform_random(1 << 14, 16, device="gpu"),
    "grid2d 300": lambda: generators.grid2d(300, 300, device="gpu"),
    "kron 21": lambda: generators.kronecker(21, 16, device="gpu"),
}


def main() -> None:
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as cusp

    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    for label, make in GRAPHS.items():
        g = make()
        matrix = cusp.csr_matrix((cp.ones(g.n_edges, dtype=cp.float32), g.indices,
                                  g.indptr), shape=g.shape)
        variant = bfs(g, 0, device="gpu").variant
        roots = [int(r) for r in np.random.default_rng(0).integers(0, g.n_vertices, 64)]

        def call(graph, r, variant=variant):
            return bfs(graph, r, variant=variant, device="gpu", predecessors=True)

        for x in (g, matrix):
            call(x, 0)
            call(x, 1)
        ev = [cp.cuda.Event(), cp.cuda.Event()]
        out = {}
        for name, x in (("csr", g), ("matrix", matrix)):
            gpu_t, host_t = [], []
            for r in roots:
                cp.cuda.runtime.deviceSynchronize()
                ev[0].record()
                t0 = time.perf_counter()
                call(x, r)
                host_t.append(time.perf_counter() - t0)
                ev[1].record()
                ev[1].synchronize()
                gpu_t.append(cp.cuda.get_elapsed_time(ev[0], ev[1]) * 1e3)
            out[name] = (float(np.mean(gpu_t)), 1e6 * float(np.mean(host_t)))
        # the cache's check alone, as bfs() runs it
        check_gpu, check_host = [], []
        build = lambda m: _sparse_to_graph(m, True, "graph")  # noqa: E731
        for _ in range(64):
            cp.cuda.runtime.deviceSynchronize()
            ev[0].record()
            t0 = time.perf_counter()
            pending = []
            graph_cache.graph_of(matrix, True, build, pending=pending)
            ok = graph_cache.confirm(pending)
            check_host.append(time.perf_counter() - t0)
            ev[1].record()
            ev[1].synchronize()
            check_gpu.append(cp.cuda.get_elapsed_time(ev[0], ev[1]) * 1e3)
            assert ok
        print(f"graph={label} n={g.n_vertices} m={g.n_edges} variant={variant} "
              f"csr_event_us={out['csr'][0]:.1f} csr_host_us={out['csr'][1]:.1f} "
              f"matrix_event_us={out['matrix'][0]:.1f} matrix_host_us={out['matrix'][1]:.1f} "
              f"check_event_us={np.mean(check_gpu):.1f} "
              f"check_host_us={1e6 * np.mean(check_host):.1f}",
              flush=True)
        if label in ("kron 14", "grid2d 300"):
            prof = cProfile.Profile()
            prof.enable()
            for r in roots * 4:
                call(matrix, r)
            prof.disable()
            cp.cuda.runtime.deviceSynchronize()
            stats = pstats.Stats(prof)
            stats.sort_stats("tottime").print_stats(22)
            stats.sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
