"""GPU points-to solves of the shared LSG programs, one JSON line each: solve seconds (CUDA
events around the whole solve, after a warm-up solve), phases, rounds, sweeps, edges, facts,
how dense the final rows are (non-zero words and non-zero 32-word blocks among leader
rows: what the block-difference propagation can skip), exactness against the reference
where one exists (fact count always; every set with --full-check), and optionally the CPU
path's time on the same layout for the speedup.

    python3 scripts/pta_profile.py [--programs ex,perl,gcc] [--repeat 3] [--cpu perl]
                                   [--full-check ex,perl] [--json out.jsonl]
                                   [--before DIR] [--rounds ex,svn,php]

--before DIR also times an earlier solver in the same process (DIR/gpu_before.py, a copy
of an older morphgpu/pta/gpu.py whose KERNEL_FILE names its own kernels; not in the
repository) and checks it gives the same facts; --rounds prints, for those programs, the
per-round phase seconds and counters of the (last) solve of each solver.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from morphgpu import backend  # noqa: E402
from morphgpu.pta import constraints, cpu, layout  # noqa: E402
from morphgpu.pta.solution import Solution, read_solution  # noqa: E402
from morphgpu.testing import shared_path  # noqa: E402

# Facts of each reference solution (tests/test_pta_reference.py counts them the same way).
REFERENCE_FACTS = {"perl": 44896634, "gcc": 8202328, "python": 276148304, "svn": 217859777}


def row_density(cp, rows, leaders, chunk: int = 1 << 14) -> tuple[float, float]:
    """(non-zero words, non-zero 32-word blocks) as fractions over the rows ``leaders``."""
    words = rows.shape[1]
    n_blocks = -(-words // 32)
    nz_words = nz_blocks = 0
    for a in range(0, leaders.size, chunk):
        block = rows[leaders[a:a + chunk]]
        nz = block != 0
        nz_words += int(cp.count_nonzero(nz))
        padded = cp.zeros((nz.shape[0], n_blocks * 32), dtype=cp.bool_)
        padded[:, :words] = nz
        nz_blocks += int(cp.count_nonzero(padded.reshape(nz.shape[0], n_blocks, 32).any(2)))
    return nz_words / max(1, leaders.size * words), nz_blocks / max(1, leaders.size * n_blocks)


def load_before(directory: Path):
    spec = importlib.util.spec_from_file_location("pta_gpu_before", directory / "gpu_before.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_solves(solver, lay, repeat: int):
    """(seconds of each solve, the last solve's output), after one warm-up solve."""
    cp = backend.cupy_module()
    out = solver.solve(lay)
    del out
    times = []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        out = solver.solve(lay)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
        if len(times) < repeat:
            del out
    return times, out


def round_table(stats: dict) -> list:
    """[round, {phase: ms}, counters] per round."""
    secs = stats.get("round_seconds", [])
    counts = stats.get("round_counts", [])
    rows = []
    for r, ph in enumerate(secs):
        c = counts[r - 1] if 0 < r <= len(counts) else {}
        rows.append([r, {k: round(v * 1e3, 3) for k, v in ph.items()}, c])
    return rows


def sweep_profile(gpu, lay) -> dict:
    """One more solve with the propagate kernel's sweep log on: how the sweeps' time splits
    (a sweep's time runs to the next sweep's start within the same launch; the kernel logs
    a launch's first sweep with items -1 - n)."""
    os.environ["MORPHGPU_PTA_SWEEP_LOG"] = "8192"
    try:
        _, _, stats = gpu.solve(lay)
    finally:
        del os.environ["MORPHGPU_PTA_SWEEP_LOG"]
    log = stats["sweep_log"]
    t, logged = log[:, 0], log[:, 1]
    first = logged < 0
    items = np.where(first, -1 - logged, logged)
    same_launch = ~first[1:]
    dt = (t[1:] - t[:-1])[same_launch] / 1e3  # microseconds
    it = items[:-1][same_launch]
    order = np.argsort(dt)[::-1][:12]
    return {"logged": int(log.shape[0]), "timed": int(dt.size),
            "us_total": round(float(dt.sum()), 1),
            "us_sweep0_total": round(float(dt[first[:-1][same_launch]].sum()), 1),
            "sweep0_items": int(items[first].sum()),
            "us_median": round(float(np.median(dt)), 2) if dt.size else 0.0,
            "slowest_us_items": [[round(float(dt[i]), 1), int(it[i])] for i in order],
            "items_total": int(it.sum())}


def profile(name: str, repeat: int, with_cpu: bool, full_check: bool, before=None,
            rounds: bool = False) -> dict:
    from morphgpu.pta import gpu  # noqa: PLC0415

    cp = backend.cupy_module()
    prefix = shared_path("data", "pta", f"{name}_nodes.txt.gz").with_name(name)
    lay = layout.build_layout(constraints.load_lsg(prefix))
    row: dict = {"program": name, "vars": lay.n_vars, "nodes": lay.n_nodes,
                 "words": lay.n_words}
    if before is not None:
        b_times, (b_rows, b_row_of_var, b_stats) = time_solves(before, lay, repeat)
        b_sol = Solution(rows=backend.to_host(b_rows), row_of_var=b_row_of_var,
                         objects=lay.objects, stats=b_stats)
        del b_rows
        row.update(before_s_mean=sum(b_times) / len(b_times), before_s_min=min(b_times),
                   before_rounds=b_stats["rounds"], before_sweeps=b_stats["sweeps"],
                   before_phases={k: round(v, 5) for k, v in b_stats["seconds"].items()})
        if rounds:
            row["before_per_round"] = round_table(b_stats)
    times, (rows, row_of_var, stats) = time_solves(gpu, lay, repeat)
    row.update(gpu_s_mean=sum(times) / len(times), gpu_s_min=min(times),
               rounds=stats["rounds"], sweeps=stats["sweeps"],
               copy_edges=stats["copy_edges"], edges_added=stats["edges_added"],
               nodes_merged=stats["nodes_merged"],
               phases={k: round(v, 5) for k, v in stats["seconds"].items()},
               slow_merges=stats.get("slow_merges"), table_rebuilds=stats.get("table_rebuilds"),
               delta_objects=stats.get("delta_objects"),
               cycles_collapsed=stats.get("cycles_collapsed"),
               cycle_sweeps=stats.get("cycle_sweeps"))
    if before is not None:
        row["speedup_vs_before"] = row["before_s_mean"] / row["gpu_s_mean"]
    if rounds:
        row["per_round"] = round_table(stats)
        row["sweeps_profile"] = sweep_profile(gpu, lay)
    leaders = cp.unique(cp.asarray(row_of_var))
    row["nonzero_words"], row["nonzero_blocks"] = row_density(cp, rows, leaders)
    sol = Solution(rows=backend.to_host(rows), row_of_var=row_of_var, objects=lay.objects,
                   stats=stats)
    del rows
    row["facts"] = sol.n_facts
    if before is not None:
        row["before_equal"] = not sol.differences_from(b_sol, limit=1)
        del b_sol
    if name in REFERENCE_FACTS:
        row["facts_match_reference"] = sol.n_facts == REFERENCE_FACTS[name]
    ref_path = shared_path("data", "pta", f"{name}_correct_soln_001.txt.gz")
    if full_check and ref_path is not None:
        row["exact"] = not sol.differences(read_solution(ref_path), limit=1)
    if with_cpu:
        t0 = time.perf_counter()
        c_rows, leader, _ = cpu.solve(lay)
        row["cpu_s"] = time.perf_counter() - t0
        row["speedup_mean"] = row["cpu_s"] / row["gpu_s_mean"]
        c_sol = Solution(rows=c_rows, row_of_var=leader[lay.node_of_var],
                         objects=lay.objects, stats={})
        row["gpu_equals_cpu"] = not sol.differences_from(c_sol, limit=1)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", default="ex,perl,gcc,python,svn,php,mplayer")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cpu", default="", help="programs that also run the CPU path")
    parser.add_argument("--full-check", default="ex,perl,gcc",
                        help="programs compared set by set with their reference")
    parser.add_argument("--json", type=Path, help="append the JSON lines here")
    parser.add_argument("--before", type=Path, help="directory of an earlier gpu_before.py")
    parser.add_argument("--rounds", default="", help="programs whose per-round table to keep")
    args = parser.parse_args()
    before = load_before(args.before) if args.before else None
    per_round = set(filter(None, args.rounds.split(",")))
    with_cpu = set(filter(None, args.cpu.split(",")))
    full = set(filter(None, args.full_check.split(",")))
    for name in filter(None, args.programs.split(",")):
        if shared_path("data", "pta", f"{name}_nodes.txt.gz") is None:
            print(json.dumps({"program": name, "skipped": "shared data absent"}), flush=True)
            continue
        result = profile(name, args.repeat, name in with_cpu, name in full, before,
                         name in per_round)
        line = json.dumps(result)
        brief = {k: v for k, v in result.items() if k not in ("per_round", "before_per_round")}
        print(json.dumps(brief), flush=True)
        if args.json:
            with args.json.open("a") as f:
                f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
