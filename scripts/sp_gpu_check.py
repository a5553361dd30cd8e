#!/usr/bin/env python3
"""Issue 5 on a GPU: K=3 ratio 4.2 solved end to end (the assignment verified clause by
clause here, independently of solve), with seconds per phase and the local search's rounds
and flips; or, with --sp-only, the SP phase at wider K (the local search cut short).

    scripts/sp_gpu_check.py --k 3 --ratio 4.2 --n 1000000 --seeds 0 1 2
    scripts/sp_gpu_check.py --k 4 --ratio 9.9 --n 1000000 --seeds 0 --sp-only
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from morphgpu import backend, sp


def independent_check(cnf: sp.CNF, assignment: np.ndarray) -> bool:
    """Every clause has a true literal (NumPy over the flat literal array, not sp.verify)."""
    lits = cnf.literals.astype(np.int64)
    true_lit = assignment[np.abs(lits) - 1] == (lits > 0)
    clause = np.repeat(np.arange(cnf.n_clauses), np.diff(cnf.offsets))
    return bool(np.bincount(clause[true_lit], minlength=cnf.n_clauses).all())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--ratio", type=float, default=4.2)
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--sp-only", action="store_true",
                   help="cut the local search short (2000 rounds, no tail): the SP phase")
    p.add_argument("--device", default="gpu")
    a = p.parse_args()
    sp.solve(sp.random_ksat(2000, 3, ratio=4.0, seed=0), device=a.device, seed=0)  # compile
    extra = dict(local_search_rounds=2000, local_search_flips=0) if a.sp_only else {}
    for seed in a.seeds:
        t0 = time.perf_counter()
        f = sp.random_ksat(a.n, a.k, ratio=a.ratio, seed=seed)
        print(f"k={a.k} n={a.n} seed={seed}: generated in {time.perf_counter() - t0:.1f} s",
              flush=True)
        t0 = time.perf_counter()
        r = sp.solve(f, device=a.device, seed=seed, **extra)
        backend.synchronize()
        total = time.perf_counter() - t0
        s = r.stats
        sec = s["seconds"]
        checked = r.status == "SAT" and independent_check(f, r.assignment)
        print(json.dumps({
            "k": a.k, "ratio": a.ratio, "n": a.n, "seed": seed, "status": r.status,
            "reason": r.reason, "independently_verified": checked, "seconds_total": round(total, 3),
            "seconds_sp": round(sec.get("surveys", 0) + sec.get("decimation", 0), 3),
            "seconds": {key: round(v, 3) for key, v in sec.items()},
            "sp_iterations": s["sp_iterations"], "decimation_rounds": s["decimation_rounds"],
            "free_after_sp": s.get("free_after_sp"), "local_search": s["local_search"],
            "ls_rounds": s.get("local_search_rounds", 0),
            "ls_flips": s.get("local_search_flips", 0),
        }), flush=True)
        del f, r


if __name__ == "__main__":
    main()
