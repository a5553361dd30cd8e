"""``morphgpu sat``: solve a DIMACS file or a generated random k-SAT formula.

Output and exit codes follow the SAT competition (see ``register``).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any

import numpy as np

from .. import backend, report
from ..whole_file import refuse_input_as_output, written_whole
from . import api, cnf

# SAT-competition exit codes: scripts read them without parsing the output.
EXIT = {api.SAT: 10, api.UNSAT: 20, api.UNKNOWN: 0}
S_LINE = {api.SAT: "s SATISFIABLE", api.UNSAT: "s UNSATISFIABLE", api.UNKNOWN: "s UNKNOWN"}


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sat", help="survey propagation + local search for k-SAT",
        description="Prints SAT-competition output ('c' comments, one 's' line, 'v' lines "
                    "of the model) and exits 10 for SATISFIABLE, 20 for UNSATISFIABLE "
                    "(an empty clause, or a contradiction found by unit propagation of "
                    "the input, before any decimation decision) and 0 for UNKNOWN (a "
                    "contradiction after decimation is no proof); errors exit 1.")
    p.add_argument("file", nargs="?", help="DIMACS CNF file")
    p.add_argument("--random", type=int, metavar="N", help="generate N variables instead")
    # No defaults here: run() tells --k/--ratio given beside a FILE from none given.
    p.add_argument("--k", type=int, default=None,
                   help=f"literals per clause (with --random; default {DEFAULT_K})")
    p.add_argument("--ratio", type=float, default=None,
                   help=f"clauses per variable (with --random; default {DEFAULT_RATIO})")
    p.add_argument("--seed", type=int, default=None,
                   help="random seed (default: drawn, and printed as 'c seed N')")
    report.add_device_and_json(p)
    p.add_argument("--epsilon", type=float, default=1e-3)
    p.add_argument("--fix-fraction", type=float, default=None,
                   help="share of the free variables fixed per decimation step "
                        "(default: 0.01 for 3-SAT, 0.02 for wider clauses)")
    p.add_argument("--max-iterations", type=int, default=1000)
    p.add_argument("--backtrack", type=_backtrack, default="auto", metavar="R",
                   help="backtracking survey propagation: R in [0, 1) backtracking steps "
                        "per decimation step, 0 plain decimation; 'auto' (default): plain "
                        f"decimation until SP slows down (then R = "
                        f"{api.AUTO_RESTART_BACKTRACK}) or fails (then R = "
                        f"{api.AUTO_BACKTRACK}) (sp.solve's docstring)")
    p.add_argument("--output", type=report.output_path,
                   help="write the assignment here (DIMACS 'v' lines; for UNSAT "
                   "or UNKNOWN one 'c' line saying so)")
    p.add_argument("--no-model", action="store_true",
                   help="leave the 'v' lines out of stdout (large formulas)")
    p.set_defaults(run=run)


def _backtrack(text: str) -> float | str:
    """--backtrack's value: "auto" or a number (its range is solve's to check)."""
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'auto' or a number, got {text!r}") from None


def run(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.random is None):
        raise ValueError("sat: give a FILE.cnf or --random N (not both)")
    if args.file is not None and (args.k is not None or args.ratio is not None):
        # `sat f.cnf --k 5` solved the file and ignored --k, exit 10, as if it had applied.
        raise ValueError("sat: --k and --ratio shape a --random formula; a FILE brings its own")
    if args.output:
        refuse_input_as_output([args.output], [args.file], "--output")
    if args.random is not None:
        args.k = DEFAULT_K if args.k is None else args.k
        args.ratio = DEFAULT_RATIO if args.ratio is None else args.ratio
    seed = api.fresh_seed() if args.seed is None else args.seed
    read_started = time.perf_counter()
    # CuPy's and cupyx's imports (0.9 s each on the H100 machine's host, mostly Python), the
    # CUDA context and a tiny solve of the formula's clause width (api.warm_up: the first
    # uses of CuPy's libraries and the wing's kernels) run beside the read, whose NumPy
    # pieces release the GIL, not after it in the solve's build phase.
    probe = None
    switch_interval = sys.getswitchinterval()
    if args.device != "cpu":
        width = args.k if args.file is None else _first_clause_width(args.file)
        probe = threading.Thread(target=_prepare_gpu, args=(width,), daemon=True)
        # The imports stat thousands of paths (CuPy's library lookup walks sys.path's
        # package metadata), each releasing the GIL; at the default 5 ms interval every
        # one then waits for the read's next forced switch. H100 host, alternating
        # processes: the thread took 0.97-1.13 s with OVERLAP_SWITCH_SECONDS against
        # 1.08-1.28 s without, and the read did not slow down.
        sys.setswitchinterval(OVERLAP_SWITCH_SECONDS)
        probe.start()
    try:
        if args.file is not None:
            formula = cnf.read_dimacs(args.file)
            source = args.file
        else:
            formula = cnf.random_ksat(args.random, args.k, ratio=args.ratio, seed=seed)
            source = f"random {args.k}-SAT n={args.random} ratio={args.ratio} seed={seed}"
        read_seconds = time.perf_counter() - read_started  # or generate, with --random
    finally:
        if probe is not None:
            probe.join()
            sys.setswitchinterval(switch_interval)
    # The with erases the bar on a failure too (the error line was glued onto it).
    with report.Progress("sat", enabled=not args.json) as progress:
        result = api.solve(formula, device=args.device, seed=seed, epsilon=args.epsilon,
                           fix_fraction=args.fix_fraction, max_iterations=args.max_iterations,
                           backtrack=args.backtrack, progress=progress)
    side = result.stats["device"]
    out = {"input": source, "status": result.status, "reason": result.reason,
           "device": backend.device_name(side), "read_seconds": read_seconds,
           **result.stats}
    # The 'v' lines once, for the file and stdout alike.
    model = None
    printed = not args.json and not args.no_model
    if result.assignment is not None and (args.output or printed):
        model = _dimacs_values(result.assignment)
    if args.output:
        # Without a model the file still changes: a model left there by an earlier run
        # would read as this formula's answer. A 'c' line says why it holds no 'v' lines.
        with written_whole(args.output, "w", encoding="utf-8") as fh:
            fh.write(model if model is not None
                     else f"c {result.status}: no assignment ({result.reason})\n")
    if args.json:
        report.emit(out, as_json=True)
    else:
        _emit_competition(out, result, model=model if printed else None)
    return EXIT[result.status]


# --random's formula unless --k/--ratio say otherwise.
DEFAULT_K = 3
DEFAULT_RATIO = 4.2
# Python's thread switch interval while the read and the GPU's preparation share the GIL.
OVERLAP_SWITCH_SECONDS = 2e-4
# The clause width warm-up assumes when the file does not show one early (compressed,
# or no clause in its first PEEK_BYTES): only the wing's modules depend on it.
DEFAULT_WIDTH = 3
PEEK_BYTES = 1 << 16


def _prepare_gpu(width: int) -> None:
    """The thread beside the read: imports, context, then api.warm_up. Any failure is left
    to the solve, which meets it again and reports it (a warm-up is only ahead of time)."""
    try:
        if backend.import_gpu_stack():
            api.warm_up(width)
    except Exception:  # noqa: BLE001, S110 (the solve repeats the work and reports)
        pass


def _first_clause_width(path: str) -> int:
    """The width of the file's first clause, from its first PEEK_BYTES (DEFAULT_WIDTH when
    they hold none or the file is compressed): a hint for the warm-up, never for the
    read."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(PEEK_BYTES)
    except OSError:
        return DEFAULT_WIDTH
    count = 0
    lines = head.replace(b"\r", b"\n").split(b"\n")[:-1]  # the last may be cut
    for line in lines:
        line = line.strip()
        if not line or line[:1] in (b"c", b"p"):
            continue
        for token in line.split():
            if token == b"0":
                return count if count else DEFAULT_WIDTH
            if not token.lstrip(b"-").isdigit():
                return DEFAULT_WIDTH
            count += 1
    return DEFAULT_WIDTH


def _pairs(record: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in record.items())


def _emit_competition(out: dict[str, Any], result: api.SolveResult, *,
                      model: str | None) -> None:
    """'c' lines (the summary, the seed first), the 's' line, then the 'v' lines
    (``model``, when given)."""
    lines = [f"c morphgpu sat: {out['input']}", f"c seed {out['seed']}"]
    for key, value in out.items():
        if key in ("input", "seed", "status") or value == "":
            continue
        if isinstance(value, float):
            value = f"{value:.6g}"
        elif isinstance(value, dict):
            value = _pairs(value)
        elif isinstance(value, list):  # local_search_stages: one record per stage
            value = "; ".join(_pairs(v) if isinstance(v, dict) else str(v) for v in value)
        lines.append(f"c {key}: {value}")
    lines.append(S_LINE[result.status])
    text = "\n".join(lines) + "\n"
    if model is not None:
        text += model
    sys.stdout.write(text)


# Literals per 'v' line.
VALUES_PER_LINE = 20


def _dimacs_values(assignment: Any) -> str:
    """The model as DIMACS 'v' lines (VALUES_PER_LINE literals each, then 'v 0'), formatted
    by NumPy (cnf.format_integers): a Python string per variable took 0.16 s at 1M."""
    values = np.asarray(assignment, dtype=bool).ravel()
    lits = np.arange(1, values.size + 1, dtype=np.int64)
    lits[~values] *= -1
    separators = np.full(values.size, ord(" "), dtype=np.uint8)
    separators[VALUES_PER_LINE - 1 :: VALUES_PER_LINE] = ord("\n")
    if values.size:
        separators[-1] = ord("\n")
    # Every line, the closing "v 0" one included, starts after a newline or at the start.
    body = cnf.format_integers(lits, separators).decode("ascii")
    return "v " + body.replace("\n", "\nv ") + "0\n"


def demo(device: str) -> dict[str, Any]:
    """Random 3-SAT near the threshold, solved and checked by an independent clause scan."""
    n, ratio = (800, 3.9) if device == "cpu" else (200_000, 4.0)
    formula = cnf.random_ksat(n, 3, ratio=ratio, seed=1)
    t0 = time.perf_counter()
    result = api.solve(formula, device=device, seed=1, fix_fraction=0.05)
    seconds = time.perf_counter() - t0
    valid = result.status == "SAT" and _independent_check(formula, result.assignment)
    return {
        "algorithm": "sp",
        "input": f"random 3-SAT n={n} ratio={ratio}",
        "valid": bool(valid),
        "seconds": seconds,
        "summary": f"{result.status} {result.reason} after {result.stats['decimation_rounds']} "
                   f"decimation rounds, {result.stats['sp_iterations']} SP iterations",
    }


def _independent_check(formula: cnf.CNF, assignment: Any) -> bool:
    """Clause-by-clause check written apart from cnf.verify (same answer, other code)."""
    table = formula.literals.reshape(formula.n_clauses, -1)
    values = np.asarray(assignment, dtype=bool)
    truth = values[np.abs(table) - 1] == (table > 0)
    return bool(truth.any(axis=1).all())
