"""Session 36: the beamer runner (relabel="auto": relabelled copy or sorted rows) with
Beamer's ALPHA / BETA moved, and with the bottom-up batch defines moved, against the
tree's, on wide graphs of several shapes (one process, roots in a rotating order, labels
equal to the tree arm's on every root).
Usage: python3 rule_ab4.py ROOTS [GRAPH,GRAPH...] [ALPHA:BETA,ALPHA:BETA...] (then only the
tree against those rule arms)"""
import sys
import time

sys.path.insert(0, "benchmarks")
sys.path.insert(0, "benchmarks/results/2026-11-29-s36")
import bfs_ab  # noqa: E402
import numpy as np  # noqa: E402
import sorted_rows_ab2 as ab2  # noqa: E402

from morphgpu import backend  # noqa: E402
from morphgpu.bfs.gpu import direction  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

ARMS = [("tree", 14.0, 24.0, {}), ("alpha 7", 7.0, 24.0, {}), ("alpha 28", 28.0, 24.0, {}),
        ("beta 12", 14.0, 12.0, {}), ("beta 48", 14.0, 48.0, {}),
        ("batch 4", 14.0, 24.0, {"MG_BFS_BU_BATCH": 4}),
        ("probe 2", 14.0, 24.0, {"MG_BFS_BU_PROBE": 2})]


def main() -> None:
    cp = backend.cupy_module()
    n_roots = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    names = sys.argv[2].split(",") if len(sys.argv) > 2 else list(ab2.GRAPHS)
    rule_arms = ARMS
    if len(sys.argv) > 3:
        pairs = [tuple(float(x) for x in p.split(":")) for p in sys.argv[3].split(",")]
        rule_arms = ARMS[:1] + [(f"a{a:g} b{b:g}", a, b, {}) for a, b in pairs]
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    for label in names:
        t0 = time.time()
        g = ab2.GRAPHS[label]()
        ws = workspace(g)
        arms = {}
        for arm, alpha, beta, defines in rule_arms:
            direction.ALPHA, direction.BETA = alpha, beta
            call = direction.DirectionCall(ws, rule="beamer", relabel="auto")
            if defines:
                layout = bfs_ab._layout((call.search_ws or ws).g)
                call = call.on_grid(bfs_ab._direction_build(layout, defines)[0])
            arms[arm] = call
        direction.ALPHA, direction.BETA = 14.0, 24.0
        cp.cuda.runtime.deviceSynchronize()
        prep_s = time.time() - t0
        deg = g.degrees().get()
        rng = np.random.default_rng(1)
        roots = [int(r) for r in rng.choice(np.flatnonzero(deg > 0), n_roots, replace=False)]
        order0 = list(arms)
        times = {a: [] for a in arms}
        ev = [cp.cuda.Event(), cp.cuda.Event()]
        for i, r in enumerate(roots):
            order = order0[i % len(order0):] + order0[:i % len(order0)]
            labels = {}
            for a in order:
                for _ in range(2 if i == 0 else 1):
                    ev[0].record()
                    dist, _parent, _fig = arms[a](r, True)
                    ev[1].record()
                    ev[1].synchronize()
                times[a].append(cp.cuda.get_elapsed_time(ev[0], ev[1]))
                labels[a] = dist.copy()
            for a in order0[1:]:
                assert bool((labels[a] == labels["tree"]).all()), (label, a, r)
        chosen = arms["tree"].order
        del arms, ws, g
        cp.get_default_memory_pool().free_all_blocks()
        ms = {a: float(np.mean(t)) for a, t in times.items()}
        print(f"graph={label} order={chosen.replace(' ', '_')} roots={n_roots} "
              f"prep_s={prep_s:.1f} tree_ms={ms['tree']:.4f} "
              + " ".join(f"x_{a.replace(' ', '_')}={ms['tree'] / ms[a]:.3f}"
                         for a in order0[1:]), flush=True)


if __name__ == "__main__":
    main()
