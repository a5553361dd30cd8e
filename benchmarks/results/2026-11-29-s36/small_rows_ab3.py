"""Session 36: sorted_rows_ab2.py's arms on graphs under RELABEL_MIN_VERTICES (2^20), where
relabel="auto" searches the graph as given with the hub cache, plus the relabel forced.
Ran on the tree before the hub cache's deletion (DirectionCall's use_cache is gone since).
Usage: python3 small_rows_ab3.py ROOTS"""
import sys
import time

sys.path.insert(0, "benchmarks")
sys.path.insert(0, "benchmarks/results/2026-11-29-s36")
import numpy as np  # noqa: E402
import road_like  # noqa: E402
import sorted_rows_ab2 as ab2  # noqa: E402

from morphgpu import backend, generators  # noqa: E402
from morphgpu.bfs.gpu import direction  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

GRAPHS = {
    "kron 16": lambda: generators.kronecker(16, 16, device="gpu"),
    "kron 18": lambda: generators.kronecker(18, 16, device="gpu"),
    "kron 19": lambda: generators.kronecker(19, 16, device="gpu"),
    "kron 19 a.35": lambda: generators.kronecker(19, 16, a=0.35, b=0.25, c=0.25, device="gpu"),
    "uniform 2^16 deg16": lambda: road_like.uniform_random(1 << 16, 16, device="gpu"),
    "uniform 2^18 deg16": lambda: road_like.uniform_random(1 << 18, 16, device="gpu"),
    "uniform 2^19 deg8": lambda: road_like.uniform_random(1 << 19, 8, device="gpu"),
}


def main() -> None:
    cp = backend.cupy_module()
    n_roots = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    for label, make in GRAPHS.items():
        t0 = time.time()
        g = make()
        s = ab2.sorted_rows(g)
        cp.cuda.runtime.deviceSynchronize()
        sort_s = time.time() - t0
        ws, ws_sorted = workspace(g), workspace(s)
        arms = {
            "as given": direction.DirectionCall(ws, rule="beamer", use_cache=True,
                                                relabel=False),
            "as given, no cache": direction.DirectionCall(ws, rule="beamer", use_cache=False,
                                                          relabel=False),
            "relabelled": direction.DirectionCall(ws, rule="beamer", use_cache=True,
                                                  relabel=True),
            "sorted, no cache": direction.DirectionCall(ws_sorted, rule="beamer",
                                                        use_cache=False, relabel=False),
        }
        deg = g.degrees().get()
        rng = np.random.default_rng(1)
        roots = [int(r) for r in rng.choice(np.flatnonzero(deg > 0), n_roots, replace=False)]
        names = list(arms)
        times = {a: [] for a in arms}
        ev = [cp.cuda.Event(), cp.cuda.Event()]
        for i, r in enumerate(roots):
            order = names[i % len(names):] + names[:i % len(names)]
            labels = {}
            for a in order:
                for _ in range(2 if i == 0 else 1):
                    ev[0].record()
                    dist, _parent, _fig = arms[a](r, True)
                    ev[1].record()
                    ev[1].synchronize()
                times[a].append(cp.cuda.get_elapsed_time(ev[0], ev[1]))
                labels[a] = dist.copy()
            for a in names[1:]:
                assert bool((labels[a] == labels[names[0]]).all()), (label, a, r)
        shares = ab2.hub_shares(g)
        del arms, ws, ws_sorted, g, s
        ms = {a: float(np.mean(t)) for a, t in times.items()}
        print(f"graph={label} roots={n_roots} sort_s={sort_s:.2f} {shares} "
              + " ".join(f"{a.replace(' ', '_').replace(',', '')}_ms={v:.4f}"
                         for a, v in ms.items())
              + " " + " ".join(f"x_{a.replace(' ', '_').replace(',', '')}="
                               f"{ms['as given'] / ms[a]:.3f}" for a in names[1:]),
              flush=True)


if __name__ == "__main__":
    main()
