"""Small Borůvka runs on the GPU for compute-sanitizer (memcheck / racecheck / synccheck).

    compute-sanitizer --tool memcheck python3 scripts/mst_sanitize.py

Covers the symmetric claim's entry count (diagonal_sides), the three candidate modes
(declared symmetric, general, and symmetry found by the kernel: checked, then read from the
memo, then the door's matrix writer), several passes of increasing key (and the live sample
that may merge them), rows long enough for the chunked huge-row sweep, the three weight-key
kinds and every grid-barrier mode; each forest is compared edge for edge with the NumPy
path, so a run the sanitizer passes but that computes a wrong forest still fails (exit code 1).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import barrier, generators  # noqa: E402
from morphgpu.csr import CSRGraph  # noqa: E402
from morphgpu.mst import boruvka  # noqa: E402
from morphgpu.mst.ecl_weights import ecl_weights  # noqa: E402
from morphgpu.mst.gpu import BoruvkaGPU, diagonal_sides  # noqa: E402


def cases() -> dict[str, CSRGraph]:
    rng = np.random.default_rng(0)
    n = 700
    u, v = rng.integers(0, n, 1500), rng.integers(0, n, 1500)
    general = CSRGraph.from_edges(u, v, rng.integers(-20, 20, 1500), n_vertices=n)
    hub_u = np.concatenate([np.zeros(2999, dtype=np.int64), rng.integers(0, 3000, 12000)])
    hub_v = np.concatenate([np.arange(1, 3000), rng.integers(0, 3000, 12000)])
    hub = generators.random_weights(
        CSRGraph.from_edges(
            hub_u, hub_v, n_vertices=3000, symmetrize=True, drop_self_loops=True,
            merge_duplicates="min",
        ),
        "integer", low=1, high=1000,
    )
    uniform = generators.random_weights(generators.gnm(900, 2000, device="cpu"))
    return {
        "grid 30x20 ecl int32": ecl_weights(generators.grid2d(30, 20, device="cpu")),
        "kron 9 ecl (several passes)": ecl_weights(generators.kronecker(9, 16, device="cpu")),
        "gnm float32": uniform.with_weights(uniform.weights.astype(np.float32)),
        "gnm float64 ranks": uniform,
        "directed multigraph int64": general,
        "hub row 2999 + random (huge rows)": hub,
    }


def main() -> int:
    failures = 0
    for label, graph in cases().items():
        expected = boruvka(graph, device="cpu")
        gpu_graph = graph.to("gpu")
        # The symmetric claim's pass (kernels/diagonal_sides.cu), against NumPy's counts.
        rows = np.repeat(np.arange(graph.n_vertices), np.diff(graph.indptr))
        want_sides = (int(np.count_nonzero(graph.indices > rows)),
                      int(np.count_nonzero(graph.indices < rows)))
        sides = diagonal_sides(graph.n_vertices, gpu_graph.indptr, gpu_graph.indices)
        failures += sides != want_sides
        print(f"{label:28s} diagonal sides {sides} {'ok' if sides == want_sides else 'MISMATCH'}")
        for mode in barrier.BARRIER_MODES:
            runner = BoruvkaGPU(
                graph.n_vertices, gpu_graph.indptr, gpu_graph.indices, gpu_graph.weights,
                symmetric=not graph.directed, barrier_mode=mode,
            )
            runner.launch()
            positions, rounds = runner.collect()
            same = np.array_equal(positions.get(), expected.edge_ids)
            same &= rounds == expected.n_rounds
            failures += not same
            print(f"{label:28s} {mode:11s} rounds {rounds:2d} {'ok' if same else 'MISMATCH'}")
        # The door's configuration: symmetry found (a check, then the memo), the matrix.
        runner = BoruvkaGPU(
            graph.n_vertices, gpu_graph.indptr, gpu_graph.indices, gpu_graph.weights,
            symmetric=False, find_symmetry=True,
        )
        keep = expected.weights != 0
        n = graph.n_vertices
        want = sp.csr_matrix((expected.weights[keep].astype(np.float64),
                              (expected.src[keep], expected.dst[keep])), shape=(n, n))
        for launch in ("checked", "remembered"):
            runner.launch(write_matrix=True)
            data, indices, indptr = (a.get() for a in runner.matrix())
            same = (sp.csr_matrix((data, indices, indptr), shape=(n, n)) != want).nnz == 0
            failures += not same
            print(f"{label:28s} door, {launch:10s} {'ok' if same else 'MISMATCH'}")
    print("mst sanitize:", "FAILED" if failures else "all forests identical to the CPU's")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
