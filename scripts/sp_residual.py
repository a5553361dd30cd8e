#!/usr/bin/env python3
"""Issue 5 driver: run SP with decimation on random 3-SAT on the CPU until the surveys are
trivial, then describe the residual (free variables, 2- and 3-clauses), optionally decide it
with CaDiCaL (python-sat), and run the wing's local search on it with a given flip budget.

    scripts/sp_residual.py --n 10000 --seed 1 --flips 3000000 --decide
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from morphgpu.sp import factor, random_ksat, write_dimacs
from morphgpu.sp.api import _PhaseClock, _survey_and_decimate
from morphgpu.sp.cnf import CNF
from morphgpu.sp.cpu import CPUEngine


def residual_clauses(engine: CPUEngine) -> list[list[int]]:
    """The open clauses restricted to their free literals, as DIMACS lists."""
    fg, w = engine.fg, engine.fg.width
    live = engine._alive().reshape(-1, w)
    out = []
    for a in np.flatnonzero(~engine.satisfied):
        edges = a * w + np.flatnonzero(live[a])
        out.append([int(-(v + 1) if neg else v + 1)
                    for v, neg in zip(fg.lit_var[edges], fg.lit_neg[edges])])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--ratio", type=float, default=4.2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--fix-fraction", type=float, default=0.01)
    p.add_argument("--threshold", type=float, default=0.01)
    p.add_argument("--damping", type=float, default=0.3)
    p.add_argument("--flips", type=int, default=400_000)
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--decide", action="store_true", help="decide the residual with CaDiCaL")
    p.add_argument("--save", help="write the residual (free variables renumbered) as DIMACS")
    a = p.parse_args()
    f = random_ksat(a.n, 3, ratio=a.ratio, seed=a.seed)
    engine = CPUEngine(factor.build(f, "cpu"), a.seed, a.damping)
    engine.propagate()
    stats = {"sp_iterations": 0, "decimation_rounds": 0, "variables_fixed": 0}
    t0 = time.perf_counter()
    why = _survey_and_decimate(engine, stats, _PhaseClock("cpu"), lambda _m: None,
                               epsilon=1e-3, fix_fraction=a.fix_fraction,
                               max_iterations=1000, trivial_threshold=a.threshold,
                               stall_sweeps=0)
    sp_seconds = time.perf_counter() - t0
    rest = residual_clauses(engine)
    sizes = np.bincount([len(c) for c in rest], minlength=4)
    free = engine.n_free()
    print(f"n={a.n} seed={a.seed} stop={why or 'trivial surveys'} "
          f"rounds={stats['decimation_rounds']} sweeps={stats['sp_iterations']} "
          f"sp_s={sp_seconds:.1f} free={free} 2-clauses={sizes[2]} 3-clauses={sizes[3]} "
          f"2-clauses/free={sizes[2] / max(free, 1):.3f}", flush=True)
    if a.save:
        free_ids = np.flatnonzero(engine.fixed == 0)
        renumber = np.zeros(f.n_vars + 1, dtype=np.int64)
        renumber[free_ids + 1] = np.arange(1, free_ids.size + 1)
        lits = [[int(np.sign(x) * renumber[abs(x)]) for x in c] for c in rest]
        write_dimacs(CNF.from_clauses(lits, n_vars=free_ids.size), a.save)
    if a.decide:
        from pysat.solvers import Cadical153  # noqa: PLC0415

        with Cadical153(bootstrap_with=rest) as solver:
            print(f"residual satisfiable (CaDiCaL): {solver.solve()}", flush=True)
    t0 = time.perf_counter()
    ok = engine.local_search(a.rounds, freeze_fixed=True, init=True, max_flips=a.flips)
    print(f"local search solved={ok} rounds={engine.local_search_rounds_run} "
          f"flips={engine.local_search_flips_run} s={time.perf_counter() - t0:.1f}")


if __name__ == "__main__":
    main()
