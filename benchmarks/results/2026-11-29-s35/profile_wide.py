"""Session 35: one beamer search of a wide graph for ncu (after three warm ones).
Usage: python3 profile_wide.py uniform|kron"""
import sys

sys.path.insert(0, "benchmarks")
import road_like  # noqa: E402

from morphgpu import backend, generators  # noqa: E402
from morphgpu.bfs import bfs  # noqa: E402

which = sys.argv[1]
g = (road_like.uniform_random(1 << 22, 16, device="gpu") if which == "uniform"
     else generators.kronecker(21, 16, device="gpu"))
cp = backend.cupy_module()
root = int(cp.argmax(g.degrees()).get()) if which == "kron" else 12345
for _ in range(4):
    r = bfs(g, root, variant="beamer", device="gpu", predecessors=True)
cp.cuda.runtime.deviceSynchronize()
print(which, "levels", r.n_levels if hasattr(r, "n_levels") else "?", flush=True)
