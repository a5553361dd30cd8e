"""Session 36 (session 35's sorted_rows_ab.py, arms and shapes added): the direction
kernel (beamer) on the graph as given but with each row's neighbours sorted by
non-increasing degree (ties by id), no relabel and so no map back, against the tree's
runner (the degree-relabelled copy and its map back) and the graph as given. Session 35
found sorted rows without the hub cache 1.12x on uniform 2^22 and 0.80-0.92x on Kronecker:
which part is the cache, and where between the shapes the relabel starts to pay.

Arms (each a gpu.direction.DirectionCall, timed with CUDA events around the call, the same
roots in a rotating order; labels equal to the first arm's on every root):
  relabelled  relabel="auto" (the tree's runner)
  as given    relabel=False
  sorted      relabel=False on the sorted-rows copy, hub cache on
  sorted, no cache   the same without the hub cache
  as given, no cache  relabel=False, hub cache off
Each graph's line also gives hub shares: the fraction of CSR entries that point at the top
n/1024, n/64 and n/16 vertices by degree.
Ran on the tree before the hub cache's deletion (DirectionCall's use_cache is gone since).
Usage: python3 sorted_rows_ab2.py ROOTS [GRAPH,GRAPH...]"""
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np  # noqa: E402
import road_like  # noqa: E402

from morphgpu import backend, generators  # noqa: E402
from morphgpu.bfs.gpu import direction  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402
from morphgpu.csr import CSRGraph  # noqa: E402


def sorted_rows(g: CSRGraph) -> CSRGraph:
    """``g`` with each row's neighbours by non-increasing degree, ties by id (a stable sort
    of rows already in id order); same ids, same indptr."""
    xp = g.xp
    n, m = g.n_vertices, g.n_edges
    deg = g.degrees().astype(xp.int64)
    top = int(deg.max()) if n else 0
    rows = xp.searchsorted(g.indptr.astype(xp.int64), xp.arange(m, dtype=xp.int64),
                           side="right") - 1
    key = rows * (top + 1) + (top - deg[g.indices.astype(xp.int64)])
    order = xp.argsort(key, kind="stable") if xp is np else xp.argsort(key)
    return CSRGraph(g.indptr, g.indices[order], None, n, g.directed)


GRAPHS = {
    "kron 21": lambda: generators.kronecker(21, 16, device="gpu"),
    "kron 22": lambda: generators.kronecker(22, 16, device="gpu"),
    "uniform 2^22 deg16": lambda: road_like.uniform_random(1 << 22, 16, device="gpu"),
    "uniform 2^23 deg8": lambda: road_like.uniform_random(1 << 23, 8, device="gpu"),
    "uniform 2^21 deg32": lambda: road_like.uniform_random(1 << 21, 32, device="gpu"),
    "kron 20 ef32": lambda: generators.kronecker(20, 32, device="gpu"),
    "kron 21 a.45": lambda: generators.kronecker(21, 16, a=0.45, b=0.22, c=0.22, device="gpu"),
    "kron 21 a.35": lambda: generators.kronecker(21, 16, a=0.35, b=0.25, c=0.25, device="gpu"),
    "kron 22 a.45": lambda: generators.kronecker(22, 16, a=0.45, b=0.22, c=0.22, device="gpu"),
    "kron 22 a.50": lambda: generators.kronecker(22, 16, a=0.50, b=0.20, c=0.20, device="gpu"),
    "uniform 2^24 deg8": lambda: road_like.uniform_random(1 << 24, 8, device="gpu"),
    "uniform 2^20 deg16": lambda: road_like.uniform_random(1 << 20, 16, device="gpu"),
}


def hub_shares(g: CSRGraph) -> str:
    cp = backend.cupy_module()
    deg = cp.sort(g.degrees().astype(cp.int64))[::-1]
    total = max(int(deg.sum()), 1)
    n = g.n_vertices
    return " ".join(f"hub_share_{k}={int(deg[:max(n // k, 1)].sum()) / total:.3f}"
                    for k in (1024, 64, 16))


def main() -> None:
    cp = backend.cupy_module()
    n_roots = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(GRAPHS)
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    for label in names:
        t0 = time.time()
        g = GRAPHS[label]()
        s = sorted_rows(g)
        cp.cuda.runtime.deviceSynchronize()
        sort_s = time.time() - t0
        ws, ws_sorted = workspace(g), workspace(s)
        arms = {
            "relabelled": direction.DirectionCall(ws, rule="beamer", use_cache=True,
                                                  relabel="auto"),
            "as given": direction.DirectionCall(ws, rule="beamer", use_cache=True,
                                                relabel=False),
            "sorted": direction.DirectionCall(ws_sorted, rule="beamer", use_cache=True,
                                              relabel=False),
            "sorted, no cache": direction.DirectionCall(ws_sorted, rule="beamer",
                                                        use_cache=False, relabel=False),
            "as given, no cache": direction.DirectionCall(ws, rule="beamer", use_cache=False,
                                                          relabel=False),
        }
        deg = g.degrees().get()
        rng = np.random.default_rng(1)
        roots = [int(r) for r in rng.choice(np.flatnonzero(deg > 0), n_roots, replace=False)]
        names_ = list(arms)
        times = {a: [] for a in arms}
        ev = [cp.cuda.Event(), cp.cuda.Event()]
        for i, r in enumerate(roots):
            order = names_[i % len(names_):] + names_[:i % len(names_)]
            labels = {}
            for a in order:
                for _ in range(2 if i == 0 else 1):  # the first root: a warm call first
                    ev[0].record()
                    dist, parent, _fig = arms[a](r, True)
                    ev[1].record()
                    ev[1].synchronize()
                times[a].append(cp.cuda.get_elapsed_time(ev[0], ev[1]))
                labels[a] = dist.copy()
            for a in names_[1:]:
                assert bool((labels[a] == labels[names_[0]]).all()), (label, a, r)
        shares = hub_shares(g)
        del arms, ws, ws_sorted, g, s
        cp.get_default_memory_pool().free_all_blocks()
        ms = {a: float(np.mean(t)) for a, t in times.items()}
        print(f"graph={label} roots={n_roots} sort_s={sort_s:.2f} {shares} "
              + " ".join(f"{a.replace(' ', '_').replace(',', '')}_ms={v:.4f}"
                         for a, v in ms.items())
              + " " + " ".join(f"x_{a.replace(' ', '_').replace(',', '')}="
                               f"{ms['relabelled'] / ms[a]:.3f}" for a in names_[1:]),
              flush=True)


if __name__ == "__main__":
    main()
