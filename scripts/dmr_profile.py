"""Where the GPU refinement loop spends its time: per round and per kernel (CUDA events).

    python3 scripts/dmr_profile.py [--sizes 1000000 10000000] [--configs 2c 0c 1c 3c 2s]
        [--json PATH]

For each ``random_mesh`` size (triangles in, the benchmark's seed), each deferral depth
(``refine_gpu(defer_depth=...)``) and each mapping of claimants to planning threads
(``consecutive_plans``): the loop time of a run without events, then a run with
events: rounds, claimants, abort ratio, kernel totals, the big rounds (>= 10k claimants)
against the small ones, and the first rounds one by one. Every output gets the
benchmark's vectorised validity check. Triangle's time is not measured here (the benchmark
does that); pass ``--triangle-seconds`` to print ratios against known figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import numpy as np  # noqa: E402

from morphgpu import backend  # noqa: E402
from morphgpu.dmr import api  # noqa: E402
from morphgpu.dmr.gpu import refine_gpu  # noqa: E402
from morphgpu.dmr.mesh import to_triangle_dict  # noqa: E402

KERNELS = ("find_bad", "plan_and_race", "prioritycheck", "check", "apply")


def prepared(n_triangles: int):
    mesh = api.random_mesh(n_triangles // 2, seed=42)
    v = mesh["vertices"][mesh["triangles"]]
    d1, d2 = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
    area = float(np.sum(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / 2)
    ours, _ = api.prepare(mesh, "gpu")
    ours = api._morton_layout(ours)
    ours.extra["n_input"] = ours.n_vertices
    return ours, area


def one(ours, area: float, depth: int, consecutive: bool, baseline: float | None) -> dict:
    from dmr import quick_check  # benchmarks/dmr.py

    cp = backend.cupy_module()
    options = {"defer_depth": depth, "consecutive_plans": consecutive}
    _, plain = refine_gpu(ours, 30.0, None, **options)
    rows: list[dict] = []
    out, stats = refine_gpu(ours, 30.0, None, profile=rows, **options)
    cp.cuda.get_current_stream().synchronize()
    host = {k: backend.to_host(v) for k, v in to_triangle_dict(out).items()}
    ok, smallest = quick_check(host, area, 30.0)
    big = [r for r in rows if r.get("claimants", 0) >= 10_000]
    small = [r for r in rows if r.get("claimants", 0) < 10_000]

    def total(rs, k=None):
        keys = [k] if k else KERNELS
        return round(sum(r.get(n + "_ms", 0.0) for r in rs for n in keys), 3)

    summary = {
        "triangles_in": ours.n_triangles, "triangles_out": out.n_triangles, "depth": depth,
        "consecutive": consecutive,
        "loop_s": round(plain["gpu_loop_seconds"], 4),
        "loop_s_profiled": round(stats["gpu_loop_seconds"], 4),
        "rounds": stats["rounds"], "full_scans": stats["full_scans"],
        "missed_by_candidates": stats["missed_by_candidates"],
        "claimants": stats["claimants"], "gave_way": stats["gave_way"],
        "refinements": stats["refinements"],
        "abort_ratio": round(stats["abort_ratio"], 3), "gpu_stuck": stats["gpu_stuck"],
        "stuck_retries": stats["stuck_retries"], "valid": ok, "min_angle": round(smallest, 3),
        "kernel_ms": {k: total(rows, k) for k in KERNELS},
        "big_rounds": len(big), "big_ms": total(big), "small_rounds": len(small),
        "small_ms": total(small),
        "per_round": [  # [bad triangles claimed, round ms] for every round
            [r.get("claimants", 0), round(sum(r.get(n + "_ms", 0.0) for n in KERNELS), 3)]
            for r in rows
        ],
        "first_rounds": [
            {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}
            for r in rows[:6]
        ],
    }
    if baseline:
        summary["x_triangle_loop"] = round(baseline / plain["gpu_loop_seconds"], 1)
    return summary


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--configs", nargs="+", default=["2c", "0c", "1c", "3c", "2s"],
                    help="deferral depth, then c (consecutive claimants per planning "
                    "thread) or s (strided)")
    ap.add_argument("--triangle-seconds", type=float, nargs="*", default=[],
                    help="Triangle rpq30 seconds per size, for ratios")
    ap.add_argument("--json")
    args = ap.parse_args()
    warm, _ = prepared(4000)
    configs = [(int(c[:-1]), c[-1] == "c") for c in args.configs]
    for depth, consecutive in configs:
        refine_gpu(warm, 30.0, None, defer_depth=depth, consecutive_plans=consecutive)
    results = []
    for i, size in enumerate(args.sizes):
        t0 = time.perf_counter()
        ours, area = prepared(size)
        print(f"# {size}: mesh and prepare {time.perf_counter() - t0:.1f} s", flush=True)
        base = args.triangle_seconds[i] if i < len(args.triangle_seconds) else None
        for depth, consecutive in configs:
            try:
                s = one(ours, area, depth, consecutive, base)
            except Exception as exc:  # one failing configuration must not hide the rest
                s = {"triangles_in": size, "depth": depth, "consecutive": consecutive,
                     "error": repr(exc)}
            results.append(s)
            print(json.dumps(s), flush=True)
        del ours
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
