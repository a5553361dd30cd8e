"""Output size against Triangle's at each deferral depth, on the CPU twin.

    python3 scripts/dmr_defer_depth_sizes.py KIND TRIANGLES_IN [DEPTH ...]

KIND: uniform, clustered or holes (benchmarks/dmr.py's generators and seed); the depths
default to 2 and 3. One JSON line per depth: triangles in and out, Triangle's count
(``[r]pq30Q`` on the same input), rounds, refinements, abort ratio, the bad triangles
that gave way, the vectorised validity check. The CPU twin runs the kernel's rules
(cpu.gives_way is the kernel's ``defers``), so the counts stand for the GPU's; the
times are the NumPy path's (minutes at 1M triangles in), not the GPU's.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import dmr as bench  # noqa: E402
import triangle  # noqa: E402

from morphgpu.dmr import api  # noqa: E402
from morphgpu.dmr.cpu import refine_cpu  # noqa: E402
from morphgpu.dmr.mesh import to_triangle_dict  # noqa: E402


def main() -> None:
    kind, target = sys.argv[1], int(sys.argv[2])
    depths = [int(d) for d in sys.argv[3:]] or [2, 3]
    mesh = bench.make_input(kind, target)
    tri_in = {k: mesh[k] for k in ("vertices", "triangles", "segments", "segment_markers",
                                   "holes") if k in mesh}
    t0 = time.perf_counter()
    ref = triangle.triangulate(tri_in, bench.triangle_switches(mesh))
    triangle_s = time.perf_counter() - t0
    area_in = bench._area(ref)
    for depth in depths:
        ours, _ = api.prepare(mesh, "cpu")
        ours = api._morton_layout(ours)
        ours.extra["n_input"] = ours.n_vertices
        n_in = ours.n_triangles
        t0 = time.perf_counter()
        out, st = refine_cpu(ours, 30.0, None, defer_depth=depth)
        took = time.perf_counter() - t0
        ok, _ = bench.quick_check(to_triangle_dict(out), area_in, 30.0)
        print(json.dumps({
            "kind": kind, "target": target, "triangles_in": n_in, "depth": depth,
            "out": out.n_triangles, "triangle_out": len(ref["triangles"]),
            "out_over_triangle": round(out.n_triangles / len(ref["triangles"]), 4),
            "rounds": st["rounds"], "refinements": st["refinements"],
            "abort_ratio": round(st.get("abort_ratio", float("nan")), 3),
            "gave_way": st["gave_way"], "valid": ok, "cpu_s": round(took, 1),
            "triangle_s": round(triangle_s, 2)}), flush=True)


if __name__ == "__main__":
    main()
