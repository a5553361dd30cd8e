"""Small GPU driver for compute-sanitizer: every SP kernel on formulas of a few hundred
variables (surveys, decimation, unit propagation, both local-search stages)."""

from __future__ import annotations

import sys

from morphgpu import sp
from morphgpu.sp.cnf import CNF

ok = True
for seed, (n, k, ratio) in enumerate([(150, 3, 4.0), (30, 3, 6.0)]):
    f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
    r = sp.solve(f, device="gpu", seed=seed, fix_fraction=0.1, local_search_rounds=200)
    print(n, k, ratio, r.status, r.reason, r.stats["decimation_rounds"], flush=True)
    ok &= r.status != "SAT" or sp.verify(f, r.assignment)
r = sp.solve(CNF.from_clauses([[1, -1], [2, 2], [-3], [3, 4], [5, -6, 7]], n_vars=8), device="gpu")
ok &= r.status == "SAT"
print("sanitize driver", "OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
