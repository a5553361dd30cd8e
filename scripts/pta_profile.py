"""GPU points-to solves of the shared LSG programs, one JSON line each: solve seconds (CUDA
events around the whole solve, after a warm-up solve), phases, rounds, sweeps, edges, facts,
how dense the final rows are (non-zero words and non-zero 32-word blocks among leader
rows: what the block-difference propagation can skip), exactness against the reference
where one exists (fact count always; every set with --full-check), and optionally the CPU
path's time on the same layout for the speedup.

    python3 scripts/pta_profile.py [--programs ex,perl,gcc] [--repeat 3] [--cpu perl]
                                   [--full-check ex,perl] [--json out.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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


def profile(name: str, repeat: int, with_cpu: bool, full_check: bool) -> dict:
    from morphgpu.pta import gpu  # noqa: PLC0415

    cp = backend.cupy_module()
    prefix = shared_path("data", "pta", f"{name}_nodes.txt.gz").with_name(name)
    lay = layout.build_layout(constraints.load_lsg(prefix))
    row: dict = {"program": name, "vars": lay.n_vars, "nodes": lay.n_nodes,
                 "words": lay.n_words}
    out = gpu.solve(lay)  # warm-up: kernel compilation, memory pool
    del out
    times = []
    for _ in range(repeat):
        cp.cuda.Device().synchronize()
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        rows, row_of_var, stats = gpu.solve(lay)
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop) / 1e3)
        if len(times) < repeat:
            del rows
    row.update(gpu_s_mean=sum(times) / len(times), gpu_s_min=min(times),
               rounds=stats["rounds"], sweeps=stats["sweeps"],
               copy_edges=stats["copy_edges"], edges_added=stats["edges_added"],
               nodes_merged=stats["nodes_merged"],
               phases={k: round(v, 5) for k, v in stats["seconds"].items()})
    leaders = cp.unique(cp.asarray(row_of_var))
    row["nonzero_words"], row["nonzero_blocks"] = row_density(cp, rows, leaders)
    sol = Solution(rows=backend.to_host(rows), row_of_var=row_of_var, objects=lay.objects,
                   stats=stats)
    del rows
    row["facts"] = sol.n_facts
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
    args = parser.parse_args()
    with_cpu = set(filter(None, args.cpu.split(",")))
    full = set(filter(None, args.full_check.split(",")))
    for name in filter(None, args.programs.split(",")):
        if shared_path("data", "pta", f"{name}_nodes.txt.gz") is None:
            print(json.dumps({"program": name, "skipped": "shared data absent"}), flush=True)
            continue
        line = json.dumps(profile(name, args.repeat, name in with_cpu, name in full))
        print(line, flush=True)
        if args.json:
            with args.json.open("a") as f:
                f.write(line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
