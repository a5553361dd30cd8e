"""Small BFS runs of every GPU variant, for compute-sanitizer (memcheck / racecheck).

    compute-sanitizer --tool memcheck python3 scripts/bfs_sanitize.py

Each result is checked with Graph500's checks, so a run that the sanitizer passes but
computes a wrong answer still fails (exit code 1).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import generators  # noqa: E402
from morphgpu.bfs import bfs, graph500_check, variants  # noqa: E402

GPU_NAMES = [v for v in variants.names() if v not in ("top-down",)]


def main() -> int:
    graphs = {
        "grid 40x30": generators.grid2d(40, 30, device="gpu"),
        "kron 9": generators.kronecker(9, 16, device="gpu"),
        "rmat 9 directed": generators.rmat(9, 8, device="gpu", directed=True),
    }
    failures = 0
    for label, g in graphs.items():
        host = g.to("cpu")
        source = int(np.argmax(np.diff(host.indptr)))
        for name in GPU_NAMES:
            r = bfs(g, source, variant=name, device="gpu", predecessors=True)
            try:
                graph500_check(host.indptr, host.indices, source, r.distances.get(),
                               r.predecessors.get())
                status = "ok"
            except AssertionError as exc:
                failures += 1
                status = f"INVALID: {exc}"
            print(f"{label:<16} {name:<22} levels={r.n_levels:<4} {status}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
