"""A small GPU refinement for compute-sanitizer (memcheck / racecheck): refine, then check."""

import sys

from morphgpu.dmr import api
from morphgpu.dmr.check import check_mesh

mesh = api.random_mesh(int(sys.argv[1]) if len(sys.argv) > 1 else 3000, seed=5)
out, stats = api.refine_with_stats(mesh, min_angle=30.0, device="gpu")
verdict = check_mesh(out, mesh, min_angle=30.0)
print("dmr sanitize:", stats["rounds"], "rounds,", stats["triangles_out"], "triangles,",
      "gpu_stuck", stats.get("gpu_stuck"), "stuck_retries", stats.get("stuck_retries"),
      "full_scans", stats.get("full_scans"), "missed", stats.get("missed_by_candidates"),
      "left stuck", stats.get("stuck"), "valid", verdict["ok"], verdict["problems"][:3])
sys.exit(0 if verdict["ok"] else 1)
