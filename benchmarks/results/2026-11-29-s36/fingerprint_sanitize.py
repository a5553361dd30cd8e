"""Session 36: graph_cache's one-launch check (kernels/fingerprint.cu fingerprint_check)
under compute-sanitizer: CuPy matrices of several sizes and formats, a 4-byte-offset
index view, repeated checks (the kernel resets its accumulators), an in-place write seen,
and bfs() on the prepared path. Prints "ok" per case."""
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import backend, graph_cache
from morphgpu.bfs import bfs
from morphgpu.csr import validate_graph


def main() -> None:
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as csp

    for n, density, fmt in ((50, 0.1, "csr"), (3000, 0.002, "csr"), (400, 0.02, "coo"),
                            (20000, 0.0005, "csc")):
        host = sp.random(n, n, density=density, random_state=n, format=fmt)
        if fmt == "coo":
            m = csp.coo_matrix((cp.asarray(host.data), (cp.asarray(host.row),
                                                        cp.asarray(host.col))), shape=host.shape)
        else:
            cls = csp.csr_matrix if fmt == "csr" else csp.csc_matrix
            m = cls((cp.asarray(host.data), cp.asarray(host.indices), cp.asarray(host.indptr)),
                    shape=host.shape)
        validate_graph(m)
        entry = graph_cache._entries[id(m)]
        expected = [graph_cache.fingerprint_host(a) for a in entry.arrays]
        for _ in range(4):
            pending = []
            validate_graph(m, pending=pending)
            assert graph_cache.confirm(pending)
            assert [int(x) for x in entry.probe.host] == expected
        print(f"{fmt} n={n} ok", flush=True)
    host = sp.random(500, 500, density=0.01, random_state=1, format="csr")
    base = cp.concatenate([cp.zeros(1, dtype=cp.int32), cp.asarray(host.indices)])
    m = csp.csr_matrix((cp.asarray(host.data), base[1:], cp.asarray(host.indptr)),
                       shape=host.shape)
    for source in range(6):
        bfs(m, source, variant="beamer", device="gpu")
    m.indices[:] = (m.indices + 1) % 500
    changed = host.copy()
    changed.indices = (changed.indices + 1) % 500
    r = bfs(m, 0, variant="beamer", device="gpu")
    d = csgraph.shortest_path(changed, unweighted=True, indices=0)
    assert np.array_equal(cp.asnumpy(r.distances), np.where(np.isinf(d), -1, d))
    print("offset view, prepared bfs, in-place write ok", flush=True)


if __name__ == "__main__":
    main()
