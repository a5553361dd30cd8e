"""Delaunay mesh refinement at 30°: our GPU rounds against Triangle's ``rpq30`` refinement.

Inputs are ``random_mesh`` meshes (the paper's: Delaunay triangulations of uniform random
points in the unit square); both sides refine the same mesh in the same process. Reported:
the GPU refinement loop (the paper's measure; a one-off kernel compile for stuck-triangle
retries is reported apart as compile_s), our end-to-end time (validation, neighbour
construction, transfers, compiles, the loop, the way back), Triangle's time, their ratios,
triangles in and out, rounds, the abort ratio (over the claims actually made) and the bad
triangles that gave way to a worse neighbour instead of claiming. Each output gets a
vectorised validity check; scripts/dmr_profile.py breaks the loop down by round and kernel.

On the GPU the same mesh is refined again, in the same process, with every round driven
from the host (``tail_threshold=0``), reported as ``loop_host_rounds_s`` with its rounds
split into big (>= 10k claimants) and small ones; and once per tail threshold (rounds of at
most that many bad triangles in one persistent launch; a note with loop time and tail
rounds), ``loop_tail_s`` and ``tail_gain`` (host rounds' loop over the tail's) at 65,536.
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


TAIL = 65_536  # the tail threshold the row reports


def _prepared(mesh: dict):
    """What refine_with_stats hands refine_gpu (so a loop can be timed alone)."""
    ours, _ = api.prepare(mesh, "gpu")
    ours = api._morton_layout(ours)
    ours.extra["n_input"] = ours.n_vertices
    return ours


def host_rounds(mesh: dict, n_in: int, area_in: float, record: harness.Record) -> dict:
    """The loop with every round launched from the host, and the other tail thresholds."""
    from morphgpu import backend  # noqa: PLC0415
    from morphgpu.dmr.gpu import refine_gpu  # noqa: PLC0415
    from morphgpu.dmr.mesh import to_triangle_dict  # noqa: PLC0415

    ours = _prepared(mesh)
    marks: list[tuple[float, int]] = []  # (host time, claimants) per round

    def on_round(r: dict) -> None:
        marks.append((time.perf_counter(), r["bad"]))

    out, stats = refine_gpu(ours, 30.0, None, tail_threshold=0, progress=on_round)
    host = {k: backend.to_host(v) for k, v in to_triangle_dict(out).items()}
    del out
    ok, _ = quick_check(host, area_in, 30.0)
    del host
    # each round ends with a host read, so host time between rounds is GPU time
    gaps = np.diff([t for t, _ in marks])
    claim = np.array([c for _, c in marks[:-1]])  # gap i is round i's kernels
    big = claim >= 10_000
    record.note(
        f"{n_in} triangles, every round from the host: loop {stats['gpu_loop_seconds']:.4f} s, "
        f"valid {ok}; {int(big.sum())} rounds with >=10k claimants took {gaps[big].sum():.4f} s, "
        f"{int((~big).sum())} smaller rounds {gaps[~big].sum():.4f} s"
    )
    sweep = {}
    for threshold in (16_384, TAIL, 262_144):
        _, st = refine_gpu(ours, 30.0, None, tail_threshold=threshold)
        sweep[threshold] = (round(st["gpu_loop_seconds"], 4), st["tail_rounds"],
                            round(st["tail_seconds"], 4))
    record.note(f"{n_in} triangles, tail threshold -> (loop s, tail rounds, tail s): {sweep}")
    return {"loop": stats["gpu_loop_seconds"], "ok": ok, "tail_loop": sweep[TAIL][0]}


def run(args, record: harness.Record) -> None:
    import triangle

    sizes = [500_000, 1_000_000] if args.quick else [500_000, 1_000_000, 2_000_000, 10_000_000]
    if args.sizes:
        sizes = args.sizes
    device = "gpu" if args.side == "gpu" else "cpu"
    if device == "cpu":
        sizes = [4_000]
        record.note("no GPU: the CPU path on a small mesh only (it is the CI fallback)")
    api.refine(api.random_mesh(2000, seed=1), device=device)  # compile and warm up
    record.note("Triangle baseline: triangle.triangulate(mesh, 'rpq30Q') on this machine's CPU")
    if device == "gpu":
        from morphgpu.dmr import gpu  # noqa: PLC0415

        record.note(f"default: rounds of at most {gpu.TAIL_THRESHOLD} bad triangles run in "
                    f"the persistent tail ({gpu.TAIL_BARRIER} grid barrier; 0: off)")
    for target in sizes:
        mesh = api.random_mesh(target // 2, seed=42)
        n_in = len(mesh["triangles"])
        v = mesh["vertices"][mesh["triangles"]]
        d1, d2 = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
        area_in = float(np.sum(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / 2)
        calls: list[dict] = []
        t0 = time.perf_counter()
        out, stats = api.refine_with_stats(
            mesh, min_angle=30.0, device=device, progress=calls.append
        )
        ours_end_to_end = time.perf_counter() - t0
        ok, smallest = quick_check(out, area_in, 30.0)
        loop_s = stats.get("gpu_loop_seconds", stats["total_seconds"])
        n_out = len(out["triangles"])
        del out
        # our figures first, so a slow baseline cannot lose them
        record.note(
            f"{n_in} triangles: ours loop {loop_s:.4f} s (tail: {stats.get('tail_rounds', 0)} "
            f"rounds in {stats.get('tail_launches', 0)} launches, "
            f"{stats.get('tail_seconds', 0.0):.4f} s), end to end {ours_end_to_end:.3f} s, "
            f"{n_out} triangles out, valid {ok}, smallest angle {smallest:.3f}; claimants in "
            f"the first rounds: {[c['bad'] for c in calls[:6]]}; GPU-stuck triangles "
            f"finished on the CPU: {stats.get('gpu_stuck', 0)}"
        )
        old = host_rounds(mesh, n_in, area_in, record) if device == "gpu" else None
        tri_in = {k: mesh[k] for k in ("vertices", "triangles", "segments", "segment_markers")}
        t0 = time.perf_counter()
        ref = triangle.triangulate(tri_in, "rpq30Q")
        triangle_s = time.perf_counter() - t0
        extra = {}
        if old is not None:
            extra = {
                "loop_host_rounds_s": old["loop"], "loop_tail_s": old["tail_loop"],
                "tail_gain": old["loop"] / old["tail_loop"],
                "speedup_loop_host_rounds": triangle_s / old["loop"],
                "valid_host_rounds": old["ok"],
            }
        record.row(
            triangles_in=n_in,
            triangles_out=n_out,
            triangle_out=len(ref["triangles"]),
            rounds=stats["rounds"],
            tail_rounds=stats.get("tail_rounds", 0),
            tail_launches=stats.get("tail_launches", 0),
            tail_s=stats.get("tail_seconds", 0.0),
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
            **extra,
        )


def add_args(parser) -> None:
    parser.add_argument("--sizes", type=int, nargs="+",
                        help="triangles in (about; default 0.5M 1M 2M 10M)")


if __name__ == "__main__":
    harness.main("dmr", run, add_args)
