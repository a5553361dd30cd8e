"""Session 37, prepared for the next GPU session: cluster_bfs.cu (a BFS whose level loop
runs inside one thread-block cluster) against bfs() with ``persistent`` and ``auto`` on
the deep graphs whose levels miss the issue's 3 us (Delaunay graphs of random points) and
on grids, same process, same roots. Per arm: event time per search, us per level, and
the labels against bfs()'s on every root. Arms: clusters of 8 blocks with the labels
claimed by a global compare-and-swap, and clusters of 8 and 4 with a visited bitmap in
the cluster's shared memory (where it fits). One run takes about two minutes (most of it
building the 4M-point Delaunay graph).
Usage: python3 cluster_bfs.py [--quick]"""
import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402
from harness import event_seconds  # noqa: E402

from morphgpu import backend, direct_launch, generators, kernels  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402

PROBE = Path(__file__).resolve().parent / "cluster_bfs.cu"
GRAPHS = {
    "delaunay 16k": lambda: road_like.delaunay(1 << 14, device="gpu"),
    "grid-del 1000^2": lambda: road_like.grid_with_deletions(1000, 1000, device="gpu"),
    "grid 1000^2": lambda: generators.grid2d(1000, 1000, device="gpu"),
    "delaunay 1M": lambda: road_like.delaunay(1_000_000, device="gpu"),
    "delaunay 4M": lambda: road_like.delaunay(4_000_000, device="gpu"),
}
ARMS = ((8, 0), (8, 1), (4, 1))  # (blocks per cluster, bitmap)
BLOCK = 1024
SMEM_LIMIT = 200 * 1024  # dynamic shared memory a block may take for the bitmap
PARAMS = ("indptr", "indices", "dist", "queue_a", "queue_b", "n", "source",
          "words_per_block", "levels_out")


def main() -> None:
    cp = backend.cupy_module()
    quick = "--quick" in sys.argv
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    for label, make in list(GRAPHS.items())[: 3 if quick else None]:
        run_graph(cp, label, make())
        cp.get_default_memory_pool().free_all_blocks()


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def run_graph(cp, label: str, g) -> None:
    n = g.n_vertices
    indptr = g.indptr.astype(cp.int64)
    indices = g.indices.astype(cp.int32)
    degree = cp.asnumpy(cp.diff(indptr))
    roots = [int(r) for r in np.random.default_rng(1).choice(np.flatnonzero(degree), 6)]
    reference = {}
    for variant in ("persistent", "auto"):
        bfs(g, roots[0], variant=variant, device="gpu")
        seconds, levels, ran = [], [], ""
        for r in roots:
            s, res = event_seconds(lambda r=r, v=variant, g=g: bfs(g, r, variant=v,
                                                                   device="gpu"))
            seconds.append(s)
            levels.append(res.n_levels)
            ran = res.variant
            reference[r] = res.distances
        ms = 1e3 * float(np.mean(seconds))
        print(f"graph={label} n={n} arm=bfs {variant} ran={ran} ms={ms:.4f} "
              f"levels={np.mean(levels):.1f} "
              f"us_per_level={1e6 * float(np.sum(seconds)) / float(np.sum(levels)):.3f}",
              flush=True)
    for cluster, bitmap in ARMS:
        words = ceil_div(ceil_div(n, 32), cluster)
        smem = 4 * words if bitmap else 0
        if smem > SMEM_LIMIT:
            print(f"graph={label} arm=cluster {cluster} bitmap={bitmap}: bitmap of "
                  f"{smem} bytes per block does not fit", flush=True)
            continue
        kernel = kernels.get_kernel(PROBE, "cluster_bfs", cooperative=True,
                                    defines={"CLUSTER": cluster, "BITMAP": bitmap})
        if smem > 48 * 1024:
            kernel.max_dynamic_shared_size_bytes = smem
        dist = cp.empty(n, dtype=cp.int32)
        queue_a = cp.empty(cluster * n, dtype=cp.int32)
        queue_b = cp.empty(cluster * n, dtype=cp.int32)
        levels_out = cp.zeros(1, dtype=cp.int32)
        pack = direct_launch.PackedLaunch(
            kernel, PARAMS,
            {"indptr": indptr, "indices": indices, "dist": dist, "queue_a": queue_a,
             "queue_b": queue_b, "n": np.int64(n), "source": np.int32(0),
             "words_per_block": np.uint32(words), "levels_out": levels_out},
            cooperative=False, shared_mem=smem)

        def search(r: int, dist=dist, queue_a=queue_a, pack=pack, cluster=cluster) -> float:
            dist.fill(-1)
            dist[r] = 0
            queue_a[0] = r
            cp.cuda.get_current_stream().synchronize()
            s, _ = event_seconds(lambda: pack.launch(cluster, BLOCK, source=np.int32(r)))
            return s

        search(roots[0])
        seconds, levels, right = [], [], True
        for r in roots:
            seconds.append(search(r))
            levels.append(int(levels_out.get()[0]))
            right &= bool((dist == reference[r]).all())
        ms = 1e3 * float(np.mean(seconds))
        print(f"graph={label} n={n} arm=cluster {cluster} bitmap={bitmap} ms={ms:.4f} "
              f"levels={np.mean(levels):.1f} "
              f"us_per_level={1e6 * float(np.sum(seconds)) / float(np.sum(levels)):.3f} "
              f"labels_equal={right}", flush=True)


if __name__ == "__main__":
    main()
