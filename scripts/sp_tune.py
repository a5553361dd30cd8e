"""One-off GPU experiment: damping and fix fraction at K=3, ratio 4.2, n=1M, then K=4 and
K=5 at the paper's ratios with the defaults (prints one line per run)."""

from __future__ import annotations

import sys
import time

from morphgpu import backend, sp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
sp.solve(sp.random_ksat(2000, 3, ratio=4.0, seed=0), device="gpu")
runs = [(3, 4.2, 0.5, 0.01), (3, 4.2, 0.0, 0.01), (3, 4.2, 0.3, 0.02), (4, 9.9, 0.5, 0.01),
        (5, 21.1, 0.5, 0.01)]
formulas = {}
for k, ratio, damping, frac in runs:
    if (k, ratio) not in formulas:
        formulas = {(k, ratio): sp.random_ksat(n, k, ratio=ratio, seed=0)}
    f = formulas[(k, ratio)]
    t0 = time.perf_counter()
    r = sp.solve(f, device="gpu", seed=0, damping=damping, fix_fraction=frac)
    backend.synchronize()
    took = time.perf_counter() - t0
    s = {key: round(v, 3) for key, v in r.stats["seconds"].items()}
    print(f"k={k} r={ratio} damping={damping} frac={frac} {r.status} [{r.reason}] "
          f"total={took:.2f}s it={r.stats['sp_iterations']} "
          f"rounds={r.stats['decimation_rounds']} free={r.stats.get('free_after_sp')} "
          f"ls={r.stats['local_search']} {s}", flush=True)
