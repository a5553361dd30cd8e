"""Where a relabelled direction search spends its time (gpu.RELABEL): the search on the
original graph, the search on the degree-relabelled copy alone, and the whole relabelled
call (search and map back) with its options, with and without parents, root by root in
turn, CUDA events around each call. Needs a GPU.

    PYTHONPATH=$PWD python3 scripts/bfs_relabel_profile.py [--scale 21] [--roots 64]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import backend, generators  # noqa: E402
from morphgpu.bfs import gpu  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=21)
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--graph", default="kron", choices=["kron", "rmat"])
    args = parser.parse_args()
    cp = backend.cupy_module()
    if args.graph == "kron":
        g = generators.kronecker(args.scale, 16, device="gpu")
    else:
        g = generators.rmat(args.scale, 32, a=0.45, b=0.15, c=0.15, device="gpu")
    ws = gpu.workspace(g)
    relabelled, _, _, inverse = ws.degree_relabelled()
    ws2 = gpu.workspace(relabelled)
    degrees = np.diff(g.to("cpu").indptr)
    rng = np.random.default_rng(1)
    roots = rng.choice(np.flatnonzero(degrees > 0), size=args.roots, replace=False)
    print(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}; "
          f"{args.graph} scale {args.scale}: n={g.n_vertices} m={g.n_edges}; "
          f"hubs scattered: {ws.hubs_scattered()}")

    def original(r: int, p: bool):
        return gpu.run_direction_persistent(ws, r, p, rule="beamer", relabel=False)

    def inner(r: int, p: bool):
        return gpu.run_direction_persistent(ws2, int(inverse[r]), p, rule="beamer",
                                            relabel=False)

    def with_options(**options):
        def run(r: int, p: bool):
            return gpu.run_direction_persistent(ws, r, p, rule="beamer", relabel=True,
                                                **options)
        return run

    def hub_cache(rule: str, relabel: bool, spread: bool | None = None):
        def run(r: int, p: bool):
            saved = gpu.RELABEL_HUB_CACHE
            gpu.RELABEL_HUB_CACHE = True
            try:
                return gpu.run_direction_persistent(ws, r, p, rule=rule, relabel=relabel,
                                                    spread_queue=spread)
            finally:
                gpu.RELABEL_HUB_CACHE = saved
        return run

    rows = {"original": original, "relabelled search only": inner,
            "relabelled (gather map)": with_options(),
            "relabelled, hub cache": hub_cache("beamer", True),
            "relabelled, bitmap=on": with_options(bitmap=True),
            "relabelled, warp bottom-up": with_options(warp_bottom_up=True),
            "relabelled, flat_hubs=off": with_options(flat_hubs=False),
            "relabelled, spread queue off": with_options(spread_queue=False),
            "original, spread queue off": lambda r, p: gpu.run_direction_persistent(
                ws, r, p, rule="beamer", relabel=False, spread_queue=False)}

    # Enterprise's gamma rule (the direction-optimizing variant) likewise.
    def gamma(relabel: bool, spread: bool):
        def run(r: int, p: bool):
            return gpu.run_direction_persistent(ws, r, p, rule="gamma", relabel=relabel,
                                                spread_queue=spread)
        return run

    rows.update({"gamma original": gamma(False, True),
                 "gamma original, spread off": gamma(False, False),
                 "gamma relabelled": gamma(True, True),
                 "gamma relabelled, spread off": gamma(True, False)})
    reference = {}
    for name, run in rows.items():  # warm-up and a check of every row on two roots
        for r in roots[:2]:
            d, _ = run(int(r), True)
            if name != "relabelled search only" and "gamma" not in name:
                got = d.get()
                reference.setdefault(int(r), got)
                assert np.array_equal(reference[int(r)], got), name
    for parents in (True, False):
        times = {name: [] for name in rows}
        for r in roots:
            for name, run in rows.items():
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                run(int(r), parents)
                stop.record()
                stop.synchronize()
                times[name].append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
        base = np.mean(times["original"])
        for name, t in times.items():
            print(f"  parents={parents!s:<5} {name:<26} mean {np.mean(t):7.1f} us  "
                  f"median {np.median(t):7.1f} us  x{base / np.mean(t):.3f} vs original")
    return 0


if __name__ == "__main__":
    sys.exit(main())
