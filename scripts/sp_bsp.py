#!/usr/bin/env python3
"""Backtracking survey propagation against plain decimation near the threshold, one JSON
line per solve (status, reason, seconds per phase, steps, free variables after SP, the
least free count on the way), every SAT checked here clause by clause.

    scripts/sp_bsp.py --n 1000000 --runs 4:9.8:0 4:9.8:0.5 3:4.24:0 3:4.24:0.5 4:9.8:0.3

A run is K:ratio:r[:fix_fraction]. Each solve is bounded by the local-search budgets
given here and by --deadline seconds of decimation steps (the progress callback stops a
solve past it; such a row says "deadline").
"""

from __future__ import annotations

import argparse
import json
import re
import time

import numpy as np

from morphgpu import backend, sp


class Deadline(Exception):
    pass


def independent_check(cnf: sp.CNF, assignment: np.ndarray) -> bool:
    lits = cnf.literals.astype(np.int64)
    true_lit = assignment[np.abs(lits) - 1] == (lits > 0)
    clause = np.repeat(np.arange(cnf.n_clauses), np.diff(cnf.offsets))
    return bool(np.bincount(clause[true_lit], minlength=cnf.n_clauses).all())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--runs", nargs="+", default=["4:9.8:0", "4:9.8:0.5"])
    p.add_argument("--rounds", type=int, default=100_000, help="local-search rounds a stage")
    p.add_argument("--flips", type=int, default=500_000, help="local-search tail flips a stage")
    p.add_argument("--deadline", type=float, default=30.0)
    p.add_argument("--device", default="gpu")
    a = p.parse_args()
    sp.solve(sp.random_ksat(2000, 3, ratio=4.0, seed=0), device=a.device, seed=0,
             backtrack=0.5)  # compile every kernel once
    formulas: dict[tuple[int, float], sp.CNF] = {}
    for run in a.runs:
        parts = run.split(":")
        k, ratio, r = int(parts[0]), float(parts[1]), float(parts[2])
        fix = float(parts[3]) if len(parts) > 3 else 0.01
        if (k, ratio) not in formulas:
            formulas.clear()
            formulas[(k, ratio)] = sp.random_ksat(a.n, k, ratio=ratio, seed=a.seed)
        f = formulas[(k, ratio)]
        # Free variables every 10th step ("d" decimation, "b" backtracking, "r" retreat).
        seen = {"least_free": a.n, "messages": 0, "last": "", "trace": []}
        t0 = time.perf_counter()

        def progress(msg: str, seen=seen, t0=t0) -> None:
            seen["messages"] += 1
            seen["last"] = msg
            found = re.search(r"(\d+) free", msg)
            if found and msg[:3] in ("ret", "rou", "bac"):  # not "local search on N free"
                free = int(found.group(1))
                seen["least_free"] = min(seen["least_free"], free)
                if msg.startswith("retreat") or seen["messages"] % 10 == 0:
                    seen["trace"].append(f"{'rdb'[('ret', 'rou', 'bac').index(msg[:3])]}{free}")
            if time.perf_counter() - t0 > a.deadline and not msg.startswith("local search"):
                raise Deadline(msg)

        row = {"k": k, "ratio": ratio, "n": a.n, "seed": a.seed, "r": r, "f": fix}
        try:
            res = sp.solve(f, device=a.device, seed=a.seed, backtrack=r, fix_fraction=fix,
                           local_search_rounds=a.rounds, local_search_flips=a.flips,
                           progress=progress)
        except Deadline as stop:
            backend.synchronize()
            row.update(status="deadline", last=str(stop), least_free=seen["least_free"],
                       seconds_total=round(time.perf_counter() - t0, 2),
                       trace=" ".join(seen["trace"]))
            print(json.dumps(row), flush=True)
            continue
        backend.synchronize()
        s = res.stats
        row.update(
            status=res.status, reason=res.reason,
            verified_here=res.status == "SAT" and independent_check(f, res.assignment),
            seconds_total=round(time.perf_counter() - t0, 2),
            seconds={key: round(v, 2) for key, v in s["seconds"].items()},
            sp_iterations=s["sp_iterations"], decimation_steps=s["decimation_rounds"],
            backtracking_steps=s["backtracking_steps"], released=s["variables_released"],
            retreats=s["retreats"], free_after_sp=s.get("free_after_sp"),
            least_free=seen["least_free"], local_search=s["local_search"],
            ls_rounds=s.get("local_search_rounds", 0), ls_flips=s.get("local_search_flips", 0),
            note=s.get("note", ""), trace=" ".join(seen["trace"]))
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
