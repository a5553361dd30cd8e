"""Session 30 probe: tiled on Delaunay 1M, horizon 12 -- ms per search and the kernel's
counters (per visit: load, local levels, write-back cycles). With --lineinfo the kernels
are compiled with -lineinfo (for ncu's source page). Not a benchmark: a record of a run."""
import sys
import time

import numpy as np

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")
from morphgpu import kernels  # noqa: E402

if "--lineinfo" in sys.argv:
    _orig = kernels.file_options
    kernels.file_options = lambda p: (*_orig(p), "-lineinfo")

import cupy as cp  # noqa: E402
import road_like  # noqa: E402

from morphgpu.bfs.gpu import tiled  # noqa: E402
from morphgpu.bfs.gpu.workspace import workspace  # noqa: E402

n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 1 << 20
g = road_like.delaunay(n, device="gpu")
ws = workspace(g)
rng = np.random.default_rng(1)
roots = rng.integers(0, n, 8)
tiled.run_tiled(ws, int(roots[0]), False, horizon=12)
cp.cuda.runtime.deviceSynchronize()
times = []
for r in roots:
    t = time.perf_counter()
    tiled.run_tiled(ws, int(r), False, horizon=12)
    cp.cuda.runtime.deviceSynchronize()
    times.append(time.perf_counter() - t)
st = tiled.last_stats(tiled.searched_workspace(ws))
print("n", n, "ms", [round(x * 1e3, 3) for x in times])
print("stats", st)
clk = 1.98e3  # cycles per us at 1980 MHz
if st:
    t = max(st["tiles"], 1)
    print("per visit us: load %.2f levels %.2f (%.1f levels, %.3f us each) write %.2f; rounds %d,"  # noqa: UP031
          " tiles/round %.1f, barrier us/round %.2f, loop us %.1f" % (
              st["load_cycles"] / t / clk, st["level_cycles"] / t / clk, st["levels"] / t,
              st["level_cycles"] / max(st["levels"], 1) / clk, st["write_cycles"] / t / clk,
              st["rounds"], st["tiles"] / max(st["rounds"], 1),
              st["barrier_cycles"] / max(st["rounds"], 1) / clk, st["loop_cycles"] / clk))
