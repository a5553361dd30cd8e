"""Small GPU driver for compute-sanitizer: every SP kernel on formulas of a few hundred
variables (surveys, decimation, unit propagation, both local-search stages), and the
sequential tail kernel (ls_tail) on its own: zero parallel rounds, wide clauses (one lane
per candidate group of 4) and a formula with every variable frozen (its stuck exit)."""

from __future__ import annotations

import sys

from morphgpu import sp
from morphgpu.sp.cnf import CNF

ok = True
# K=10: the clause kernel with a run-time width (sp/gpu.py FIXED_WIDTH_MAX is 8).
for seed, (n, k, ratio) in enumerate([(150, 3, 4.0), (30, 3, 6.0), (80, 10, 40.0)]):
    f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
    r = sp.solve(f, device="gpu", seed=seed, fix_fraction=0.1, local_search_rounds=200)
    print(n, k, ratio, r.status, r.reason, r.stats["decimation_rounds"], flush=True)
    ok &= r.status != "SAT" or sp.verify(f, r.assignment)
r = sp.solve(CNF.from_clauses([[1, -1], [2, 2], [-3], [3, 4], [5, -6, 7]], n_vars=8), device="gpu")
ok &= r.status == "SAT"

from morphgpu.sp import factor  # noqa: E402
from morphgpu.sp.gpu import GPUEngine  # noqa: E402

for n, k, ratio, seed in [(200, 3, 4.0, 1), (60, 5, 15.0, 2), (40, 10, 100.0, 3)]:
    f = sp.random_ksat(n, k, ratio=ratio, seed=seed)
    engine = GPUEngine(factor.build(f, "gpu"), seed, 0.3)
    solved = engine.local_search(0, freeze_fixed=False, init=True, max_flips=5000)
    good = sp.verify(f, engine.assignment())
    print("tail", n, k, ratio, solved, good, engine.local_search_flips_run, flush=True)
    ok &= solved == good
# ls_rounds' solo block (block_tail): from the first round, and handing back to the grid.
for block_tail in (1 << 30, 1):
    f = sp.random_ksat(200, 3, ratio=4.0, seed=5)
    engine = GPUEngine(factor.build(f, "gpu"), 5, 0.3)
    engine.block_tail = block_tail
    solved = engine.local_search(3000, freeze_fixed=False, init=True, max_flips=0)
    good = sp.verify(f, engine.assignment())
    print("solo", block_tail, solved, good, engine.local_search_launches, flush=True)
    ok &= solved == good
stuck = GPUEngine(factor.build(CNF.from_clauses([[1, 2], [-1, 3], [2, 3]], n_vars=3), "gpu"), 0)
stuck.fixed[:] = stuck.cp.asarray([1, -1, -1], dtype=stuck.cp.int32)
ok &= not stuck.local_search(0, freeze_fixed=True, init=True, max_flips=100)
print("sanitize driver", "OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
