"""Delaunay mesh refinement at 30°: our refinement against Triangle's, on three inputs.

Inputs (``--inputs``, default all): ``uniform`` (``random_mesh``, the paper's: Delaunay
triangulations of uniform random points in the unit square), ``clustered``
(``clustered_mesh``: five Gaussian clusters) and ``holes`` (``holes_pslg``: a PSLG with
eight square holes, no triangles given), from 10k to 10M triangles in (``--sizes``;
``--quick``: to 1M). Both sides refine the same input in the same process; Triangle runs
``[r]pq30Q``. Per row: triangles in and out against Triangle's (``out_over_triangle``) and
the estimate ``device="auto"`` decides by (``est_out``); the GPU loop (``loop_s``, the
paper's measure) and our end-to-end time (validation, neighbour construction, transfers,
the loop, the way back) at steady state (``end_to_end_s``, the best of the next calls);
the input's first call in this process after the package's first use (``first_s``;
``first_over_steady_s``: issue 19 asks at most 1 s) and in a fresh process
(``fresh_package_first_s``: the first use there on another mesh, compiles or disk-cache
loads; ``fresh_first_s``, ``fresh_second_s``: this input's calls after it; ``--no-fresh``
skips it); Triangle's time and the ratios; what ``device="auto"`` ran (``auto_engine``)
and its time against Triangle's (``triangle_over_auto``: issue 19 asks at least 1;
where auto ran Triangle, the two timed alternating, ``triangle_paired_s``).
Rounds, the abort ratio (over the claims actually made), the bad triangles that gave way
to a worse neighbour. Each output gets a vectorised validity check (the area is Triangle's
mesh's); scripts/dmr_profile.py breaks the loop down by round and kernel. The header names
the device (harness.Record).

``--tail-sweep`` (GPU, uniform inputs): the same mesh again with every round driven from
the host (``tail_threshold=0``), reported as ``loop_host_rounds_s`` with its rounds split
into big (>= 10k claimants) and small ones; and once per tail threshold (rounds of at most
that many bad triangles in one persistent launch; a note with loop time and tail rounds),
``loop_tail_s`` and ``tail_gain`` (host rounds' loop over the tail's) at 65,536.
"""

from __future__ import annotations

import argparse
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


KINDS = ("uniform", "clustered", "holes")


def make_input(kind: str, target: int, seed: int = 42) -> dict:
    """About ``target`` triangles in (before refinement): uniform random points
    (random_mesh, the paper's), five Gaussian clusters (clustered_mesh), or a PSLG with
    eight square holes and random interior points (holes_pslg, no triangles given: our
    side and Triangle's triangulate it first)."""
    if kind == "uniform":
        return api.random_mesh(max(3, target // 2), seed=seed)
    if kind == "clustered":
        return api.clustered_mesh(max(4, target // 2), seed=seed)
    if kind == "holes":
        return api.holes_pslg(max(0, target // 2), seed=seed)
    raise ValueError(f"input kind: expected one of {KINDS}, got {kind!r}")


def triangle_switches(mesh: dict) -> str:
    return ("r" if "triangles" in mesh else "") + "pq30Q"


def _area(out: dict) -> float:
    v = np.asarray(out["vertices"])[np.asarray(out["triangles"]).astype(np.int64)]
    d1, d2 = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
    return float(np.sum(d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / 2)


def first_call_child(path: str, device: str) -> None:
    """In a fresh process: the package's first use on a small uniform mesh, then this
    input's first and second calls (end to end, seconds); one JSON line on stdout."""
    import json  # noqa: PLC0415

    data = dict(np.load(path))
    t0 = time.perf_counter()
    api.refine(api.random_mesh(2000, seed=1), device=device)
    package_first = time.perf_counter() - t0
    times, stats = [], {}
    for _ in range(2):
        t0 = time.perf_counter()
        _, stats = api.refine_with_stats(data, min_angle=30.0, device=device)
        times.append(time.perf_counter() - t0)
    print(json.dumps({"package_first_s": package_first, "first_s": times[0],
                      "second_s": times[1], "compile_s": stats.get("compile_seconds", 0.0),
                      "warm_up_s": stats.get("warm_up_seconds", 0.0)}), flush=True)


def fresh_process_first_call(mesh: dict, device: str, tmp: str) -> dict:
    """first_call_child in a new interpreter (nothing compiled or cached in memory; CuPy's
    disk cache as it is), the mesh passed through an .npz file."""
    import json  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    path = str(Path(tmp) / "mesh.npz")
    np.savez(path, **{k: np.asarray(v) for k, v in mesh.items()})
    proc = subprocess.run(
        [sys.executable, __file__, "--device", device, "--first-call-of", path],
        capture_output=True, text=True, timeout=3600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"first-call subprocess failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(args, record: harness.Record) -> None:
    import tempfile  # noqa: PLC0415

    import triangle

    device = "gpu" if args.side == "gpu" else "cpu"
    if args.first_call_of:
        first_call_child(args.first_call_of, device)
        return
    sizes = ([10_000, 100_000, 1_000_000] if args.quick
             else [10_000, 100_000, 1_000_000, 10_000_000])
    if args.sizes:
        sizes = args.sizes
    elif device == "cpu":
        sizes = [4_000]
        record.note("no GPU: the CPU path on small meshes only (it is the CI fallback)")
    kinds = args.inputs or list(KINDS)
    t0 = time.perf_counter()
    api.refine(api.random_mesh(2000, seed=1), device=device)  # the package's first use
    record.note(f"package first use (compiles, warm-up; random_mesh(2000)): "
                f"{time.perf_counter() - t0:.3f} s")
    record.note("Triangle baseline: triangle.triangulate(mesh, '[r]pq30Q') on this machine's "
                "CPU; first_s: a new input's first call in this process after the package's "
                "first use; fresh_*: the same in a new process (first use on another mesh "
                "there first); steady_s: the best of the next calls")
    record.note(f"device='auto' sends inputs below AUTO_GPU_MIN_TRIANGLES="
                f"{api.AUTO_GPU_MIN_TRIANGLES} estimated output triangles to Triangle "
                f"(est_out, auto_engine)")
    if device == "gpu":
        from morphgpu.dmr import gpu  # noqa: PLC0415

        record.note(f"default: rounds of at most {gpu.TAIL_THRESHOLD} bad triangles run in "
                    f"the persistent tail ({gpu.TAIL_BARRIER} grid barrier; 0: off)")
    tmp = tempfile.mkdtemp(prefix="dmr-bench-")
    for target in sizes:
        for kind in kinds:
            _row(args, record, triangle, kind, target, device, tmp)


def _best(fn, budget_s: float = 1.0):
    """(seconds, result): the fastest of up to 5 runs while they take under ``budget_s``
    in all (small inputs' times are a few milliseconds and noisy), else of one."""
    best, out, spent = float("inf"), None, 0.0
    for _ in range(5):
        t0 = time.perf_counter()
        out = fn()
        took = time.perf_counter() - t0
        best, spent = min(best, took), spent + took
        if spent > budget_s:
            break
    return best, out


def _best_alternating(fa, fb, budget_s: float = 2.0, runs: int = 7):
    """((seconds, result) of ``fa``, the same of ``fb``): the fastest of each over up to
    ``runs`` alternating calls (a b, b a, ...) while they take under ``budget_s`` in all:
    two figures taken at the same time in the process, so their ratio is not the
    machine's drift between two separate measurements (device="auto" against plain
    Triangle differ by ~2% at 10k triangles, as much as that drift)."""
    best = {"a": (float("inf"), None), "b": (float("inf"), None)}
    spent = 0.0
    for i in range(runs):
        for key in ("ab" if i % 2 == 0 else "ba"):
            t0 = time.perf_counter()
            out = (fa if key == "a" else fb)()
            took = time.perf_counter() - t0
            spent += took
            if took < best[key][0]:
                best[key] = (took, out)
            out = None
        if spent > budget_s:
            break
    return best["a"], best["b"]


def _row(args, record, triangle, kind: str, target: int, device: str, tmp: str) -> None:
    mesh = make_input(kind, target)
    tri_in = {k: mesh[k] for k in ("vertices", "triangles", "segments", "segment_markers",
                                   "holes") if k in mesh}
    triangle_s, ref = _best(lambda: triangle.triangulate(tri_in, triangle_switches(mesh)))
    area_in = _area(ref)  # the domain's area, from Triangle's mesh of it
    calls: list[dict] = []
    t0 = time.perf_counter()
    out, stats = api.refine_with_stats(mesh, min_angle=30.0, device=device,
                                       progress=calls.append)
    first_s = time.perf_counter() - t0
    ok, smallest = quick_check(out, area_in, 30.0)
    n_out = len(out["triangles"])
    del out
    steady = []
    for _ in range(1 if args.quick else 2):
        t0 = time.perf_counter()
        _, st = api.refine_with_stats(mesh, min_angle=30.0, device=device)
        steady.append((time.perf_counter() - t0, st))
    steady_s, steady_stats = min(steady, key=lambda p: p[0])
    loop_s = steady_stats.get("gpu_loop_seconds", steady_stats["total_seconds"])
    n_in = stats["triangles_in"]
    record.note(
        f"{kind} {n_in} triangles: ours loop {loop_s:.4f} s, first call {first_s:.3f} s, "
        f"steady {steady_s:.3f} s, {n_out} triangles out, valid {ok}, smallest angle "
        f"{smallest:.3f}; claimants in the first rounds: {[c['bad'] for c in calls[:6]]}; "
        f"GPU-stuck triangles finished on the CPU: {stats.get('gpu_stuck', 0)}"
    )
    fresh = {} if args.no_fresh else fresh_process_first_call(mesh, device, tmp)
    estimate = api.estimate_output_triangles(api._validated(mesh), 30.0, None)
    auto_s, (_, auto_stats) = _best(
        lambda: api.refine_with_stats(mesh, min_angle=30.0, device="auto"))
    paired_triangle_s = triangle_s
    if auto_stats.get("engine") == "triangle":
        # auto ran Triangle: the two alternating, in the same stretch of the run
        # (triangle_s above, the baseline of the other ratios, was taken before)
        (paired_triangle_s, _), (auto_s, _) = _best_alternating(
            lambda: triangle.triangulate(tri_in, triangle_switches(mesh)),
            lambda: api.refine_with_stats(mesh, min_angle=30.0, device="auto"))
    extra = {}
    if device == "gpu" and kind == "uniform" and args.tail_sweep:
        old = host_rounds(mesh, n_in, area_in, record)
        extra = {"loop_host_rounds_s": old["loop"], "loop_tail_s": old["tail_loop"],
                 "tail_gain": old["loop"] / old["tail_loop"], "valid_host_rounds": old["ok"]}
    record.row(
        input=kind,
        triangles_in=n_in,
        triangles_out=n_out,
        triangle_out=len(ref["triangles"]),
        out_over_triangle=round(n_out / len(ref["triangles"]), 4),
        est_out=int(estimate),
        rounds=steady_stats["rounds"],
        abort_ratio=round(steady_stats["abort_ratio"], 3),
        gave_way=steady_stats.get("gave_way", 0),
        gpu_stuck=steady_stats.get("gpu_stuck", 0),
        stuck_retries=steady_stats.get("stuck_retries", 0),
        prepare_s=steady_stats["prepare_seconds"],
        # its steps (api.prepare_parts: validate, triangulate, mesh, checks, layout)
        **{f"prepare_{k}_s": v for k, v in steady_stats.get("prepare_parts", {}).items()},
        finish_s=steady_stats.get("finish_seconds", 0.0),
        # the host's windows around the GPU-stuck triangles (morphgpu/dmr/finish.py)
        finish_windows=steady_stats.get("finish_windows", 0),
        finish_window_triangles=steady_stats.get("finish_window_triangles", 0),
        output_s=steady_stats["output_seconds"],
        loop_s=loop_s,
        end_to_end_s=steady_s,
        first_s=first_s,
        first_compile_s=stats.get("compile_seconds", 0.0),
        fresh_package_first_s=fresh.get("package_first_s"),
        fresh_first_s=fresh.get("first_s"),
        fresh_second_s=fresh.get("second_s"),
        first_over_steady_s=first_s - steady_s,
        triangle_s=triangle_s,
        speedup_loop=triangle_s / loop_s,
        speedup_end_to_end=triangle_s / steady_s,
        auto_engine=auto_stats.get("engine", "ours"),
        auto_s=auto_s,
        triangle_paired_s=paired_triangle_s,
        triangle_over_auto=paired_triangle_s / auto_s,
        valid=ok,
        min_angle=round(smallest, 3),
        # a PSLG's constrained triangulation (morphgpu/dmr/cdt.py): who built it, why not
        # the GPU where it fell back, its seconds (Triangle's CDT of the segment vertices
        # and the device's insertion rounds, to the mesh), rounds
        cdt_engine=steady_stats.get("cdt", {}).get("engine"),
        cdt_fallback=steady_stats.get("cdt", {}).get("reason"),
        cdt_s=steady_stats.get("cdt", {}).get("seconds_with_segment_cdt"),
        cdt_insert_loop_s=steady_stats.get("cdt", {}).get("loop_seconds"),
        cdt_rounds=steady_stats.get("cdt", {}).get("rounds"),
        # the CDT's steps (device synchronised at each): upload (vertices, scale check),
        # segment_cdt (Triangle on the segment vertices), free_list (device: Morton sort),
        # locate, first_picks (buffers, first picks), loop, mesh (markers, compaction+layout)
        **{f"cdt_{k}_s": v for k, v in steady_stats.get("cdt", {}).get("parts", {}).items()},
        # the first rounds' claimants and insertions (cdt_gpu.ROUND_LOG of them)
        cdt_claims_head=steady_stats.get("cdt", {}).get("claims_per_round", [])[:16],
        cdt_inserted_head=steady_stats.get("cdt", {}).get("inserted_per_round", [])[:16],
        # where a first call (first_s) and the auto call (auto_s) spend their time, against
        # the steady call's parts above: preparation (with the CDT), loop, output
        **_parts("first", stats),
        **_parts("auto", auto_stats),
        **extra,
    )


def _parts(prefix: str, stats: dict) -> dict:
    """A call's main parts (seconds), named ``prefix_*``."""
    return {f"{prefix}_prepare_s": stats.get("prepare_seconds"),
            f"{prefix}_cdt_s": stats.get("cdt", {}).get("seconds_with_segment_cdt"),
            f"{prefix}_loop_s": stats.get("gpu_loop_seconds"),
            f"{prefix}_output_s": stats.get("output_seconds"),
            f"{prefix}_total_s": stats.get("total_seconds")}


def add_args(parser) -> None:
    parser.add_argument("--sizes", type=int, nargs="+",
                        help="triangles in (about; default 10k 100k 1M 10M, --quick to 1M)")
    parser.add_argument("--inputs", nargs="+", choices=KINDS,
                        help="input kinds (default: all three)")
    parser.add_argument("--no-fresh", action="store_true",
                        help="skip the first-call timing in a fresh process")
    parser.add_argument("--tail-sweep", action="store_true",
                        help="on the GPU, uniform inputs: also every round from the host and "
                             "the tail thresholds (host_rounds)")
    parser.add_argument("--first-call-of", help=argparse.SUPPRESS)


if __name__ == "__main__":
    harness.main("dmr", run, add_args)
