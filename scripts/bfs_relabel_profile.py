"""Where a relabelled direction search spends its time (gpu.RELABEL): the search on the
original graph, the search on the degree-relabelled copy alone, and the whole relabelled
call (search and map back) with its options, with and without parents, root by root in
turn. Needs a GPU.

Each call is timed twice: as benchmarks/bfs.py does (CUDA events around the call, so the
host's work before the launch counts while the GPU waits), and with the host ahead of the
GPU (a spin kernel queued first), which leaves the GPU's time alone; the host's time to
issue the call is printed beside them. "before" is the call as it was before the follow-up
of 2026-11-24 (BEFORE: no prepared call or spare results, map back by a second launch, no
fused flat-hub level, one vertex at a time bottom-up, no trim); each other row turns one
of those off.

    PYTHONPATH=$PWD python3 scripts/bfs_relabel_profile.py [--scale 21] [--roots 64]
        [--graph kron|rmat] [--options]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import backend, generators  # noqa: E402
from morphgpu.bfs import gpu  # noqa: E402

SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {}
}"""
SPIN_CYCLES = 4_000_000  # about 2 ms at H100/H200 clocks: longer than any call's host work
BEFORE = {"fast": False, "map_back": "launch", "fused_flat": False, "bottom_up_batch": (1, 2),
          "trim": False}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=21)
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--graph", default="kron", choices=["kron", "rmat"])
    parser.add_argument("--options", action="store_true",
                        help="also the search options' rows (hub cache, bitmap, warp "
                             "bottom-up, flat hubs, spread queue, the gamma rule)")
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
          f"{args.graph} scale {args.scale}: n={g.n_vertices} m={g.n_edges}")

    def original(r: int, p: bool):
        return gpu.run_direction_persistent(ws, r, p, rule="beamer", relabel=False)

    def inner(r: int, p: bool):
        return gpu.run_direction_persistent(ws2, int(inverse[r]), p, rule="beamer",
                                            relabel=False)

    def with_options(rule: str = "beamer", relabel: bool = True, **options):
        def run(r: int, p: bool):
            return gpu.run_direction_persistent(ws, r, p, rule=rule, relabel=relabel,
                                                **options)
        return run

    def hub_cache(r: int, p: bool):
        saved = gpu.RELABEL_HUB_CACHE
        gpu.RELABEL_HUB_CACHE = True
        try:
            return gpu.run_direction_persistent(ws, r, p, rule="beamer", relabel=True,
                                                fast=False)
        finally:
            gpu.RELABEL_HUB_CACHE = saved

    rows = {"original": original, "relabelled search only": inner,
            "before": with_options(**BEFORE),
            "fast=off": with_options(fast=False),
            "map_back=launch": with_options(map_back="launch"),
            "fused_flat=on": with_options(fused_flat=True),
            "trim=off": with_options(trim=False),
            "bottom-up batch 1x2": with_options(bottom_up_batch=(1, 2)),
            "bottom-up batch 2x4": with_options(bottom_up_batch=(2, 4)),
            "bottom-up batch 4x1": with_options(bottom_up_batch=(4, 1)),
            "bottom-up batch 4x2": with_options(bottom_up_batch=(4, 2)),
            "bottom-up batch 8x1": with_options(bottom_up_batch=(8, 1)),
            "default": with_options(),
            "default again": with_options()}
    if args.options:
        rows.update({
            "hub cache": hub_cache,
            "bitmap=on": with_options(bitmap=True),
            "warp bottom-up": with_options(warp_bottom_up=True),
            "flat_hubs=off": with_options(flat_hubs=False),
            "spread queue off": with_options(spread_queue=False),
            "original, spread queue off": with_options(relabel=False, spread_queue=False),
            # Enterprise's gamma rule (the direction-optimizing variant).
            "gamma original": with_options("gamma", False),
            "gamma original, spread off": with_options("gamma", False, spread_queue=False),
            "gamma relabelled": with_options("gamma"),
            "gamma relabelled, spread off": with_options("gamma", spread_queue=False)})
    reference = {}
    for name, run in rows.items():  # warm-up and a check of every row on two roots
        for r in roots[:2]:
            d, _ = run(int(r), True)
            if name != "relabelled search only" and "gamma" not in name:
                got = d.get()
                reference.setdefault(int(r), got)
                assert np.array_equal(reference[int(r)], got), name
    spin = cp.RawKernel(SPIN, "spin")
    edges = [float(gpu.edges_out_of_reached(g, original(int(r), False)[0])) for r in roots]
    for parents in (True, False):
        times = {name: [] for name in rows}
        alone = {name: [] for name in rows}
        issue = {name: [] for name in rows}
        for r in roots:
            for name, run in rows.items():
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                run(int(r), parents)
                stop.record()
                stop.synchronize()
                times[name].append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
                spin((1,), (1,), (np.int64(SPIN_CYCLES),))
                start.record()
                t0 = time.perf_counter()
                run(int(r), parents)
                issue[name].append((time.perf_counter() - t0) * 1e6)
                stop.record()
                stop.synchronize()
                alone[name].append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
        base = np.mean(times["original"])
        for name, t in times.items():
            teps = len(edges) / sum(1e-6 * s / e for s, e in zip(t, edges, strict=True))
            print(f"  parents={parents!s:<5} {name:<28} mean {np.mean(t):6.1f} us "
                  f"(x{base / np.mean(t):.3f} vs original, {teps / 1e9:5.1f} GTEPS)  "
                  f"GPU alone {np.mean(alone[name]):6.1f} us  "
                  f"host issue {np.mean(issue[name]):5.1f} us")
    host_breakdown(ws, int(roots[0]))
    return 0


def host_breakdown(ws: gpu.Workspace, root: int, calls: int = 200) -> None:
    """Host microseconds per call: two result allocations, one launch of the prepared
    arguments, and the whole gpu.run (with the GPU kept busy, so none of it waits)."""
    cp = ws.cp
    n = ws.g.n_vertices
    call = next(c for c in ws._launches.values() if isinstance(c, gpu._DirectionCall))
    arguments = list(call.arguments)
    arguments[call.DIST] = call.inner_dist if call.relabelled else cp.empty(n, np.int32)
    arguments[call.SOURCE] = call.source_type(0)
    grid = call.grid

    def per_call(fn) -> float:
        cp.cuda.get_current_stream().synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        spent = (time.perf_counter() - t0) / calls * 1e6
        cp.cuda.get_current_stream().synchronize()
        return spent

    empty = per_call(lambda: (cp.empty(n, np.int32), cp.empty(n, np.int32)))
    launch = per_call(lambda: grid.kernel((grid.grid,), (grid.block,), (*arguments, grid.state),
                                          shared_mem=grid.shared_mem))
    whole = per_call(lambda: gpu.run(ws.g, root, variant="beamer", want_parents=True))
    print(f"  host per call: two allocations {empty:.1f} us, one prepared launch "
          f"({len(arguments) + 1} arguments) {launch:.1f} us, gpu.run {whole:.1f} us")


if __name__ == "__main__":
    sys.exit(main())
