"""Session 37: the fingerprint check run inside direction.cu (mg::fingerprint_run through
graph_cache.check_inside) and the one-launch check (kernels/fingerprint.cu, now over the
same header) under compute-sanitizer: prepared bfs() calls on aligned CuPy matrices of
several sizes (the kernel's check each call), distances against SciPy, an in-place write
caught, and the standalone check's fingerprints against fingerprint_host. Prints "ok" per
case."""
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import backend, graph_cache
from morphgpu.bfs import bfs
from morphgpu.csr import validate_graph


def expected(host, source):
    d = csgraph.shortest_path(host, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d)


def main() -> None:
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as csp

    for n, density in ((60, 0.08), (3000, 0.002), (20000, 0.0004)):
        host = sp.random(n, n, density=density, random_state=n, format="csr")
        host = (host + host.T).tocsr()
        m = csp.csr_matrix((cp.asarray(host.data), cp.asarray(host.indices),
                            cp.asarray(host.indptr)), shape=host.shape)
        for variant in ("beamer", "bottom-up"):
            for source in range(4):
                r = bfs(m, source, variant=variant, device="gpu")
                assert np.array_equal(cp.asnumpy(r.distances), expected(host, source))
        probe = graph_cache._entries[id(m)].probe
        assert probe.seq > 0 and not probe.copied
        assert int(probe.published[-1]) == 2 * probe.seq  # the last verdict: unchanged
        entry = graph_cache._entries[id(m)]
        pending = []
        validate_graph(m, pending=pending)  # the standalone check, beside
        assert graph_cache.confirm(pending)
        assert [int(x) for x in probe.host] == [graph_cache.fingerprint_host(a)
                                               for a in entry.arrays]
        m.indices[0] = (int(m.indices[0]) + 1) % n
        changed = host.copy()
        changed.indices[0] = (changed.indices[0] + 1) % n
        r = bfs(m, 1, variant="beamer", device="gpu")
        assert np.array_equal(cp.asnumpy(r.distances), expected(changed, 1))
        print(f"n={n} prepared bfs with the check inside, write caught ok", flush=True)


if __name__ == "__main__":
    main()
