"""ECL-MST's deterministic weight rule, so our timings compare with its published ones.

ECL-MST (Fallin, Gonzalez, Seo, Burtscher, SC'23; ``source/ECL-MST_10.cu`` in
github.com/burtscher/ECL-MST) gives an unweighted input, for the CSR entry of row ``i``
whose neighbour is ``k``, the weight ``1 + ((i * k) % n)`` in C ``int`` arithmetic, ``n``
the vertex count, and negates it when negative. ``i * k`` wraps modulo 2^32 for large
ids and C's ``%`` keeps the dividend's sign, so both are reproduced here exactly. The
rule is symmetric in (i, k): both directions of an edge get one weight.
"""

from __future__ import annotations

import numpy as np

from ..csr import CSRGraph


def ecl_weights(graph: CSRGraph) -> CSRGraph:
    """``graph`` with ECL-MST's int32 weights (on the graph's side)."""
    xp = graph.xp
    n = max(graph.n_vertices, 1)
    rows = graph.edge_sources().astype(np.int64)
    product = (rows * graph.indices.astype(np.int64)).astype(np.int32)  # C int wraps
    weights = xp.abs(1 + xp.fmod(product, np.int32(n))).astype(np.int32)
    return graph.with_weights(weights)
