"""Small partitioned BFS runs on one GPU, for compute-sanitizer (memcheck / racecheck).

    compute-sanitizer --tool memcheck python3 scripts/bfs_partitioned_sanitize.py [--quick]

``--quick``: the Kronecker graph in 3 parts only (every kernel still runs), for racecheck,
which is slow.

Every kernel of bfs/kernels/partitioned.cu runs: in-process parts (the exchange by
reference, so no NCCL under the sanitizer), top-down levels and bottom-up levels forced
by the direction rule; then bfs/kernels/part_build.cu builds the Kronecker graph's part on
GPU 0 from chunks drawn there (from_edge_chunks_on_gpus) and that part is searched. Each
result passes Graph500's checks, else the exit code is 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import backend, generators  # noqa: E402
from morphgpu.bfs import exchange, graph500_check  # noqa: E402
from morphgpu.bfs import partitioned as pt  # noqa: E402

# (alpha, beta): Beamer's own; bottom-up from the first level on; back and forth.
RULES = {"beamer": (pt.ALPHA, pt.BETA), "bottom-up": (np.inf, np.inf),
         "alternating": (np.inf, 0.0), "top-down": None}


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    graphs = {"kron 9": generators.kronecker(9, 16, device="cpu")}
    if not quick:
        graphs["grid 40x30"] = generators.grid2d(40, 30, device="cpu")
    failures = 0
    for label, g in graphs.items():
        source = int(np.argmax(np.diff(g.indptr)))
        for parts in (3,) if quick else (1, 3):
            ex = exchange.InProcessExchange(parts)
            engines = pt.engines_for(pt.PartitionedGraph.from_csr(g, parts), ex.local_parts,
                                     "gpu", True)
            for rule, constants in RULES.items():
                direction = None if constants is None else pt.Direction(g.n_vertices,
                                                                        *constants)
                out = pt.search(engines, ex, source, True, direction)
                try:
                    graph500_check(g.indptr, g.indices, source,
                                   backend.to_host(out.distances),
                                   backend.to_host(out.predecessors))
                    status = "ok"
                except AssertionError as exc:
                    failures += 1
                    status = f"INVALID: {exc}"
                print(f"{label:<12} parts={parts} {rule:<12} {status}", flush=True)
    failures += built_on_gpu()
    return 1 if failures else 0


def built_on_gpu() -> int:
    """part_build.cu's two kernels (chunks of 1000 edges, so many launches), then a search
    over the part they built; 1 if its result fails Graph500's checks."""
    g = generators.kronecker(9, 16, device="cpu")
    chunks = generators.kronecker_edge_chunks(9, 16, chunk_edges=1000, device="gpu")
    pg = pt.PartitionedGraph.from_edge_chunks_on_gpus(chunks, g.n_vertices, [0],
                                                      symmetrize=True)
    ex = exchange.InProcessExchange(1)
    engines = pt.engines_for(pg, ex.local_parts, "gpu", True)
    source = int(np.argmax(np.diff(g.indptr)))
    out = pt.search(engines, ex, source, True, pt.Direction(g.n_vertices))
    try:
        graph500_check(g.indptr, g.indices, source, backend.to_host(out.distances),
                       backend.to_host(out.predecessors))
    except AssertionError as exc:
        print(f"built on GPU 0: INVALID: {exc}", flush=True)
        return 1
    print("built on GPU 0: ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
