"""Delaunay mesh refinement at 30°: our GPU rounds against Triangle's ``rpq30`` refinement.

Inputs are ``random_mesh`` meshes (the paper's: Delaunay triangulations of uniform random
points in the unit square); both sides refine the same mesh in the same process. Reported:
the GPU refinement loop (the paper's measure; a one-off kernel compile for stuck-triangle
retries is reported apart as compile_s), our end-to-end time (validation, neighbour
construction, transfers, compiles, the loop, the way back), Triangle's time, their ratios,
triangles in and out, rounds, the abort ratio (over the claims actually made) and the bad
triangles that gave way to a worse neighbour instead of claiming. Each output gets a
vectorised validity check; scripts/dmr_profile.py breaks the loop down by round and kernel.
"""

from __future__ import annotations

import math
import time

import harness
import numpy as np

from morphgpu.dmr import api


def quick_check(out: dict, area_in: float, min_angle: float) -> tuple[bool, float]:
    """Vectorised checks fit for millions of triangles: orientation, symmetric neighbours,
    area preserved, smallest angle. (The full independent checker runs in the tests.)"""
    v = np.asarray(out["vertices"])
    t = np.asarray(out["triangles"]).astype(np.int64)
    n = np.asarray(out["neighbors"]).astype(np.int64)
    p = v[t]
    area2 = (p[:, 1, 0] - p[:, 0, 0]) * (p[:, 2, 1] - p[:, 0, 1]) - (p[:, 1, 1] - p[:, 0, 1]) * (
        p[:, 2, 0] - p[:, 0, 0]
    )
    ok = bool(np.all(area2 > 0)) and abs(area2.sum() / 2 - area_in) < 1e-9
    rows = np.nonzero(n >= 0)
    back = n[n[rows]]  # each neighbour must point back
    ok &= bool(np.all((back == rows[0][:, None]).any(axis=1)))
    e = p[:, [2, 0, 1]] - p[:, [1, 2, 0]]
    len2 = (e**2).sum(-1)
    s = np.sort(len2, axis=1)
    cos_small = (s[:, 1] + s[:, 2] - s[:, 0]) / (2 * np.sqrt(s[:, 1] * s[:, 2]))
    smallest = math.degrees(math.acos(min(1.0, float(cos_small.max()))))
    return ok and smallest >= min_angle - 1e-9, smallest


def run(args, record: harness.Record) -> None:
    import triangle

    sizes = [500_000, 1_000_000] if args.quick else [500_000, 1_000_000, 2_000_000, 10_000_000]
    device = "gpu" if args.side == "gpu" else "cpu"
    if device == "cpu":
        sizes = [4_000]
        record.note("no GPU: the CPU path on a small mesh only (it is the CI fallback)")
    api.refine(api.random_mesh(2000, seed=1), device=device)  # compile and warm up
    record.note("Triangle baseline: triangle.triangulate(mesh, 'rpq30Q') on this machine's CPU")
    for target in sizes:
        mesh = api.random_mesh(target // 2, seed=42)
        n_in = len(mesh["triangles"])
        v = mesh["vertices"][mesh["triangles"]]
        d1, d2 = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
        area_in = float(np.sum(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / 2)
        marks: list[tuple[float, int]] = []  # (host time, claimants) per round

        def on_round(r: dict, marks=marks) -> None:
            marks.append((time.perf_counter(), r["bad"]))

        t0 = time.perf_counter()
        out, stats = api.refine_with_stats(
            mesh, min_angle=30.0, device=device, progress=on_round
        )
        ours_end_to_end = time.perf_counter() - t0
        if len(marks) > 1:
            # each round ends with a host read, so host time between rounds is GPU time
            gaps = np.diff([t for t, _ in marks])
            claim = np.array([c for _, c in marks[:-1]])  # gap i is round i's kernels
            big = claim >= 10_000
            record.note(
                f"{n_in} triangles: {int(big.sum())} rounds with >=10k claimants took "
                f"{gaps[big].sum():.4f} s, {int((~big).sum())} smaller rounds "
                f"{gaps[~big].sum():.4f} s; claimants in the first rounds: "
                f"{[c for _, c in marks[:6]]}; GPU-stuck triangles finished on the CPU: "
                f"{stats.get('gpu_stuck', 0)}"
            )
        ok, smallest = quick_check(out, area_in, 30.0)
        loop_s = stats.get("gpu_loop_seconds", stats["total_seconds"])
        # our figures first, so a slow baseline cannot lose them
        record.note(
            f"{n_in} triangles: ours loop {loop_s:.4f} s, end to end {ours_end_to_end:.3f} s, "
            f"{len(out['triangles'])} triangles out, valid {ok}, smallest angle {smallest:.3f}"
        )
        tri_in = {k: mesh[k] for k in ("vertices", "triangles", "segments", "segment_markers")}
        t0 = time.perf_counter()
        ref = triangle.triangulate(tri_in, "rpq30Q")
        triangle_s = time.perf_counter() - t0
        record.row(
            triangles_in=n_in,
            triangles_out=len(out["triangles"]),
            triangle_out=len(ref["triangles"]),
            rounds=stats["rounds"],
            abort_ratio=round(stats["abort_ratio"], 3),
            gave_way=stats.get("gave_way", 0),
            gpu_stuck=stats.get("gpu_stuck", 0),
            stuck_retries=stats.get("stuck_retries", 0),
            prepare_s=stats["prepare_seconds"],
            finish_s=stats.get("finish_seconds", 0.0),
            compile_s=stats.get("compile_seconds", 0.0),
            output_s=stats["output_seconds"],
            loop_s=loop_s,
            end_to_end_s=ours_end_to_end,
            triangle_s=triangle_s,
            speedup_loop=triangle_s / loop_s,
            speedup_end_to_end=triangle_s / ours_end_to_end,
            valid=ok,
            min_angle=round(smallest, 3),
        )


if __name__ == "__main__":
    harness.main("dmr", run)
