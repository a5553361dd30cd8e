"""The door of the SP wing: ``solve`` runs survey propagation with decimation, then a local
search, on the GPU or the CPU, and never answers "SAT" without verifying the assignment
against the original formula clause by clause.

Phases, in the same order on both sides (engines in cpu.py and gpu.py):

1. build the factor graph (merge duplicate literals, drop tautologies, see factor.py);
2. unit propagation of the input;
3. repeat: SP sweeps until ``max |Δeta| < epsilon`` → biases → if the surveys are trivial
   (mean max(W+, W-) < trivial_threshold) stop, else fix the most biased ``fix_fraction``
   of the free variables → unit propagation (a contradiction stops the loop). With
   ``backtrack=r > 0`` this is backtracking survey propagation (Marino, Parisi &
   Ricci-Tersenghi, Nat. Commun. 7:12996, 2016): each step after SP converged is, with
   probability r / (1 + r), a backtracking step instead, which releases as many of the
   decisions as a decimation step would fix, those whose SP bias towards their value,
   computed as if they were free, is weakest; the values unit propagation implied are then
   recomputed from the decisions left. A contradiction, or SP failing to converge, then
   retreats (undoes the last decimation step and makes the next step a backtracking one)
   instead of stopping, at most RETREAT_BUDGET times in a run. ``backtrack="auto"`` (the default)
   is plain decimation, step for step, until a round's SP needs more than AUTO_SLOWDOWN
   times the fewest sweeps of the run's rounds so far (SP slowing down ahead of the frozen
   phase): from there it goes on as backtracking SP with r = AUTO_RESTART_BACKTRACK at
   AUTO_RESTART_FIX_SCALE times the fix fraction. Should SP first fail to converge in a
   round, or a decimation step meet a contradiction, before that, it retreats and goes on
   as backtracking SP with r = AUTO_BACKTRACK. Should either run fail again after
   AUTO_RETREATS retreats, decimation starts again from no decisions as backtracking SP
   with r = AUTO_RESTART_BACKTRACK (at that fix fraction) from the first step, a run with
   RETREAT_BUDGET retreats of its own (stats["retreats"] and the reason count both runs'
   retreats);
4. local search on the formula with the fixed variables frozen (on the clauses they leave
   open, factor.frozen_residual: the others cannot change); with "auto" not yet
   switched, if that gives up, decimation starts again from no decisions as backtracking SP
   (r = AUTO_BACKTRACK; after a slowdown switch, the restart of step 3) on a fresh engine
   and the frozen local search runs once more. If the frozen search
   gives up (or SP failed), one more local search with every variable free, from where it
   stopped. Each
   local search runs conflict-free parallel probSAT rounds (walk.py: the flipped variables
   of a round share no clause), then, only if the rounds' budget runs out, a sequential
   probSAT tail;
5. verification against the input CNF's own arrays (NumPy on the CPU; on the GPU a kernel,
   kernels/verify.cu, on the engine's values where they are).
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .. import arguments, backend, compiler_key_cache
from ..csr import check_declared_size
from . import exhaustive, factor, rules
from .cnf import CNF, verify

DEFAULT_ROUNDS = {"gpu": 300_000, "cpu": 20_000}
# Sequential tail flips per local-search stage: FLIPS_PER_ROUND times the rounds' budget,
# at most MAX_DEFAULT_FLIPS (a GPU tail flip is a few µs in one warp, a CPU one ~20 µs).
FLIPS_PER_ROUND = 20
MAX_DEFAULT_FLIPS = {"gpu": 1_000_000, "cpu": 400_000}
# The default budgets are divided by this when SP itself failed (see solve).
# A hundredth: at K=5 ratio 21.1 (1M variables) a tenth (2 x 30k rounds) spent 33 s on an
# H200 without solving, twice the SP phase.
SP_FAILED_SHARE = 100
# Backtracking survey propagation: the step choice draws from its own random stream (the
# same on both sides, apart from the engines' streams), and a solve retreats from a
# contradiction or a non-converged round at most this many times in a run before it stops
# as plain decimation does (each retreat may cost a round of max_iterations sweeps; auto's
# first run stops at AUTO_RETREATS instead, and its restart has this many of its own).
BSP_STREAM = 0x425350
RETREAT_BUDGET = 8
# backtrack="auto": the r that plain decimation switches to once SP fails (or meets a
# contradiction, or its local search gives up). 0.3 is the best measured so far: H100,
# 1M variables, seed 1, fix fraction 0.01, one process, where r=0 fails all three
# (K=4 9.8 non-convergence after 78 rounds, K=3 4.24 local-search budget 24 s, K=5 20.5
# non-convergence after 57 rounds): K=4 9.8 SAT in 9.9 s at r=0.3 (surveys 6.8 s, 163
# decimation + 56 backtracking steps) against 15.3 s at r=0.5 (surveys 10.9 s); K=3 4.24
# SAT in 6.4 s and K=5 20.5 in 29.1 s at r=0.5 (0.3 not yet run there). Not from the start:
# r costs about (1 + r) / (1 - r) times plain decimation's steps, and plain decimation
# meets K=3 4.2 in 2.0-2.2 s (target 2.5 s).
AUTO_BACKTRACK = 0.3
# backtrack="auto": once the switched run has retreated AUTO_RETREATS times (the switch's
# own retreat and one more) and SP fails again, the decisions it holds are given up and
# decimation starts again from none as backtracking SP with r = AUTO_RESTART_BACKTRACK from
# the first step (Marino et al.'s r), with the whole RETREAT_BUDGET. H100, 1M variables,
# K=5 20.5 (session 24): the switched run at r = 0.3 failed on seeds 0-2 after 8 retreats
# (17-27 s); r = 0.5 from the first step solved seeds 0 and 2 in 15.3 and 21.0 s (fix
# fraction 0.02, K=5's default). K=4 9.8, the ratio where the switch pays, retreated once.
AUTO_RETREATS = 2
AUTO_RESTART_BACKTRACK = 0.5
# The restart fixes this many times the solve's fix fraction per decimation step (at most
# all): at r = 0.5 backtracking SP takes about (1 + r) / (1 - r) = 3 times plain
# decimation's steps at the same fraction, 1.5 times at twice it. H100, 1M variables, one
# process, same formulas and seeds (session 25,
# benchmarks/results/2026-11-28-s25/s25-run2-sp-restart-fix-fraction.jsonl), auto with the
# restart at 0.02 (K=5's and K=6's fraction) / 0.03 / 0.04: K=5 20.5 seed 0 26.5 / 16.7 /
# 15.2 s, seed 1 20.2 / 16.9 / 14.5 s; K=6 41 seed 1 33.5 / - / 25.2 s; K=4 9.9 seed 0
# UNKNOWN after 20.8 / - / 18.4 s. Every SAT verified; no seed lost. (Measured beside a
# 300-sweep cap on backtracking rounds, deleted below; it cut no round of these restarts.)
AUTO_RESTART_FIX_SCALE = 2.0
# backtrack="auto": plain decimation also switches (to r = AUTO_RESTART_BACKTRACK at
# AUTO_RESTART_FIX_SCALE times the fix fraction, from the decisions held) once a round's SP
# needs more than AUTO_SLOWDOWN times the fewest sweeps of its rounds so far (round 1's,
# from random surveys, not counted; not when the surveys are trivial, the run's end). SP
# slowing down is the sign of the frozen phase ahead, where plain decimation's decisions
# go wrong: at K=5 ratio 20.5 (1M variables) the sweeps a round grow from 15 to 55 by
# round 20 and SP stops converging at round 28; at ratio 20 they stay within 45 for 30
# rounds. H100, 1M variables, same process, no switch / 4 / 3
# (benchmarks/results/2026-11-28-s26/s26-run2-*): K=5 20.5 seeds 0-4 17.6 / 9.8 / 7.7,
# 18.8 / UNKNOWN / 8.9, 25.8 / 11.6 / 11.5, 19.9 / 8.0 / 7.6, 20.2 / UNKNOWN / UNKNOWN s
# (the local search gave up on what the switched run left: hence the restart after it,
# below); K=4 9.8 seeds 0-2 9.9 (the process's first 1M solve) / 4.4 / 3.9, 5.9 / 3.7 / 3.9,
# 6.2 / 5.4 / 6.0 s; K=5 20 seeds 0-1 4.0 / 4.1 / 3.4, 4.1 / 3.5 / 3.4 s; K=6 41 seed 1
# 29.5 / 32.3 / 32.2 s; K=4 9.9 UNKNOWN in each (35.6-36.1 s); K=3 4.2, K=4 9.0 and 9.5,
# K=5 19 unchanged (no slowdown before the trivial end).
AUTO_SLOWDOWN = 3.0
# A backtracking round's sweeps capped at 300 (then retreat), against max_iterations, was
# measured and deleted (session 25, H100, 1M variables, same process,
# benchmarks/results/2026-11-28-s25/s25-run1-sp-round-caps.jsonl and the sweep of run 3):
# it cut the r = 0.3 run before auto's restart from 4.6-7.8 to 2.5-3.3 s (K=5 20.5 seed 1
# 24.5 -> 20.3 s, K=6 41 37.9 -> 33.4 s), but K=4 9.8 needs that run's long rounds: the cuts
# added retreats, seeds 1 and 2 went into the restart, 6.3 -> 8.4 and 11.7 s.
# backtrack="auto": the first local search, whose failure still has backtracking SP to
# fall back on, runs while it keeps setting new lows of unsatisfied clauses, up to
# AUTO_STALL_BUDGET times the stage budget, and stops once stalled (rules.walk_stalled
# with AUTO_STALL_FLOOR), skipping its sequential tail. H100, K=3 4.24 1M, seeds 0-5,
# same process: at the 300k-round budget four walks still had 2-7 unsatisfied clauses,
# their last new low 10k-100k rounds before, and three of them fell back to BSP (12-18 s
# a solve); run on, all six solved in their first stage within 323k-688k rounds, solves
# 5.0-7.6 s against 5.2-18.0 s (benchmarks/RESULTS.md, session 16).
AUTO_STALL_FLOOR = 20_000
AUTO_STALL_BUDGET = 4
# The least the CPU solve holds per variable (offsets, biases, assignment, flags) and per
# literal (edge ids, variables, signs, surveys), for the upfront size check.
SOLVER_BYTES_PER_VAR = 32
SOLVER_BYTES_PER_LITERAL = 24


SAT, UNSAT, UNKNOWN = "SAT", "UNSAT", "UNKNOWN"


def fresh_seed() -> int:
    """A seed for a call that was given none; recorded in ``stats["seed"]`` for a rerun."""
    return secrets.randbelow(2**31)


@dataclass
class SolveResult:
    # "SAT" (verified), "UNSAT" (proved: an empty clause, unit propagation of the input
    # meets a contradiction, or every assignment checked on a formula whose assignments
    # are no more than the local search's flips) or "UNKNOWN" (SP and the local search
    # are incomplete)
    status: str
    assignment: np.ndarray | None  # bool per variable (index 0 is variable 1) when SAT
    reason: str = ""
    stats: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.status == "SAT"


def solve(
    cnf: CNF,
    *,
    device: str = "auto",
    seed: int | None = None,
    epsilon: float = 1e-3,
    fix_fraction: float | None = None,
    max_iterations: int = 1000,
    trivial_threshold: float = 0.01,
    local_search_rounds: int | None = None,
    local_search_flips: int | None = None,
    damping: float = 0.15,
    stall_sweeps: int = 0,
    backtrack: float | str = "auto",
    progress: Callable[[str], None] | None = None,
) -> SolveResult:
    """Find a satisfying assignment of ``cnf`` with survey propagation and local search.

    ``cnf``: a :class:`~morphgpu.sp.CNF`, a list of clauses (DIMACS literals) or a PySAT
    ``CNF``.

    Returns ``SolveResult(status="SAT", assignment=...)`` only with an assignment that
    satisfies every clause; ``status="UNSAT"`` only with a proof the solver can see (an
    empty clause, unit propagation of the input meeting a contradiction, or every
    assignment checked: a formula whose variables in clauses have no more than
    ``local_search_flips`` assignments is enumerated instead of searched,
    :mod:`.exhaustive`, with ``stats["enumerated_assignments"]``); otherwise
    ``status="UNKNOWN"`` with the ``reason``. ``stats`` holds the seed (drawn and
    recorded when ``seed`` is None, so ``seed=stats["seed"]`` repeats the run), SP
    iterations, decimation rounds, variables fixed and seconds per phase.
    ``local_search_rounds`` bounds each local-search stage's parallel rounds (default:
    DEFAULT_ROUNDS by side; auto's first stage, left to its default, may run up to
    AUTO_STALL_BUDGET times that while it keeps setting new lows) and
    ``local_search_flips`` its sequential tail (default: FLIPS_PER_ROUND x the rounds, at
    most MAX_DEFAULT_FLIPS by side; both defaults divided by SP_FAILED_SHARE when SP did
    not converge or met a contradiction);
    ``fix_fraction``: the share of the free variables each decimation step fixes (None:
    rules.default_fix_fraction of the formula's mean clause width, 0.01 up to 3 literals
    and 0.02 above).
    ``damping`` keeps that share of the old survey in each synchronous sweep: undamped
    sweeps oscillate at a few thousand variables near the threshold; at 1M variables on an
    H200, 0.3 converged in fewer sweeps than 0.5 (about 2200 against 4200 over a solve),
    and on an H100 0.15 in 10-20% fewer than 0.3 over nine formulas (K = 3 to 6, up to
    K = 3 4.24, K = 4 9.8 and K = 6 40; surveys 28.5 -> 24.6 s in all), with no solve lost
    at 20K-50K variables either; 0.05 fewer still, but near the threshold it lost solves
    that 0.15 kept (K = 3 4.24: 5.9 -> 9.7 s, a switch to backtracking).
    ``max_iterations``: the sweeps a decimation round may take before SP counts as not
    converged (in a backtracking run, such a round retreats).
    ``stall_sweeps``: a decimation round whose ``max |Δeta|`` has set no new low (by 10%) in
    that many sweeps stops before ``max_iterations`` as not converged (0, the default:
    never; at 150 it cut a K=3 ratio 4.2 1M round at 304 sweeps on an H200 that converged
    when left to run, so it is an option for runs past the threshold, not a default).
    ``backtrack``: r in [0, 1), the ratio of backtracking to decimation steps of
    backtracking survey propagation (module docstring, step 3); 0 is plain decimation;
    "auto" (the default) is plain decimation until a round's SP takes more than
    AUTO_SLOWDOWN times the run's fewest sweeps (then r = AUTO_RESTART_BACKTRACK at
    AUTO_RESTART_FIX_SCALE times the fix fraction from the decisions held), or SP fails to
    converge, decimation meets a contradiction or the first local search gives up (or
    stalls: AUTO_STALL_FLOOR) (then r = AUTO_BACKTRACK), and from no decisions
    r = AUTO_RESTART_BACKTRACK at AUTO_RESTART_FIX_SCALE times the fix fraction should
    that fail again (steps 3 and 4).
    stats count the steps of each kind (``decimation_rounds``, ``backtracking_steps``), the
    variables released and the retreats; ``backtrack`` is the value asked for and
    ``backtrack_switch`` what "auto" did: None (plain decimation throughout, or an explicit
    r), else ``{"to": r, "cause": "slowdown" | "non-convergence" | "contradiction" |
    "local search gave up" | "local search stalled", "after_rounds": decimation rounds
    before the switch, "after_iterations": SP iterations before it}`` (a slowdown's also
    its "fix_fraction"); ``backtrack_restart`` None, or the same record for auto's restart
    from no decisions with r = AUTO_RESTART_BACKTRACK after the switched run failed too
    (its "cause" is that run's reason as text, e.g. "SP did not converge in 1000
    iterations (after 2 retreats)" or "local search gave up"; rounds and iterations count from the
    solve's start; its "fix_fraction", AUTO_RESTART_FIX_SCALE times the solve's, at most 1);
    ``local_search_stages`` one record per local-search stage (_count_search).
    Close to the threshold of wide clauses, ``backtrack=0.5`` with twice the default fix
    fraction from the first step was measured (H100, 1M variables, K=5 ratio 20.5, three
    seeds: 6.9-13.5 s, 1.6-2.2 times faster than session 25's "auto" on the same GPU; K=6
    ratio 41, one seed: 15.1 s against 25.2 s); "auto" now switches to that once SP slows
    down (AUTO_SLOWDOWN), which keeps plain decimation's steps while SP is fast:
    backtracking takes (1 + r) / (1 - r) times its steps at one fix fraction, and plain
    decimation meets the lower ratios' targets (K=3 4.2 in about 2 s); backtracking from
    the first step below the threshold has not been measured.
    """
    auto = isinstance(backtrack, str) and backtrack == "auto"
    if isinstance(backtrack, str) and not auto:
        raise ValueError(f'solve: backtrack must be "auto" or a number, got {backtrack!r}')
    if not isinstance(cnf, CNF):
        from .solver import as_cnf  # noqa: PLC0415  (lists of clauses, a PySAT CNF)

        cnf = as_cnf(cnf)
    if fix_fraction is None:
        fix_fraction = rules.default_fix_fraction(cnf.literals.size / max(cnf.n_clauses, 1))
    arguments.seed(seed, allow_none=True,
                   message="solve: {name} must be None or a non-negative integer, got {value!r}")
    for name, value in (("max_iterations", max_iterations), ("stall_sweeps", stall_sweeps),
                        ("local_search_rounds", local_search_rounds),
                        ("local_search_flips", local_search_flips)):
        if value is not None:
            arguments.integer(value, name,
                              message="solve: {name} must be an integer, got {value!r}")
    for name, value in (("epsilon", epsilon), ("fix_fraction", fix_fraction),
                        ("trivial_threshold", trivial_threshold), ("damping", damping),
                        ("backtrack", 0.0 if auto else backtrack)):
        if not arguments.is_real(value):
            raise ValueError(f"solve: {name} must be a number, got {value!r}")
    if not (0 < epsilon < float("inf")):
        raise ValueError(f"solve: epsilon must be positive and finite, got {epsilon}")
    if trivial_threshold != trivial_threshold:
        # Compared with a mean survey strength: NaN never stopped SP as trivial, silently
        # (a negative value does so on purpose: "never trivial", as the tests use it).
        raise ValueError(f"solve: trivial_threshold must be a number, got {trivial_threshold}")
    if progress is not None and not callable(progress):
        raise ValueError(f"solve: progress must be a callable or None, got {progress!r}")
    if not (0 < fix_fraction <= 1):
        raise ValueError(f"solve: fix_fraction must be in (0, 1], got {fix_fraction}")
    if int(max_iterations) < 1:
        raise ValueError(f"solve: max_iterations must be at least 1, got {max_iterations}")
    if int(stall_sweeps) < 0:
        raise ValueError(f"solve: stall_sweeps must be >= 0, got {stall_sweeps}")
    if not (0 <= damping < 1):
        raise ValueError(f"solve: damping must be in [0, 1), got {damping}")
    if not auto and not (0 <= backtrack < 1):
        # r >= 1 releases as much as it fixes on average: the steps would never end.
        raise ValueError(f"solve: backtrack must be in [0, 1), got {backtrack}")
    if local_search_rounds is not None and int(local_search_rounds) < 0:
        raise ValueError(f"solve: local_search_rounds must be >= 0, got {local_search_rounds}")
    if local_search_flips is not None and int(local_search_flips) < 0:
        raise ValueError(f"solve: local_search_flips must be >= 0, got {local_search_flips}")
    side = backend.resolve_device(device, who="morphgpu.sp.solve")
    if side == "cpu":
        # The factor graph and the surveys hold several arrays per variable and per literal:
        # a formula whose variable count cannot fit is refused here, not by NumPy mid-build.
        check_declared_size(
            "solve: cnf", f"{cnf.n_vars} variables and {cnf.literals.size} literals",
            SOLVER_BYTES_PER_VAR * (cnf.n_vars + 1) + SOLVER_BYTES_PER_LITERAL * cnf.literals.size,
            ValueError, verb="has",
        )
    if seed is None:
        seed = fresh_seed()
    rounds_given, flips_given = local_search_rounds, local_search_flips
    if local_search_rounds is None:
        # A budget, not a different algorithm: a GPU round costs tens of µs (one persistent
        # launch), a NumPy round about a hundred times more. K=3 ratio 4.2 at 1M variables
        # took 0.1-0.15M rounds on an H200.
        local_search_rounds = DEFAULT_ROUNDS[side]
    if local_search_flips is None:
        local_search_flips = min(FLIPS_PER_ROUND * int(local_search_rounds),
                                 MAX_DEFAULT_FLIPS[side])
    say = progress or (lambda _msg: None)
    clock = _PhaseClock(side)
    stats: dict[str, Any] = {
        "device": side, "seed": seed, "n_vars": cnf.n_vars, "n_clauses": cnf.n_clauses,
        "sp_iterations": 0, "decimation_rounds": 0, "variables_fixed": 0,
        "sp_converged": None, "local_search": "not run",
        "backtrack": "auto" if auto else float(backtrack),
        "backtrack_switch": None, "backtrack_restart": None, "backtracking_steps": 0,
        "variables_released": 0, "retreats": 0, "fix_fraction": float(fix_fraction),
    }
    decimation = {"epsilon": epsilon, "fix_fraction": fix_fraction,
                  "max_iterations": int(max_iterations),
                  "trivial_threshold": trivial_threshold, "stall_sweeps": int(stall_sweeps),
                  "backtrack": "auto" if auto else float(backtrack), "seed": seed}

    # The guard imports CuPy to know its out-of-memory error: the CPU side needs neither
    # (on a GPU host, `morphgpu sat --device cpu` would otherwise load CuPy for nothing).
    guard = (backend.gpu_memory_guard(f"sp.solve on {cnf}") if side == "gpu"
             else contextlib.nullcontext())
    with guard:
        with clock("build"):
            fg = factor.build(cnf, side)
        stats["tautologies_dropped"] = fg.dropped_tautologies
        if fg.has_empty_clause:
            why = "the formula has an empty clause (unsatisfiable)"
            return _finish(cnf, None, why, stats, clock, unsat=True)
        with clock("build"):  # the engine's arrays and kernels belong to the build too
            engine = _engine(fg, side, seed, damping)
        with clock("decimation"):
            consistent = engine.propagate()
        if not consistent:
            return _finish(cnf, None, "unit propagation of the input found a contradiction "
                           "(unsatisfiable)", stats, clock, unsat=True)
        with clock("enumeration"):
            small = exhaustive.check(cnf, int(local_search_flips))
        if small is not None:
            # No more assignments than the local search's flips: every one checked instead.
            stats["enumerated_assignments"] = small.assignments
            if small.model is None:
                return _finish(cnf, None, f"each of the {small.assignments} assignments of its "
                               f"{small.n_used} variables falsifies a clause (unsatisfiable)",
                               stats, clock, unsat=True)
            return _finish(cnf, small.model, "", stats, clock)
        sp_problem = _survey_and_decimate(
            engine, stats, clock, say, **decimation,
            retreat_budget=AUTO_RETREATS if auto else RETREAT_BUDGET)
        if auto and sp_problem and stats["decimation_rounds"] > 0:
            # The switched run failed again: restart from no decisions (AUTO_RETREATS). Not
            # when SP never converged on the input itself: the restart would begin there.
            del engine  # its arrays go before the fresh engine's are made
            engine, sp_problem = _restart(fg, side, seed, damping, stats, clock, say,
                                          decimation, sp_problem)
        # auto's first run still has BSP to fall back on: its local search, left to its
        # default budget, runs on while it sets new lows and stops stalled
        # (AUTO_STALL_FLOOR). After a plain run, the fallback is r = AUTO_BACKTRACK from no
        # decisions; after a run switched by SP's slowdown, the restart.
        switch = stats["backtrack_switch"]
        slowed = (switch is not None and switch["cause"] == "slowdown"
                  and stats["backtrack_restart"] is None)
        can_switch = auto and not sp_problem and (switch is None or slowed)
        solved, budget = _frozen_search(
            engine, stats, clock, say, sp_problem, local_search_rounds, local_search_flips,
            rounds_given, flips_given,
            stall_floor=AUTO_STALL_FLOOR if can_switch and rounds_given is None else 0)
        if not solved and slowed and can_switch:
            # K=5 20.5 at 1M, seed 4 (session 26, run 2): the switched run's surveys went
            # trivial and the local search gave up on what they left (38 s, UNKNOWN);
            # without the switch, auto's restart from no decisions solved it in 20.2 s.
            why = "local search stalled" if _stalled(engine) else "local search gave up"
            del engine
            engine, sp_problem = _restart(fg, side, seed, damping, stats, clock, say,
                                          decimation, why)
            solved, budget = _frozen_search(engine, stats, clock, say, sp_problem,
                                            local_search_rounds, local_search_flips,
                                            rounds_given, flips_given)
        elif not solved and can_switch:
            # Plain decimation ran to trivial surveys and the local search gave up or
            # stalled on what it left (K=3 4.24 at 1M before the stage ran on: 3 of 6
            # seeds, ~11 s a stage). Decimate again from no decisions as backtracking SP,
            # in place of the every-variable-free stage (which gave up on those seeds
            # too). From scratch, not from the decisions held: there the surveys are
            # trivial, so a backtracking step would stop at once, and its release scores
            # (W+ - W- of near-zero surveys) rank nothing.
            why = "local search stalled" if _stalled(engine) else "local search gave up"
            _switch(stats, why)
            say(f"{why}: decimating again with backtrack={AUTO_BACKTRACK}")
            del engine  # its arrays go before the fresh engine's are made
            engine, sp_problem = _decimate_afresh(fg, side, seed, damping, stats, clock, say,
                                                  decimation, AUTO_BACKTRACK)
            solved, budget = _frozen_search(engine, stats, clock, say, sp_problem,
                                            local_search_rounds, local_search_flips,
                                            rounds_given, flips_given)
        with clock("local_search"):
            if not solved:
                say("local search with every variable free")
                solved = engine.local_search(budget[0], freeze_fixed=False,
                                             init=sp_problem == "contradiction after decimation",
                                             max_flips=budget[1])
                _count_search(engine, stats)
                stats["local_search"] = ("solved with every variable free" if solved
                                         else "gave up")
        # The GPU engine's values stay on the device: _finish checks them there and copies
        # them to the host only once they pass.
        assignment = engine.values if side == "gpu" else engine.assignment()
    reason = "" if solved else "; ".join(filter(None, [sp_problem, "local search gave up"]))
    if sp_problem and solved:
        stats["note"] = f"{sp_problem}; the local search solved it anyway"
    return _finish(cnf, assignment if solved else None, reason, stats, clock)


# warm_up's formula: variables, and clauses per variable (the SAT side at every width).
WARM_UP_VARS = 256
WARM_UP_RATIO = 1.0


def warm_up(width: int) -> None:
    """Solve a tiny random formula of clause width ``width`` on the GPU, every phase
    forced to run (never trivial, half the free variables fixed per round), so that what a
    process pays once, not per formula, is paid here: CuPy's sort and scan libraries, its
    compile cache's first look-ups, the element-wise kernels of the build and decimation,
    and the wing's modules at that width. ``morphgpu sat`` runs it in a thread beside the
    file's read; on the H100 machine those first uses cost 0.23-0.25 s of the CLI's build
    phase (0.26-0.28 s against 0.03 s in a warm process). Raises what the GPU path would."""
    # Past FIXED_WIDTH_MAX (gpu.py) every width shares the generic modules: a cap keeps
    # a silly width from costing a large warm-up.
    width = max(1, min(int(width), 16))
    from .cnf import random_ksat  # noqa: PLC0415

    formula = random_ksat(max(WARM_UP_VARS, 4 * width), width, ratio=WARM_UP_RATIO, seed=0)
    solve(formula, device="gpu", seed=0, fix_fraction=0.5, max_iterations=100,
          trivial_threshold=0.0, local_search_rounds=2, local_search_flips=64, backtrack=0.0)
    # The compiler keys of CuPy's own kernels met after our last module load, for the next
    # process (compiler_key_cache saves after our loads only).
    compiler_key_cache.save(backend.cupy_module())


def _survey_and_decimate(engine: Any, stats: dict[str, Any], clock: _PhaseClock,
                         say: Callable[[str], None], *, epsilon: float, fix_fraction: float,
                         max_iterations: int, trivial_threshold: float,
                         stall_sweeps: int, backtrack: float | str = 0.0,
                         seed: int = 0, retreat_budget: int = RETREAT_BUDGET) -> str:
    """Phase 3; returns "" when the surveys became trivial (or nothing is left), else why not.
    ``backtrack="auto"``: r = 0 until SP slows down (AUTO_SLOWDOWN; then
    AUTO_RESTART_BACKTRACK at AUTO_RESTART_FIX_SCALE times the fix fraction) or first
    fails (then AUTO_BACKTRACK from a retreat on), either recorded by _switch. At most
    ``retreat_budget`` retreats in this call."""
    auto = backtrack == "auto"
    retreats_before = stats.get("retreats", 0)  # scripts/sp_residual.py's dict has none
    r = 0.0 if auto else float(backtrack)
    # r = 0 draws nothing and never releases: plain decimation, step for step.
    draw = np.random.default_rng([seed, BSP_STREAM]).random if r > 0 else None
    release_chance = r / (1.0 + r)
    must_release = False  # after a retreat, the next step releases
    fewest = None  # the plain run's fewest sweeps in a round (AUTO_SLOWDOWN)
    while engine.n_free() > 0:
        with clock("surveys"):
            converged, iterations = engine.run_surveys(epsilon, max_iterations, stall_sweeps)
        stats["sp_iterations"] += iterations
        stats["sp_converged"] = converged
        if converged and auto and draw is None and AUTO_SLOWDOWN \
                and stats["decimation_rounds"] >= 1:
            fewest = iterations if fewest is None else min(fewest, iterations)
            if iterations > AUTO_SLOWDOWN * fewest:
                with clock("decimation"):
                    if engine.surveys_trivial(trivial_threshold):
                        return ""  # the end: plain decimation stops here too
                draw, release_chance = _switch(stats, "slowdown", seed,
                                               r=AUTO_RESTART_BACKTRACK)
                fix_fraction = min(1.0, AUTO_RESTART_FIX_SCALE * fix_fraction)
                stats["backtrack_switch"]["fix_fraction"] = fix_fraction
                say(f"SP slowed down ({iterations} sweeps against {fewest}): "
                    f"backtrack={AUTO_RESTART_BACKTRACK}, fix_fraction={fix_fraction:g} "
                    "from here")
        if not converged:
            if getattr(engine, "stalled", False):
                why = (f"SP did not converge: max |Δeta| made no progress in {stall_sweeps} "
                       f"sweeps (round {stats['decimation_rounds'] + 1} stopped after "
                       f"{iterations} of at most {max_iterations})")
            else:
                why = f"SP did not converge in {max_iterations} iterations"
            if auto and draw is None:
                draw, release_chance = _switch(stats, "non-convergence", seed)
                say(f"SP did not converge: backtrack={AUTO_BACKTRACK} from here")
            if draw is None or not _retreat(engine, stats, clock, fix_fraction,
                                            retreats_before + retreat_budget):
                return _after_retreats(why, stats)
            must_release = True
            say(f"retreat {stats['retreats']} (SP did not converge): {engine.n_free()} free")
            continue
        if draw is not None and (draw() < release_chance or must_release) \
                and engine.n_decided() > 0:
            with clock("decimation"):
                if engine.surveys_trivial(trivial_threshold):
                    return ""
                consistent, released = engine.release(max(1, int(fix_fraction
                                                                  * engine.n_free())))
            must_release = False
            stats["backtracking_steps"] += 1
            stats["variables_released"] += int(released.size)
            say(f"backtracking step {stats['backtracking_steps']}: {engine.n_free()} free")
            if not consistent:  # unit propagation of fewer decisions: not when engines are right
                return "contradiction after releasing decisions"
            continue
        with clock("decimation"):
            trivial, n_fixed = engine.decimate(fix_fraction, trivial_threshold)
            if trivial:
                return ""
            stats["decimation_rounds"] += 1
            stats["variables_fixed"] += n_fixed
            consistent = engine.propagate()
        say(f"round {stats['decimation_rounds']}: {engine.n_free()} free, "
            f"{stats['sp_iterations']} SP iterations")
        if not consistent:
            if auto and draw is None:
                draw, release_chance = _switch(stats, "contradiction", seed)
                say(f"contradiction: backtrack={AUTO_BACKTRACK} from here")
            if draw is None or not _retreat(engine, stats, clock, fix_fraction,
                                            retreats_before + retreat_budget):
                return _after_retreats("contradiction after decimation", stats)
            must_release = True
            say(f"retreat {stats['retreats']} (contradiction): {engine.n_free()} free")
    return ""


def _restart(fg: factor.FactorGraph, side: str, seed: int, damping: float,
             stats: dict[str, Any], clock: _PhaseClock, say: Callable[[str], None],
             decimation: dict[str, Any], cause: str) -> tuple[Any, str]:
    """auto's last run: from no decisions as backtracking SP with r =
    AUTO_RESTART_BACKTRACK at AUTO_RESTART_FIX_SCALE times the fix fraction, recorded in
    stats["backtrack_restart"]; (the engine, phase 3's answer)."""
    restart_fix = min(1.0, AUTO_RESTART_FIX_SCALE * decimation["fix_fraction"])
    stats["backtrack_restart"] = {"to": AUTO_RESTART_BACKTRACK, "cause": cause,
                                  "after_rounds": stats["decimation_rounds"],
                                  "after_iterations": stats["sp_iterations"],
                                  "fix_fraction": restart_fix}
    say(f"{cause}: decimating again from no decisions with "
        f"backtrack={AUTO_RESTART_BACKTRACK}, fix_fraction={restart_fix:g}")
    return _decimate_afresh(fg, side, seed, damping, stats, clock, say,
                            {**decimation, "fix_fraction": restart_fix},
                            AUTO_RESTART_BACKTRACK)


def _decimate_afresh(fg: factor.FactorGraph, side: str, seed: int, damping: float,
                     stats: dict[str, Any], clock: _PhaseClock, say: Callable[[str], None],
                     decimation: dict[str, Any], r: float) -> tuple[Any, str]:
    """auto's second starts: a fresh engine (the input's units propagated again, consistent
    as the first time) and phase 3 on it as backtracking SP with ``r`` and the whole
    RETREAT_BUDGET; (the engine, phase 3's answer)."""
    with clock("build"):
        engine = _engine(fg, side, seed, damping)
    with clock("decimation"):
        engine.propagate()
    return engine, _survey_and_decimate(engine, stats, clock, say,
                                        **{**decimation, "backtrack": r},
                                        retreat_budget=RETREAT_BUDGET)


def _switch(stats: dict[str, Any], cause: str, seed: int = 0,
            r: float = AUTO_BACKTRACK) -> tuple[Callable[[], float], float]:
    """Record that "auto" goes on as backtracking SP with ``r`` from here, and return that
    run's step draw and release chance (as an explicit r would draw them)."""
    stats["backtrack_switch"] = {"to": r, "cause": cause,
                                 "after_rounds": stats["decimation_rounds"],
                                 "after_iterations": stats["sp_iterations"]}
    return np.random.default_rng([seed, BSP_STREAM]).random, r / (1.0 + r)


def _frozen_search(engine: Any, stats: dict[str, Any], clock: _PhaseClock,
                   say: Callable[[str], None], sp_problem: str, rounds: int, flips: int,
                   rounds_given: int | None, flips_given: int | None,
                   stall_floor: int = 0) -> tuple[bool, tuple[int, int]]:
    """Step 4's first stage, after phase 3 ended with ``sp_problem`` ("" when it did not
    fail): (solved, the (rounds, flips) budget of each stage)."""
    stats["free_after_sp"] = engine.n_free()
    if sp_problem:
        # SP failed (no convergence or a contradiction, e.g. past the threshold at K >= 4):
        # the local search is a long shot there, so unless told otherwise it gets a
        # hundredth of the default budget rather than seconds of hopeless rounds per stage.
        if rounds_given is None:
            rounds = max(1, int(rounds) // SP_FAILED_SHARE)
        if flips_given is None:
            flips = int(flips) // SP_FAILED_SHARE
    stats["local_search_budget"] = {"rounds": int(rounds), "flips": int(flips)}
    # A stage that may stall out runs on past its budget while it sets new lows.
    stage_rounds = int(rounds) * (AUTO_STALL_BUDGET if stall_floor else 1)
    solved = False
    if sp_problem != "contradiction after decimation":
        with clock("local_search"):
            say(f"local search on {stats['free_after_sp']} free variables")
            solved = engine.local_search(stage_rounds, freeze_fixed=True, init=True,
                                         max_flips=int(flips), stall_floor=stall_floor)
            _count_search(engine, stats)
        stats["local_search"] = ("solved with fixed variables frozen" if solved
                                 else "stalled" if _stalled(engine) else "gave up")
    return solved, (int(rounds), int(flips))


def _retreat(engine: Any, stats: dict[str, Any], clock: _PhaseClock,
             fix_fraction: float, limit: int) -> bool:
    """Back off from a contradiction or a round that did not converge: undo the last
    decimation step (or, when it is undone already, release by the scores of the surveys
    as they stand); False when stats["retreats"] has reached ``limit`` or nothing is left
    to release."""
    if stats["retreats"] >= limit or engine.n_decided() == 0:
        return False
    stats["retreats"] += 1
    with clock("decimation"):
        if engine.has_last_decimation():
            return engine.undo_last_decimation()
        consistent, released = engine.release(max(1, int(fix_fraction * engine.n_free())))
    stats["backtracking_steps"] += 1
    stats["variables_released"] += int(released.size)
    return consistent


def _after_retreats(why: str, stats: dict[str, Any]) -> str:
    retreats = stats.get("retreats", 0)  # scripts/sp_residual.py keeps a stats dict without
    return f"{why} (after {retreats} retreats)" if retreats else why


def _stalled(engine: Any) -> bool:
    progress = getattr(engine, "walk_progress", None)
    return progress is not None and progress.stalled


def _count_search(engine: Any, stats: dict[str, Any]) -> None:
    """Add a local-search stage's parallel rounds and sequential tail flips to the stats,
    and its record to stats["local_search_stages"]: rounds, tail flips, the fewest
    unsatisfied clauses a round began with and the round that reached them, the longest
    wait for a new fewest, and whether it stopped stalled or stuck (rules.WalkProgress)."""
    for key, attr in (("local_search_rounds", "local_search_rounds_run"),
                      ("local_search_flips", "local_search_flips_run")):
        stats[key] = stats.get(key, 0) + int(getattr(engine, attr, 0))
    stage = {"rounds": int(getattr(engine, "local_search_rounds_run", 0)),
             "flips": int(getattr(engine, "local_search_flips_run", 0))}
    progress = getattr(engine, "walk_progress", None)
    if progress is not None:
        stage.update(asdict(progress))
    stats.setdefault("local_search_stages", []).append(stage)


def _engine(fg: factor.FactorGraph, side: str, seed: int | None, damping: float) -> Any:
    if side == "gpu":
        from .gpu import GPUEngine  # noqa: PLC0415 (CuPy only when the GPU runs)

        return GPUEngine(fg, seed, damping)
    from .cpu import CPUEngine  # noqa: PLC0415

    return CPUEngine(fg, seed, damping)


def _finish(cnf: CNF, assignment: Any, reason: str, stats: dict[str, Any],
            clock: _PhaseClock, *, unsat: bool = False) -> SolveResult:
    """The result; an ``assignment`` (NumPy, or the GPU engine's CuPy values) is returned
    only after it has been checked against every clause of ``cnf`` itself."""
    status = UNSAT if unsat else UNKNOWN
    if assignment is not None:
        on_device = backend.side_of(assignment) == "gpu"
        with clock("verify"):
            if on_device:
                # A kernel over the CNF's own arrays: the NumPy check took 0.17-0.19 s of
                # host time at 12.6M literals, more than the copies and the launch.
                from .gpu import verify_on_device  # noqa: PLC0415 (CuPy only on the GPU)

                with backend.gpu_memory_guard(f"sp.solve: verifying on {cnf}"):
                    ok = verify_on_device(cnf, assignment)
            else:
                ok = verify(cnf, assignment)
        if ok:
            status = "SAT"
            if on_device:  # the very values the kernel checked
                assignment = backend.to_host(assignment).astype(bool)
        else:  # never reached when the engines are right; never answer SAT regardless
            reason = "the local search's assignment failed verification"
            assignment = None
    stats["seconds"] = clock.seconds
    stats["total_seconds"] = float(sum(clock.seconds.values()))
    return SolveResult(status, assignment, reason, stats)


class _PhaseClock:
    """Wall seconds per named phase (the GPU engines synchronise when they read flags)."""

    def __init__(self, side: str) -> None:
        self.side = side
        self.seconds: dict[str, float] = {}

    def __call__(self, phase: str) -> _PhaseClock._Span:
        return _PhaseClock._Span(self, phase)

    class _Span:
        def __init__(self, clock: _PhaseClock, phase: str) -> None:
            self.clock, self.phase = clock, phase

        def __enter__(self) -> None:
            self.t0 = time.perf_counter()

        def __exit__(self, *exc: object) -> None:
            if self.clock.side == "gpu":
                backend.synchronize()
            dt = time.perf_counter() - self.t0
            self.clock.seconds[self.phase] = self.clock.seconds.get(self.phase, 0.0) + dt
