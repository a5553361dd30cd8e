"""Old and new GPU points-to solvers timed in one process, interleaved, on the shared LSG
programs: one JSON line per program with each variant's solve seconds (CUDA events around
the whole solve, after one warm-up solve each), phases and sweeps, and whether every
variable's set equals the first variant's (compared on the GPU).

    python3 scripts/pta_compare.py [--before DIR] [--programs svn,python]
                                   [--variants hub0,hub64] [--repeat 2] [--sweeps svn]

Variants: ``before`` (DIR/gpu_before.py, a copy of an older gpu.py naming its own kernels:
see scripts/pta_profile.py) and ``hubC`` / ``hubC-M`` (this tree's solver with
gpu.HUB_CHUNK = C and gpu.HUB_MIN = M, default 2C; hub0 is the one-warp path).
--sweeps: programs that get one more solve per variant with the sweep log on (median and
total microseconds of the sweeps after each launch's first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from pta_profile import load_before  # noqa: E402

from morphgpu import backend  # noqa: E402
from morphgpu.pta import constraints, gpu, layout  # noqa: E402
from morphgpu.testing import shared_path  # noqa: E402


def variant_solver(name: str, before):
    if name == "before":
        return before.solve
    chunk, _, hub_min = name[3:].partition("-")
    chunk = int(chunk)
    hub_min = int(hub_min) if hub_min else 2 * chunk

    def solve(lay):
        old = gpu.HUB_CHUNK, gpu.HUB_MIN
        gpu.HUB_CHUNK, gpu.HUB_MIN = chunk, hub_min
        try:
            return gpu.solve(lay)
        finally:
            gpu.HUB_CHUNK, gpu.HUB_MIN = old
    return solve


def timed(solve, lay):
    cp = backend.cupy_module()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    out = solve(lay)
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / 1e3, out


def same_sets(a, b, chunk: int = 8192) -> bool:
    cp = backend.cupy_module()
    rows_a, var_a = a[0], cp.asarray(a[1])
    rows_b, var_b = b[0], cp.asarray(b[1])
    for i in range(0, var_a.size, chunk):
        if not bool(cp.array_equal(rows_a[var_a[i:i + chunk]], rows_b[var_b[i:i + chunk]])):
            return False
    return True


def sweep_summary(solve, lay) -> dict:
    os.environ["MORPHGPU_PTA_SWEEP_LOG"] = "8192"
    try:
        _, _, stats = solve(lay)
    finally:
        del os.environ["MORPHGPU_PTA_SWEEP_LOG"]
    log = stats.get("sweep_log")
    if log is None:
        return {}
    t, items = log[:, 0], log[:, 1]
    later = items[1:] < lay.n_nodes  # a launch's first sweep lists every node
    dt = (t[1:] - t[:-1]) / 1e3
    return {"us_later_median": round(float(np.median(dt[later])), 1) if later.any() else 0,
            "us_later_total": round(float(dt[later].sum()), 1),
            "us_first_total": round(float(dt[~later & (items[:-1] >= lay.n_nodes)].sum()), 1),
            "later_sweeps": int(later.sum())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path)
    parser.add_argument("--programs", default="svn,python,gcc,ex,php,mplayer")
    parser.add_argument("--variants", default="before,hub0,hub64")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sweeps", default="")
    args = parser.parse_args()
    before = load_before(args.before) if args.before else None
    variants = [v for v in args.variants.split(",") if v and (v != "before" or before)]
    sweeps = set(filter(None, args.sweeps.split(",")))
    print(json.dumps({"device": backend.gpu_properties().get("name"), "variants": variants}),
          flush=True)
    for name in filter(None, args.programs.split(",")):
        nodes = shared_path("data", "pta", f"{name}_nodes.txt.gz")
        if nodes is None:
            continue
        lay = layout.build_layout(constraints.load_lsg(nodes.with_name(name)))
        solvers = {v: variant_solver(v, before) for v in variants}
        times: dict[str, list[float]] = {v: [] for v in variants}
        last: dict[str, tuple] = {}
        for v in variants:  # warm-up (compiles, allocator pools)
            del_ = solvers[v](lay)
            del del_
        for _ in range(args.repeat):
            for v in variants:
                last.pop(v, None)
                t, last[v] = timed(solvers[v], lay)
                times[v].append(t)
        ref = variants[0]
        row: dict = {"program": name, "nodes": lay.n_nodes, "words": lay.n_words}
        for v in variants:
            stats = last[v][2]
            row[v] = {"mean": round(sum(times[v]) / len(times[v]), 5),
                      "min": round(min(times[v]), 5), "sweeps": stats["sweeps"],
                      "rounds": stats["rounds"],
                      "phases": {k: round(x, 5) for k, x in stats["seconds"].items()}}
            if v != ref:
                row[v]["vs_" + ref] = round(row[ref]["mean"] / row[v]["mean"], 3)
                row[v]["equal_" + ref] = same_sets(last[ref], last[v])
        last.clear()
        if name in sweeps:
            for v in variants:
                row[v]["sweep_log"] = sweep_summary(solvers[v], lay)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
