"""One-off GPU experiment: damping and fix fraction at K=3, ratio 4.2, n=1M (prints a table)."""

from __future__ import annotations

import sys
import time

from morphgpu import backend, sp

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
f = sp.random_ksat(n, 3, ratio=4.2, seed=0)
sp.solve(sp.random_ksat(2000, 3, ratio=4.0, seed=0), device="gpu")
for damping, frac in [(0.5, 0.01), (0.0, 0.01), (0.3, 0.02)]:
    t0 = time.perf_counter()
    r = sp.solve(f, device="gpu", seed=0, damping=damping, fix_fraction=frac)
    backend.synchronize()
    s = {k: round(v, 3) for k, v in r.stats["seconds"].items()}
    took = time.perf_counter() - t0
    print(f"damping={damping} frac={frac} {r.status} [{r.reason}] total={took:.2f}s "
          f"it={r.stats['sp_iterations']} rounds={r.stats['decimation_rounds']} "
          f"free={r.stats.get('free_after_sp')} ls={r.stats['local_search']} {s}", flush=True)
