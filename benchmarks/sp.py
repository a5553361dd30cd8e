"""Survey propagation: the paper's table (Mendez-Lojo et al., PPoPP'12 morph algorithms, §8.2).

Rows: random K-SAT at the paper's sizes, several seeds, solved end to end on the GPU with
the assignment verified; time per phase (surveys, decimation, local search), the local
search's conflict-free rounds and flips, and per table row a summary of success over
seeds (``seconds_total`` is solve() end to end: build, SP, local search, verification).
Baseline: our CPU path (the same phases in NumPy), run in the same process. A full CPU solve at 1M
variables takes hours, so the baseline is (a) one SP sweep at the smallest paper size and
(b) a full solve at a size the CPU finishes in seconds, each against the GPU on the same
input; the notes say so.

Every solved row reports, with the device's name: the DIMACS read of the row's formula
(written to a temporary file first; pandas' ``read_csv`` on the same file beside it), SP
(surveys), decimation, local search and total seconds. ``--sweep`` adds the success tables
against the ratio (K=3 4.20-4.26, K=4 9.0-9.9, K=5 18-21.1, K=6 36-43.4; ``--sweep-n``
variables, default 1M; ``--sweep-seeds``, default 3), each failure with its reason:
non-convergence, contradiction (after decimation), local-search budget. The sweep solves
with ``solve``'s default ``backtrack="auto"`` (plain decimation until SP slows down or
fails, then backtracking SP) and records per solve the backtracking steps, variables
released, retreats and what "auto" switched to (``switch``: "0.3 after round N (cause)" or
"0.5 (fix fraction F) after round N (slowdown)", then
", restart at 0.5 (fix fraction F) after round M (cause)" where it started again, or
"-"); ``--sweep-backtrack R`` (a number in [0, 1) or "auto") and ``--sweep-fix-fraction
F`` run the sweep with another r or fix fraction for an A/B; ``--sweep-no-file`` solves
the generated formula without the DIMACS round trip (read columns nan), for runs bounded by
time. On the GPU each K's sweep first runs ``sp.warm_up(K)``, as ``morphgpu sat`` does
beside its read, and notes its seconds (the width's compile on a cold disk cache). Each
sweep solve also prints one compact line starting with ``solve:``. ``--quick``
runs everything at small sizes (the file baseline at 100k variables, table and sweep rows
at ``QUICK_N``), so the CPU side can be checked on a laptop.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import cpu_seconds, gpu_seconds, main

from morphgpu import backend, sp
from morphgpu.sp import api as sp_api
from morphgpu.sp import factor
from morphgpu.sp.cpu import CPUEngine

# (k, ratio, n_vars, seeds in default mode, seeds in --quick); the paper's GPU SP times.
# Rows with 0 default seeds run only when named with --rows (K=3 at 4M, K=5, K=6: each is
# tens of seconds or more, which would take the default run past its ~150 s budget).
TABLE = [
    (3, 4.2, 1_000_000, 3, 2),
    (3, 4.2, 2_000_000, 1, 0),
    (3, 4.2, 4_000_000, 0, 0),
    (4, 9.9, 1_000_000, 1, 1),
    (5, 21.1, 1_000_000, 0, 0),
    (6, 43.4, 1_000_000, 0, 0),
]
# --sweep: the ratios per K (the ranges, ends included).
# The target ratios (K=4 9.7 and 9.8, K=5 20 and 20.5) are rows of their own.
SWEEP_RATIOS = {3: (4.20, 4.22, 4.24, 4.26), 4: (9.0, 9.3, 9.6, 9.7, 9.8, 9.9),
                5: (18.0, 19.0, 20.0, 20.5, 21.1), 6: (36.0, 38.5, 41.0, 43.4)}
# --quick: variables of every table and sweep row, and of the file and sweep baselines.
QUICK_N = 3000
QUICK_BASELINE_N = 100_000
PAPER_SP_SECONDS = {(3, 1_000_000): 35.0, (4, 1_000_000): 85.0, (5, 1_000_000): 178.0,
                    (6, 1_000_000): 368.0}


def add_args(parser) -> None:
    parser.add_argument("--rows", help="only these table rows, as K:N,K:N (e.g. 3:2000000)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the CPU baselines")
    parser.add_argument("--compare-sweeps", action="store_true",
                        help="solve each GPU row twice: first with the sweeps over the input "
                             "formula and the clause kernel for any width (sp/gpu.py COMPACT "
                             "and FIXED_WIDTH_MAX off), then as by default; gives the SP "
                             "phases' ratio")
    parser.add_argument("--sweep", action="store_true",
                        help="success tables against the ratio (see SWEEP_RATIOS), with each "
                             "failure's reason")
    parser.add_argument("--sweep-n", type=int, default=None,
                        help=f"variables per sweep formula (default 1000000; {QUICK_N} "
                             "with --quick)")
    parser.add_argument("--sweep-seeds", type=int, default=3, help="seeds per ratio")
    parser.add_argument("--sweep-first-seed", type=int, default=0,
                        help="the sweep's first seed (seeds first, first + 1, ...): to add "
                             "seeds to an earlier sweep")
    parser.add_argument("--sweep-k", default="3,4,5,6", help="the K of the sweep, as 3,4")
    parser.add_argument("--sweep-ratios", default=None,
                        help="these ratios instead of each K's SWEEP_RATIOS, as 9.7,9.8")
    parser.add_argument("--sweep-backtrack", type=_backtrack, default="auto",
                        help="solve's backtrack in the sweep: a number in [0, 1) or 'auto' "
                             "(default, solve's default)")
    parser.add_argument("--sweep-fix-fraction", type=float, default=None,
                        help="solve's fix_fraction in the sweep (default: solve's default)")
    parser.add_argument("--sweep-no-file", action="store_true",
                        help="sweep formulas solved as generated, without the DIMACS file "
                             "round trip (its read columns are nan)")
    parser.add_argument("--no-table", action="store_true", help="skip the paper's table rows")
    parser.add_argument("--cli", type=int, default=0, metavar="RUNS",
                        help="time `morphgpu sat FILE --no-model` in RUNS new processes per "
                             "arm on a K=3 ratio 4.2 file (see _cli)")


def _backtrack(text: str) -> float | str:
    return text if text == "auto" else float(text)


def switch_text(stats) -> str:
    """What backtrack="auto" switched to, as "0.3 after round N (cause)", or "-"."""
    switch = stats.get("backtrack_switch")
    if not switch:
        return "-"
    text = f"{switch['to']} after round {switch['after_rounds']} ({switch['cause']})"
    if "fix_fraction" in switch:  # a slowdown switch also changes the fix fraction
        text = (f"{switch['to']} (fix fraction {switch['fix_fraction']:g}) after round "
                f"{switch['after_rounds']} ({switch['cause']})")
    restart = stats.get("backtrack_restart")
    if restart:
        text += (f", restart at {restart['to']} (fix fraction {restart['fix_fraction']:g}) "
                 f"after round {restart['after_rounds']} ({restart['cause']})")
    return text


def run(args, record) -> None:
    device = args.side
    record.note(f"solve device: {backend.device_name(device)}")
    warm = sp.random_ksat(2000, 3, ratio=4.0, seed=0)
    sp.solve(warm, device=device, seed=0)  # compiles the kernels outside the timings
    if not args.no_baseline:
        # First, so that a time limit on the whole benchmark cuts table rows, not baselines.
        _baselines(args, record, device)
    wanted = {tuple(int(x) for x in r.split(":")) for r in args.rows.split(",")} if args.rows \
        else None
    skipped = []
    for k, ratio, paper_n, seeds, quick_seeds in ([] if args.no_table else TABLE):
        n = QUICK_N if args.quick else paper_n
        if wanted is not None:
            if (k, paper_n) not in wanted:
                continue
            seeds, quick_seeds = max(seeds, 1), max(quick_seeds, 1)
        if (quick_seeds if args.quick else seeds) == 0:
            skipped.append(f"{k}:{paper_n}")
        outcomes = []
        for seed in range(quick_seeds if args.quick else seeds):
            t0 = time.perf_counter()
            formula = sp.random_ksat(n, k, ratio=ratio, seed=seed)
            gen = time.perf_counter() - t0
            formula, read, pandas_read = _through_a_file(formula)
            compactions = [False, True] if args.compare_sweeps and device == "gpu" \
                else [None]
            sp_off = None
            for compact in compactions:
                result, total = _solve(formula, device, seed, compact)
                s = result.stats["seconds"]
                sp_phase = s.get("surveys", 0.0) + s.get("decimation", 0.0)
                paper = PAPER_SP_SECONDS.get((k, n))
                extra = {}
                if compact is not None:
                    extra["sweeps"] = "default" if compact else "input formula, any width"
                    if compact and sp_off:
                        extra["sp_off_over_on"] = sp_off / sp_phase
                    sp_off = sp_phase
                record.row(
                    k=k, ratio=ratio, n_vars=n, seed=seed, **extra, status=result.status,
                    failure=failure_kind(result), reason=result.reason or "-",
                    device=backend.device_name(device), seconds_read=read,
                    pandas_read_seconds=pandas_read, seconds_total=total, seconds_sp=sp_phase,
                    seconds_surveys=s.get("surveys", 0.0),
                    seconds_decimation=s.get("decimation", 0.0),
                    seconds_local_search=s.get("local_search", 0.0),
                    seconds_build=s.get("build", 0.0),
                    sp_iterations=result.stats["sp_iterations"],
                    decimation_rounds=result.stats["decimation_rounds"],
                    variables_fixed=result.stats["variables_fixed"],
                    free_after_sp=result.stats.get("free_after_sp", -1),
                    local_search=result.stats["local_search"],
                    local_search_rounds=result.stats.get("local_search_rounds", 0),
                    local_search_flips=result.stats.get("local_search_flips", 0),
                    local_search_stages=stages_text(result.stats),
                    generate_seconds=gen,
                    paper_sp_seconds=paper or float("nan"),
                    paper_over_ours_sp=(paper / sp_phase) if paper and sp_phase > 0
                    else float("nan"),
                )
            outcomes.append((result.status == "SAT", total))
            del formula, result
        if outcomes:
            solved_times = [t for ok, t in outcomes if ok]
            record.row(
                k=k, ratio=ratio, n_vars=n, summary="success over seeds",
                solved=len(solved_times), seeds=len(outcomes),
                success_rate=len(solved_times) / len(outcomes),
                max_seconds_total_solved=max(solved_times) if solved_times else float("nan"),
                mean_seconds_total=sum(t for _, t in outcomes) / len(outcomes),
            )
    if skipped:
        record.note(f"rows not run in this mode (name them with --rows): {', '.join(skipped)}")
    if args.sweep:
        _sweep(args, record, device)
    if args.cli:
        _cli(args, record, device)


def stages_text(stats) -> str:
    """Each local-search stage as rounds/fewest unsatisfied@its round/longest wait, then
    "stalled", "stuck" and/or "+N flips" ("-" when none ran)."""
    out = []
    for st in stats.get("local_search_stages", []):
        text = f"r{st['rounds']}"
        if "fewest" in st:
            text += f"/fewest {st['fewest']}@{st['fewest_round']}/wait {st['longest_wait']}"
            text += "/stalled" if st["stalled"] else "/stuck" if st.get("stuck") else ""
        if st["flips"] and not st.get("stalled"):
            text += f"/+{st['flips']} flips"
        out.append(text)
    return "; ".join(out) or "-"


def failure_kind(result) -> str:
    """Why a solve did not answer SAT, in the sweep's words ("-" when it did)."""
    if result.status == "SAT":
        return "-"
    if result.status == "UNSAT":
        return "unsat (proved by unit propagation)"
    if "did not converge" in result.reason:
        return "non-convergence"
    if "contradiction after decimation" in result.reason:
        return "contradiction"
    if "local search gave up" in result.reason:
        return "local-search budget"
    return result.reason or "unknown"


def _through_a_file(formula):
    """(formula read back, read_dimacs seconds, pandas read_csv seconds or nan): the row's
    formula written to a temporary DIMACS file and read back, the read timed."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "row.cnf"
        sp.write_dimacs(formula, path)
        t0 = time.perf_counter()
        back = sp.read_dimacs(path)
        read = time.perf_counter() - t0
        assert back.n_clauses == formula.n_clauses
        pandas_read = float("nan")
        try:
            import pandas as pd  # noqa: PLC0415
        except ImportError:
            pass
        else:
            t0 = time.perf_counter()
            pd.read_csv(path, sep=" ", header=None, skiprows=1, dtype=np.int64, engine="c")
            pandas_read = time.perf_counter() - t0
    return back, read, pandas_read


# --cli: the command-line row (K=3 ratio 4.2, 1M variables; file to verified SAT
# in 4 s or less) and the seed of its formula and solve. --quick's small formula is at a
# lower ratio: at 3,000 variables ratio 4.2 is near the finite-size threshold (the NumPy
# path spent minutes on seed 3).
CLI_K, CLI_RATIO, CLI_N, CLI_SEED, CLI_TARGET_SECONDS = 3, 4.2, 1_000_000, 3, 4.0
CLI_QUICK_RATIO = 4.0


def _cli(args, record, device: str) -> None:
    """``morphgpu sat FILE --no-model`` in new processes, timed from spawn to exit, with the
    stage times the command prints. Arms alternate: "as is" (this environment), and, where
    Python writes no bytecode here (PYTHONDONTWRITEBYTECODE, as on the GPU machine), "with
    bytecode": the same command with a bytecode cache (PYTHONPYCACHEPREFIX) filled by one
    untimed run, as an installed environment has (pip compiles at install). Without it
    every process compiles NumPy's, SciPy's and CuPy's modules from source; the GPU machine
    spent 0.6 s in compile() importing cupy and cupyx alone. The baseline is the same file
    read and solved in this process."""
    n, ratio = (QUICK_N, CLI_QUICK_RATIO) if args.quick else (CLI_N, CLI_RATIO)
    repo = Path(__file__).resolve().parent.parent
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(repo), *filter(None, [env.get("PYTHONPATH")])])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cli.cnf"
        sp.write_dimacs(sp.random_ksat(n, CLI_K, ratio=ratio, seed=CLI_SEED), path)
        command = [sys.executable, "-m", "morphgpu", "sat", str(path), "--seed",
                   str(CLI_SEED), "--no-model", "--device", device]
        arms = {"as is": env}
        if sys.dont_write_bytecode:
            cached = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
            arms["with bytecode"] = {**cached, "PYTHONPYCACHEPREFIX": str(Path(tmp) / "pyc")}
        for arm_env in arms.values():  # untimed: the kernel cache, and the bytecode arm's
            subprocess.run(command, env=arm_env, capture_output=True, check=False)
        t0 = time.perf_counter()
        formula = sp.read_dimacs(path)
        read = time.perf_counter() - t0
        in_process = _solve(formula, device, CLI_SEED, None)[1] + read
        walls: dict[str, list[float]] = {arm: [] for arm in arms}
        for run in range(args.cli):
            order = list(arms) if run % 2 == 0 else list(reversed(arms))
            for arm in order:
                t0 = time.perf_counter()
                done = subprocess.run(command, env=arms[arm], capture_output=True, text=True,
                                      check=False)
                wall = time.perf_counter() - t0
                lines = dict(line[2:].split(": ", 1) for line in done.stdout.splitlines()
                             if line.startswith("c ") and ": " in line)
                status = next((line[2:] for line in done.stdout.splitlines()
                               if line.startswith("s ")), f"exit {done.returncode}")
                walls[arm].append(wall)
                record.row(cli=arm, run=run, n_vars=n, status=status, wall_seconds=wall,
                           read_seconds=float(lines.get("read_seconds", "nan")),
                           solve_seconds=float(lines.get("total_seconds", "nan")),
                           device=backend.device_name(device))
    for arm, values in walls.items():
        median = statistics.median(values)
        record.row(cli=arm, summary="median over runs", runs=len(values), n_vars=n,
                   median_wall_seconds=median, target_seconds=CLI_TARGET_SECONDS,
                   meets_target=(median <= CLI_TARGET_SECONDS) if n == CLI_N else "n/a (not 1M)",
                   in_process_read_and_solve_seconds=in_process,
                   wall_over_in_process=median / in_process)
    record.note(f"--cli: `morphgpu sat FILE --no-model`, K={CLI_K} ratio {ratio}, "
                f"n={n}, seed {CLI_SEED}, wall from spawn to exit; baseline: read_dimacs + "
                "solve of the same file in this process")


def _sweep(args, record, device: str) -> None:
    """Success against the ratio: per (K, ratio), --sweep-seeds seeds at --sweep-n
    variables; a row per solve, then a summary row with each failure kind's count."""
    n = args.sweep_n or (QUICK_N if args.quick else 1_000_000)
    ks = [int(k) for k in args.sweep_k.split(",")]
    record.note(f"sweep: n={n}, {args.sweep_seeds} seeds per ratio, K in {ks}, "
                f"backtrack={args.sweep_backtrack}, fix_fraction="
                f"{args.sweep_fix_fraction or 'default'}, solve on {backend.device_name(device)}")
    for k in ks:
        if device == "gpu":
            # As `morphgpu sat` does beside the file's read: the width's kernels (NVRTC on a
            # cold disk cache) are paid here, reported, and not inside the first row.
            t0 = time.perf_counter()
            sp_api.warm_up(k)
            record.note(f"sweep K={k}: sp.warm_up({k}) took {time.perf_counter() - t0:.2f} s")
        ratios = SWEEP_RATIOS[k]
        if args.sweep_ratios:  # any ratios, not only SWEEP_RATIOS' (bisecting a threshold)
            ratios = tuple(sorted({round(float(r), 4) for r in args.sweep_ratios.split(",")}))
        for ratio in ratios:
            kinds: dict[str, int] = {}
            times = []
            for seed in range(args.sweep_first_seed, args.sweep_first_seed + args.sweep_seeds):
                formula = sp.random_ksat(n, k, ratio=ratio, seed=seed)
                read = pandas_read = float("nan")
                if not args.sweep_no_file:
                    formula, read, pandas_read = _through_a_file(formula)
                result, total = _solve(formula, device, seed, None,
                                       backtrack=args.sweep_backtrack,
                                       fix_fraction=args.sweep_fix_fraction)
                s, st = result.stats["seconds"], result.stats
                kind = failure_kind(result)
                kinds[kind] = kinds.get(kind, 0) + 1
                times.append(total)
                record.row(
                    sweep="solve", k=k, ratio=ratio, n_vars=n, seed=seed,
                    device=backend.device_name(device), status=result.status, failure=kind,
                    reason=result.reason or "-", seconds_read=read,
                    pandas_read_seconds=pandas_read,
                    seconds_surveys=s.get("surveys", 0.0),
                    seconds_decimation=s.get("decimation", 0.0),
                    seconds_local_search=s.get("local_search", 0.0), seconds_total=total,
                    sp_iterations=st["sp_iterations"], decimation_rounds=st["decimation_rounds"],
                    backtrack=st["backtrack"], switch=switch_text(st),
                    backtracking_steps=st["backtracking_steps"],
                    variables_released=st["variables_released"], retreats=st["retreats"],
                    free_after_sp=st.get("free_after_sp", -1),
                    local_search=st["local_search"],
                    local_search_rounds=st.get("local_search_rounds", 0),
                    local_search_stages=stages_text(st),
                )
                print(f"solve: K={k} ratio={ratio} seed={seed} {result.status} {kind} "
                      f"total {total:.2f}s (surveys {s.get('surveys', 0.0):.2f} decimation "
                      f"{s.get('decimation', 0.0):.2f} ls {s.get('local_search', 0.0):.2f} "
                      f"build {s.get('build', 0.0):.2f}) steps d{st['decimation_rounds']} "
                      f"b{st['backtracking_steps']} released {st['variables_released']} "
                      f"retreats {st['retreats']} free {st.get('free_after_sp', -1)} "
                      f"switch {switch_text(st)} ls stages {stages_text(st)}", flush=True)
                del formula, result
            solved = kinds.pop("-", 0)
            record.row(
                sweep="success", k=k, ratio=ratio, n_vars=n, seeds=args.sweep_seeds,
                solved=solved, success_rate=solved / args.sweep_seeds,
                failures=", ".join(f"{v} {kname}" for kname, v in sorted(kinds.items())) or "-",
                mean_seconds_total=sum(times) / len(times),
            )


def _solve(formula, device: str, seed: int, compact: bool | None, **options):
    """solve() end to end (``options`` passed on, solve's defaults otherwise); compact
    False: the GPU sweeps over the input formula with the clause kernel for any width
    (None or True: the defaults)."""
    saved = {}
    if compact is False:
        from morphgpu.sp import gpu as spgpu  # noqa: PLC0415

        saved = {"COMPACT": spgpu.COMPACT, "FIXED_WIDTH_MAX": spgpu.FIXED_WIDTH_MAX}
        spgpu.COMPACT, spgpu.FIXED_WIDTH_MAX = False, 0
    try:
        t0 = time.perf_counter()
        result = sp.solve(formula, device=device, seed=seed, **options)
        backend.synchronize()
        return result, time.perf_counter() - t0
    finally:
        for name, value in saved.items():
            setattr(spgpu, name, value)


def _baselines(args, record, device) -> None:
    n = QUICK_BASELINE_N if args.quick else 1_000_000
    formula = sp.random_ksat(n, 3, ratio=4.2, seed=0)
    _file_io(args, record, formula)
    cpu = CPUEngine(factor.build(formula, "cpu"), 0, 0.3)
    cpu.propagate()
    cpu_sweep = cpu_seconds(cpu.iterate, repeat=1 if args.quick else 2, warmup=0)
    if device == "gpu":
        from morphgpu.sp.gpu import GPUEngine  # noqa: PLC0415

        gpu = GPUEngine(factor.build(formula, "gpu"), 0, 0.3)
        gpu.propagate()
        gpu_sweep = gpu_seconds(lambda: gpu._sweep(0), repeat=20, warmup=3)
        del gpu
    else:
        gpu_sweep = cpu_sweep
    record.note(f"baseline 1: one SP sweep (products + clause update) at K=3, n={n}, "
                f"{formula.n_clauses} clauses; CPU = our NumPy path in this process")
    record.row(baseline="one SP sweep", n_vars=n, ours_seconds=gpu_sweep,
               cpu_seconds=cpu_sweep, cpu_over_ours=cpu_sweep / gpu_sweep)
    # Ratio 4.0: at a few thousand variables and ratio 4.2 a seed is often unsatisfiable or
    # makes the CPU path run its whole local-search budget (tens of seconds).
    small = 2000
    formula = sp.random_ksat(small, 3, ratio=4.0, seed=1)
    t0 = time.perf_counter()
    cpu_result = sp.solve(formula, device="cpu", seed=1)
    cpu_total = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = sp.solve(formula, device=device, seed=1)
    backend.synchronize()
    ours_total = time.perf_counter() - t0
    record.note(f"baseline 2: full solve at K=3 ratio 4.0 n={small} on the CPU path vs ours "
                "(the CPU path at 1M variables would take hours)")
    record.row(baseline="full solve", n_vars=small, ours_status=ours.status,
               cpu_status=cpu_result.status, ours_seconds=ours_total, cpu_seconds=cpu_total,
               cpu_over_ours=cpu_total / ours_total)


def _file_io(args, record, formula) -> None:
    """DIMACS CNF reading and writing at K=3 (n=1M, 4.2M clauses; 100k with --quick),
    against pandas' C parser (``read_csv``) and writer (``to_csv``) on the same file, in
    this process."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k3.cnf"
        repeat = 1 if args.quick else 3
        ours_write = cpu_seconds(lambda: sp.write_dimacs(formula, path), repeat=repeat)
        ours_read = cpu_seconds(lambda: sp.read_dimacs(path), repeat=repeat)
        try:
            import pandas as pd  # noqa: PLC0415
        except ImportError:
            record.note("baseline 0: pandas is not installed; DIMACS reading timed alone")
            record.row(baseline="DIMACS CNF read", n_vars=formula.n_vars,
                       n_clauses=formula.n_clauses, ours_seconds=ours_read,
                       ours_write_seconds=ours_write)
            return
        pandas_read = cpu_seconds(
            lambda: pd.read_csv(path, sep=" ", header=None, skiprows=1, dtype=np.int64,
                                engine="c"), repeat=repeat)
        table = pd.read_csv(path, sep=" ", header=None, skiprows=1, dtype=np.int64)
        other = Path(tmp) / "pandas.cnf"
        pandas_write = cpu_seconds(
            lambda: table.to_csv(other, sep=" ", header=False, index=False), repeat=repeat)
    record.note(f"baseline 0: DIMACS CNF file of K=3, n={formula.n_vars}, "
                f"{formula.n_clauses} clauses: read_dimacs / "
                "write_dimacs against pandas read_csv / to_csv (C engine, the same file, "
                "uniform width known in advance) in this process")
    record.row(baseline="DIMACS CNF read", n_vars=formula.n_vars,
               n_clauses=formula.n_clauses, ours_seconds=ours_read,
               pandas_seconds=pandas_read, ours_over_pandas=ours_read / pandas_read)
    record.row(baseline="DIMACS CNF write", n_vars=formula.n_vars,
               n_clauses=formula.n_clauses, ours_seconds=ours_write,
               pandas_seconds=pandas_write, ours_over_pandas=ours_write / pandas_write)


if __name__ == "__main__":
    main("sp", run, add_args)
