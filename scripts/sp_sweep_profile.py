#!/usr/bin/env python3
"""GPU experiment for the SP wing, one process: the time of one SP sweep (products + clause
update, CUDA events) at a late decimation state, under the sweep kernels' build options:
compaction of the sweep lists (sp/gpu.py COMPACT), the clause kernel compiled for the
formula's width (FIXED_WIDTH_MAX) and lanes per variable. (A 2- or 4-way unrolled product
loop, measured with this script on 2026-11-24, was within 3% and was dropped.)

    scripts/sp_sweep_profile.py [--rows 4:9.9,6:43.4] [--n 1000000] [--rounds 3] [--json F]

The late state: ``--rounds`` rounds of (SP to convergence or 200 sweeps, fix the most
biased tenth of the free variables, unit propagation) with the default engine.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sp_variants import event_ms

from morphgpu import backend, sp
from morphgpu.sp import factor
from morphgpu.sp import gpu as spgpu

VARIANTS = [
    ("full lists, run-time width", {"COMPACT": False, "FIXED_WIDTH_MAX": 0}),
    ("compacted, run-time width", {"COMPACT": True, "FIXED_WIDTH_MAX": 0}),
    ("full lists, fixed width", {"COMPACT": False, "FIXED_WIDTH_MAX": 8}),
    ("compacted, fixed width", {"COMPACT": True, "FIXED_WIDTH_MAX": 8}),
]


def engine_like(fg, state, settings: dict, lanes: int | None = None):
    saved = {name: getattr(spgpu, name) for name in settings}
    try:
        for name, value in settings.items():
            setattr(spgpu, name, value)
        e = spgpu.GPUEngine(fg, 0, 0.3)
    finally:
        for name, value in saved.items():
            setattr(spgpu, name, value)
    e.eta[...] = state.eta
    e.fixed[...] = state.fixed
    e.satisfied[...] = state.satisfied
    assert e.propagate()
    e._sync_codes()
    if lanes is not None:
        e.lanes = lanes
    return e


def profile(k: int, ratio: float, n: int, rounds: int, out: list) -> None:
    cp = backend.cupy_module()
    t0 = time.perf_counter()
    f = sp.random_ksat(n, k, ratio=ratio, seed=0)
    fg = factor.build(f, "gpu")
    base = spgpu.GPUEngine(fg, 0, 0.3)
    assert base.propagate()
    for _ in range(rounds):
        base.run_surveys(1e-3, 200)
        base.decimate(0.1, 0.0)
        assert base.propagate()
    base._sync_codes()
    slots = int(fg.var_edges.size)
    state = {"k": k, "ratio": ratio, "n_vars": n, "edges": slots,
             "fixed_share": float(cp.count_nonzero(base.fixed) / n),
             "open_clause_share": float(base.clause_list.size / fg.n_clauses),
             "open_edge_share": float(base.codes.size / slots),
             "setup_seconds": time.perf_counter() - t0}
    print(json.dumps(state), flush=True)
    rows = []
    for name, settings in VARIANTS:
        e = engine_like(fg, base, settings)
        ms = event_ms(lambda e=e: e._sweep(0))
        products = event_ms(lambda e=e: e._products())
        rows.append({"variant": name, "lanes": e.lanes, "sweep_ms": ms, "products_ms": products})
        print(json.dumps(rows[-1]), flush=True)
        del e
    for lanes in (1, 2, 4, 8, 16, 32):
        e = engine_like(fg, base, dict(VARIANTS[3][1]), lanes=lanes)
        ms = event_ms(lambda e=e: e._sweep(0))
        rows.append({"variant": VARIANTS[3][0], "lanes": lanes, "sweep_ms": ms,
                     "products_ms": event_ms(lambda e=e: e._products())})
        print(json.dumps(rows[-1]), flush=True)
        del e
    first = rows[0]["sweep_ms"]
    for row in rows:
        row["first_over_this"] = first / row["sweep_ms"]
    out.append({**state, "device": backend.device_name("gpu"), "rows": rows})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="4:9.9,6:43.4")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    out: list = []
    for item in args.rows.split(","):
        k, ratio = item.split(":")
        profile(int(k), float(ratio), args.n, args.rounds, out)
    for entry in out:
        print(f"# K={entry['k']} ratio {entry['ratio']} n={entry['n_vars']} on "
              f"{entry['device']}: {entry['fixed_share']:.2f} of the variables fixed, "
              f"{entry['open_edge_share']:.2f} of the edges open")
        for row in entry["rows"]:
            print(f"  {row['variant']:<40} lanes {row['lanes']:>2}  sweep "
                  f"{row['sweep_ms']:.3f} ms  products {row['products_ms']:.3f} ms  "
                  f"x first {row['first_over_this']:.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
