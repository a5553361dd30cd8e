"""Points-to analysis on the shared LSG programs: load time, GPU and CPU solve times, facts.

The baseline is our own CPU path (the same rounds in NumPy/SciPy), run in this process.
GPU results are checked against the reference solution where one exists, and against the
CPU path where that runs.
"""

from __future__ import annotations

import time

from harness import cpu_seconds, gpu_seconds, main

from morphgpu.pta import constraints, cpu, layout
from morphgpu.pta.solution import Solution, read_solution
from morphgpu.testing import shared_path

REFERENCED = ("ex", "perl", "gcc", "python", "svn")
# Without reference solutions: checked against the CPU path (gdb, pine) or only run.
UNREFERENCED = ("gdb", "pine")
LARGE = ("php", "mplayer")


def run(args, record) -> None:
    quick = args.quick
    programs = ("ex", "perl", "gcc") if quick else REFERENCED + UNREFERENCED + LARGE
    # The CPU baseline keeps three dense bit blocks: php needs ~9 GB and mplayer ~28 GB of
    # host memory and minutes each, so by default they run on the GPU only.
    cpu_programs = ("ex", "perl") if quick else REFERENCED + UNREFERENCED
    if args.programs:
        programs = tuple(args.programs.split(","))
    if args.cpu_programs is not None:
        cpu_programs = tuple(p for p in args.cpu_programs.split(",") if p)
    record.note(f"CPU baseline (our NumPy/SciPy path, 1 run each) on: {', '.join(cpu_programs)}")
    on_gpu = args.side == "gpu"
    if on_gpu:
        from morphgpu.pta import gpu  # noqa: PLC0415
    for name in programs:
        nodes = shared_path("data", "pta", f"{name}_nodes.txt.gz")
        if nodes is None:
            record.note(f"{name}: shared data absent, skipped")
            continue
        prefix = nodes.with_name(name)
        t0 = time.perf_counter()
        cs = constraints.load_lsg(prefix)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        lay = layout.build_layout(cs)
        layout_s = time.perf_counter() - t0
        row = {"program": name, "vars": cs.n_vars, "constraints": cs.n_constraints,
               "load_s": load_s, "layout_s": layout_s}
        gpu_sol = cpu_sol = None
        if on_gpu:
            out = {}

            def solve_gpu(out=out, lay=lay):
                out["rows"], out["row_of_var"], out["stats"] = gpu.solve(lay)

            row["gpu_s"] = gpu_seconds(solve_gpu, repeat=3 if quick else 5, warmup=1)
            row["method"] = out["stats"].get("method", "rounds")
            if row["method"] == "dense":
                # The round solver on the same program, same process: what "auto" replaced.
                def solve_rounds(lay=lay):
                    gpu.solve(lay, method="rounds")

                row["gpu_rounds_s"] = gpu_seconds(solve_rounds, repeat=3 if quick else 5,
                                                  warmup=1)
                row["rounds_over_dense"] = row["gpu_rounds_s"] / row["gpu_s"]
            # The rows stay on the device; the facts are counted there (timed: what the CLI's
            # summary costs after a solve).
            gpu_sol = Solution(rows=out["rows"], row_of_var=out["row_of_var"],
                               objects=lay.objects, stats=out["stats"])
            t0 = time.perf_counter()
            row["facts"] = gpu_sol.n_facts
            row["count_facts_s"] = time.perf_counter() - t0
            row["rounds"] = out["stats"]["rounds"]
            row["edges_added"] = out["stats"]["edges_added"]
            row["nodes_merged"] = out["stats"]["nodes_merged"]
            row["sweeps"] = out["stats"]["sweeps"]
            row["copy_edges"] = out["stats"]["copy_edges"]
            row["general_merges"] = out["stats"]["slow_merges"]
            row["eval_retries"] = out["stats"]["retries"]
            row["gpu_phases"] = {k: round(v, 5) for k, v in out["stats"]["seconds"].items()}
            # Kept even if a time limit stops the host-side checks below (mplayer and php
            # hold tens of GiB of rows; counting their facts on the host takes a while).
            record.note(f"{name}: GPU solve {row['gpu_s']:.4f} s, {row['rounds']} rounds")
        if name in cpu_programs:
            res = {}

            def solve_cpu(res=res, lay=lay):
                res["out"] = cpu.solve(lay)

            row["cpu_s"] = cpu_seconds(solve_cpu, repeat=1)
            rows, leader, stats = res["out"]
            cpu_sol = Solution(rows=rows, row_of_var=leader[lay.node_of_var],
                               objects=lay.objects, stats=stats)
            row.setdefault("rounds", stats["rounds"])
        sol = gpu_sol if gpu_sol is not None else cpu_sol
        if sol is not None:
            row["facts"] = sol.n_facts
        if gpu_sol is not None and cpu_sol is not None:
            row["gpu_equals_cpu"] = not gpu_sol.differences_from(cpu_sol, limit=1)
            row["speedup"] = row["cpu_s"] / row["gpu_s"]
        ref_path = shared_path("data", "pta", f"{name}_correct_soln_001.txt.gz")
        if ref_path is not None and sol is not None:
            row["exact"] = not sol.differences(read_solution(ref_path), limit=1)
        record.row(**row)


def add_args(parser) -> None:
    parser.add_argument("--programs", help="comma-separated programs (default: all)")
    parser.add_argument("--cpu-programs", help="programs that also run the CPU baseline")


if __name__ == "__main__":
    main("pta", run, add_args)
