"""A small GPU refinement for compute-sanitizer (memcheck / racecheck): refine, then check.

Two runs of the same mesh: every round after the first in the persistent tail
(refine_tail; the script fails if the tail ran no round), and every round from the host
(tail_threshold=0), so both the per-phase kernels and the persistent one are covered.
Then a PSLG with holes and no triangles, whose constrained triangulation the device builds
by inserting the free vertices (dmr/cdt_gpu.py's kernels); the script fails if that
insertion fell back to Triangle.
"""

import sys

from morphgpu import backend
from morphgpu.dmr import api
from morphgpu.dmr.check import check_mesh
from morphgpu.dmr.gpu import refine_gpu
from morphgpu.dmr.mesh import to_triangle_dict

mesh = api.random_mesh(int(sys.argv[1]) if len(sys.argv) > 1 else 3000, seed=5)
failed = False
for threshold in (2**40, 0):
    ours, source = api.prepare(mesh, "gpu")
    ours = api._morton_layout(ours)
    ours.extra["n_input"] = ours.n_vertices
    out, stats = refine_gpu(ours, 30.0, None, tail_threshold=threshold)
    result = {k: backend.to_host(v) for k, v in to_triangle_dict(out).items()}
    verdict = check_mesh(result, source, min_angle=30.0)
    print("dmr sanitize: tail_threshold", threshold,
          stats["rounds"], "rounds,", stats["tail_rounds"], "in", stats["tail_launches"],
          "tail launches,", out.n_triangles, "triangles,", "gpu_stuck", stats.get("gpu_stuck"),
          "stuck_retries", stats.get("stuck_retries"), "full_scans", stats.get("full_scans"),
          "missed", stats.get("missed_by_candidates"), "left stuck", stats.get("stuck"),
          "valid", verdict["ok"], verdict["problems"][:3], flush=True)
    failed |= not verdict["ok"]
    if threshold and stats["tail_rounds"] == 0:
        print("dmr sanitize: the tail ran no round", flush=True)
        failed = True
pslg = api.holes_pslg(3000, seed=5)
result, stats = api.refine_with_stats(pslg, device="gpu")
cdt = stats.get("cdt") or {}
verdict = check_mesh({k: backend.to_host(v) for k, v in result.items()}, pslg, min_angle=30.0)
print("dmr sanitize: PSLG with holes, cdt", cdt, "triangles", len(result["triangles"]),
      "valid", verdict["ok"], verdict["problems"][:3], flush=True)
failed |= not verdict["ok"] or cdt.get("engine") == "triangle"
sys.exit(1 if failed else 0)
