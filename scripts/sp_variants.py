#!/usr/bin/env python3
"""GPU experiment for the SP wing, one process: (a) one SP sweep at 1M variables, the
0239dd1 kernels (scripts/sp_survey_before.cu) against the current ones for each lane count
of the product kernel, K=3 and K=4; (b) K=3 ratio 4.2 1M solves per seed under local-search
variants (block_tail: rounds of at most that many proposals run on one block), each
assignment verified; (c) optional wider rows.

    scripts/sp_variants.py [--seeds 0 1 2] [--variants 0,96] [--rows 4:9.9,5:21.1]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from morphgpu import backend, kernels, sp
from morphgpu.sp import factor
from morphgpu.sp import gpu as spgpu


def event_ms(fn, repeat: int = 20, warmup: int = 3) -> float:
    cp = backend.cupy_module()
    for _ in range(warmup):
        fn()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(repeat):
        fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / repeat


def sweeps(k: int, ratio: float, n: int) -> None:
    f = sp.random_ksat(n, k, ratio=ratio, seed=0)
    fg = factor.build(f, "gpu")
    e = spgpu.GPUEngine(fg, 0, 0.3)
    assert e.propagate()
    defines = kernels.index_defines(fg.lit_var.dtype, fg.var_edges.dtype)
    old = kernels.load_module(Path(__file__).with_name("sp_survey_before.cu").resolve(),
                              defines=defines)
    old_prod, old_clause = old.get_function("sp_var_products"), old.get_function("sp_clause_update")
    eta_old = e.eta.copy()

    def old_sweep() -> None:
        grid, block = e._grid(fg.n_vars)
        old_prod(grid, block, (np.int64(fg.n_vars), fg.var_offsets, fg.var_edges, fg.lit_neg,
                               np.int32(fg.width), eta_old, e.fixed, e.satisfied, e.prods,
                               e.no_delta, np.float32(0)))
        grid, block = e._grid(fg.n_clauses)
        old_clause(grid, block, (np.int64(fg.n_clauses), np.int32(fg.width), fg.lit_var,
                                 fg.lit_neg, eta_old, e.fixed, e.satisfied, e.prods,
                                 np.float32(0.3), e.deltas, e.no_delta, np.float32(0)))

    before = event_ms(old_sweep)
    row = {"k": k, "ratio": ratio, "n": n, "edges": int(fg.var_edges.size),
           "old_sweep_ms": round(before, 4), "default_lanes": e.lanes}
    default = e.lanes
    for lanes in (1, 2, 4, 8, 16, 32):
        e.lanes = lanes
        ms = event_ms(lambda: e._sweep(0))
        prod_ms = event_ms(lambda: e._products(e.no_delta, 0.0))
        row[f"lanes{lanes}_sweep_ms"] = round(ms, 4)
        row[f"lanes{lanes}_products_ms"] = round(prod_ms, 4)
        row[f"lanes{lanes}_old_over_new"] = round(before / ms, 3)
    e.lanes = default
    print(json.dumps(row), flush=True)


def solve_row(f: sp.CNF, k: int, ratio: float, seed: int, tag: str, **kw) -> dict:
    t0 = time.perf_counter()
    r = sp.solve(f, device="gpu", seed=seed, **kw)
    backend.synchronize()
    total = time.perf_counter() - t0
    sec = r.stats["seconds"]
    row = {"k": k, "ratio": ratio, "n": f.n_vars, "seed": seed, "variant": tag,
           "status": r.status, "verified": r.status == "SAT" and sp.verify(f, r.assignment),
           "reason": r.reason, "seconds_total": round(total, 3),
           "seconds_sp": round(sec.get("surveys", 0) + sec.get("decimation", 0), 3),
           "seconds": {key: round(v, 3) for key, v in sec.items()},
           "sp_iterations": r.stats["sp_iterations"], "rounds": r.stats["decimation_rounds"],
           "free_after_sp": r.stats.get("free_after_sp"), "ls": r.stats["local_search"],
           "ls_rounds": r.stats.get("local_search_rounds", 0),
           "ls_flips": r.stats.get("local_search_flips", 0)}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    p.add_argument("--variants", default="0,96",
                   help="block_tail values for the K=3 solves")
    p.add_argument("--sweep-rows", default="3:4.2,4:9.9")
    p.add_argument("--rows", default="", help="K:ratio solves with the defaults, seed 0")
    a = p.parse_args()
    sp.solve(sp.random_ksat(2000, 3, ratio=4.0, seed=0), device="gpu", seed=0)  # compile
    for item in filter(None, a.sweep_rows.split(",")):
        k, ratio = item.split(":")
        sweeps(int(k), float(ratio), a.n)
    variants = [int(v) for v in a.variants.split(",") if v]
    for seed in a.seeds:
        f = sp.random_ksat(a.n, 3, ratio=4.2, seed=seed)
        for block_tail in variants:
            spgpu.BLOCK_TAIL = block_tail
            solve_row(f, 3, 4.2, seed, f"block_tail={block_tail}")
        del f
    spgpu.BLOCK_TAIL = 0
    for item in filter(None, a.rows.split(",")):
        k, ratio = item.split(":")
        t0 = time.perf_counter()
        f = sp.random_ksat(a.n, int(k), ratio=float(ratio), seed=0)
        print(f"generated k={k} in {time.perf_counter() - t0:.1f} s", flush=True)
        solve_row(f, int(k), float(ratio), 0, "defaults")
        del f


if __name__ == "__main__":
    main()
