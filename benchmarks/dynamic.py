"""Dynamic graphs: batch updates against rebuilding the CSR, and BFS on the paged layout
against BFS on the static CSR of the same edges, in one process.

Graphs: Kronecker scale 21 edge factor 16 (undirected), a road network from the shared
data (COL; a Delaunay graph of random points stands in without it) and a uniform random
graph of 2^21 vertices and 16 edges per vertex. Per graph:

- updates: batches of 10^3 .. 10^7 edges (``--batches``), insertions of new edges (drawn
  from a second graph of the same kind) and deletions of present ones, each timed on the
  DynamicGraph and against a rebuild of the CSR from scratch with CuPy (sort + unique of
  every edge key, then the row offsets), the way a user without a dynamic graph would
  apply the batch. Rates are in undirected edges per second; each operation is undone
  (untimed) before the next, so every row starts from the same graph.
- BFS: 64 random roots of degree > 0; TEPS in Graph500's count (undirected edges, the
  graph's own, in the reached component, over the time of the whole search call), the
  harmonic mean over roots, for our static BFS (``bfs`` on the CSRGraph: auto) and on the
  DynamicGraph (auto: the direction-optimising search on the paged layout); the seed's
  variants (frontier classes immediate / deferred, dynamic parallelism) on 8 roots.
- incremental: after a 1,000-edge insertion batch, the repair from the previous result
  (``bfs(..., previous=)``) against a fresh search, over 8 roots.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import harness
import numpy as np

from morphgpu import backend, generators, graph_io, testing
from morphgpu.bfs import bfs
from morphgpu.csr import CSRGraph
from morphgpu.dynamic_graph import DynamicGraph

BATCHES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)
SEED = 20261124


def _graphs(args: Any) -> list[tuple[str, Any, Any]]:
    """(label, undirected CSRGraph on the GPU, thunk for new edges (src, dst) of that kind)."""
    scale = 16 if args.quick else 21
    out = []
    kron = generators.kronecker(scale, 16, seed=1, device="gpu")

    other = generators.kronecker(scale, 16, seed=2, device="gpu", keep_duplicates=True)
    other_src = other.edge_sources()

    def kron_edges(k: int, seed: int) -> tuple[Any, Any]:
        pick = _sample(other.n_edges, k, seed)
        return other_src[pick].astype(np.int64), other.indices[pick].astype(np.int64)

    out.append((f"kronecker {scale} ef16", kron, kron_edges))
    road_file = testing.shared_path("data", "roads", "COL.gr.xz")
    if road_file is not None and not args.quick:
        road = graph_io.read_graph(road_file).to("gpu")
        label = "road COL"
    else:
        road = generators.delaunay_graph(20_000 if args.quick else 1_000_000, seed=2,
                                         device="gpu")
        label = f"delaunay {road.n_vertices}"
    out.append((label, road, lambda k, seed, n=road.n_vertices: _uniform(n, k, seed)))
    n_uniform = 1 << (16 if args.quick else 21)
    uniform = generators.gnm(n_uniform, 8 * n_uniform, seed=3, device="gpu")
    out.append((f"uniform 2^{n_uniform.bit_length() - 1} deg16", uniform,
                lambda k, seed, n=n_uniform: _uniform(n, k, seed)))
    return out


def _sample(n: int, k: int, seed: int) -> Any:
    cp = backend.cupy_module()
    return cp.asarray(np.random.default_rng(seed).integers(0, n, k))


def _uniform(n: int, k: int, seed: int) -> tuple[Any, Any]:
    cp = backend.cupy_module()
    rng = np.random.default_rng(seed)
    return cp.asarray(rng.integers(0, n, k)), cp.asarray(rng.integers(0, n, k))


def _keys(src: Any, dst: Any, n: int) -> Any:
    """Both directions of each undirected edge as sorted-able int64 keys."""
    cp = backend.cupy_module()
    return cp.concatenate([src * n + dst, dst * n + src])


def rebuild_insert(keys: Any, new_keys: Any, n: int) -> CSRGraph:
    """The CSR of the union, from scratch: sort + unique of every key, then the offsets."""
    cp = backend.cupy_module()
    merged = cp.unique(cp.concatenate([keys, new_keys]))
    return _from_sorted(merged, n)


def rebuild_delete(keys: Any, gone_keys: Any, n: int) -> CSRGraph:
    cp = backend.cupy_module()
    gone = cp.unique(gone_keys)
    at = cp.minimum(cp.searchsorted(gone, keys), gone.size - 1)
    return _from_sorted(cp.sort(keys[gone[at] != keys]), n)


def _from_sorted(keys: Any, n: int) -> CSRGraph:
    cp = backend.cupy_module()
    rows = keys // n
    indptr = cp.searchsorted(rows, cp.arange(n + 1, dtype=cp.int64))
    return CSRGraph(indptr, (keys - rows * n).astype(cp.int32), None, n, False)


def _once(fn: Any) -> float:
    """Seconds of one call (CUDA events)."""
    return harness.gpu_seconds(fn, repeat=1, warmup=0)


def _teps(g: CSRGraph, dist: Any, seconds: float) -> float:
    """Graph500 TEPS: undirected edges (each once) with an end in the reached component."""
    cp = backend.cupy_module()
    edges = int((g.degrees() * (cp.asarray(dist) >= 0)).sum()) // 2
    return edges / seconds


def _harmonic(values: list[float]) -> float:
    return len(values) / sum(1.0 / v for v in values) if values else 0.0


def run(args: Any, record: harness.Record) -> None:
    cp = backend.cupy_module()
    batches = [b for b in BATCHES if not args.quick or b <= 100_000]
    roots_n = 8 if args.quick else 64
    record.note("rates in undirected edges per second; TEPS in Graph500's count "
                "(undirected edges in the reached component, harmonic mean over roots)")
    for label, g, new_edges in _graphs(args):
        _one_graph(label, g, new_edges, batches, roots_n, record)
        cp.get_default_memory_pool().free_all_blocks()


def _one_graph(label: str, g: CSRGraph, new_edges: Any, batches: list[int], roots_n: int,
               record: harness.Record) -> None:
    cp = backend.cupy_module()
    n = g.n_vertices
    t0 = time.perf_counter()
    dg = DynamicGraph.from_csr(g, device="gpu")
    backend.synchronize()
    load_s = time.perf_counter() - t0
    m = dg.n_edges
    record.row(graph=label, kind="load", vertices=n, edges=m, seconds=load_s,
               memory=dg.memory())
    src_all, dst_all, _ = dg.entries()
    canon = src_all < dst_all
    edge_src, edge_dst = src_all[canon], dst_all[canon]
    keys = g.edge_sources().astype(cp.int64) * n + g.indices
    for b in batches:
        if b > 2 * m:
            continue
        # Insertions: edges of the same kind (some may already be present).
        u, v = new_edges(b, SEED + b)
        inserted: dict[str, Any] = {}

        def insert(u=u, v=v, inserted=inserted) -> None:
            inserted["r"] = dg.insert_edges(u, v)

        def undo_insert(u=u, v=v, inserted=inserted) -> None:
            # Delete exactly the edges that were new (present ones stay).
            present = inserted["before"]
            dg.delete_edges(u[~present], v[~present])

        inserted["before"] = _present(dg, u, v)
        repeat = 5 if b <= 1_000_000 else 2
        t_ins = harness.gpu_seconds(insert, repeat=repeat, warmup=1, after=undo_insert)
        new_keys = _keys(u, v, n)
        t_reb = harness.gpu_seconds(lambda nk=new_keys: rebuild_insert(keys, nk, n),
                                    repeat=repeat, warmup=1)
        record.row(graph=label, kind="insert", batch=b, applied=inserted["r"].applied,
                   seconds=t_ins, edges_per_s=b / t_ins, rebuild_seconds=t_reb,
                   x_rebuild=t_reb / t_ins, batch_fraction=b / m)
        # Deletions: present edges.
        pick = _sample(edge_src.size, min(b, int(edge_src.size)), SEED - b)
        du, dv = edge_src[pick], edge_dst[pick]
        t_del = harness.gpu_seconds(lambda du=du, dv=dv: dg.delete_edges(du, dv),
                                    repeat=repeat, warmup=1,
                                    after=lambda du=du, dv=dv: dg.insert_edges(du, dv))
        gone_keys = _keys(du, dv, n)
        t_reb = harness.gpu_seconds(lambda gk=gone_keys: rebuild_delete(keys, gk, n),
                                    repeat=repeat, warmup=1)
        record.row(graph=label, kind="delete", batch=int(du.size), seconds=t_del,
                   edges_per_s=du.size / t_del, rebuild_seconds=t_reb,
                   x_rebuild=t_reb / t_del, batch_fraction=du.size / m)
    assert dg.n_edges == m, "the undo steps left the graph as it was"
    static = dg.to_csr()  # the same edges as a static CSR
    degrees = static.degrees().get()
    rng = np.random.default_rng(SEED)
    roots = rng.choice(np.flatnonzero(degrees > 0), roots_n, replace=False)
    for name, graph in (("static CSR (auto)", static), ("dynamic (auto)", dg)):
        bfs(graph, int(roots[0]))  # warm: compile, workspace, relabelled copy
        teps, secs, variant = [], [], ""
        for r in roots:
            out: dict[str, Any] = {}
            s = _once(lambda r=r, out=out, graph=graph: out.setdefault(
                "r", bfs(graph, int(r))))
            teps.append(_teps(static, out["r"].distances, s))
            secs.append(s)
            variant = out["r"].variant
        record.row(graph=label, kind="bfs", search=name, variant=variant,
                   roots=len(roots), gteps=_harmonic(teps) / 1e9,
                   median_ms=1e3 * statistics.median(secs))
    for variant in ("frontier-classes", "frontier-classes-deferred",
                    "dynamic-parallelism"):
        try:
            bfs(dg, int(roots[0]), variant=variant)
            teps, secs = [], []
            for r in roots[:8]:
                out = {}
                s = _once(lambda r=r, out=out, variant=variant: out.setdefault(
                    "r", bfs(dg, int(r), variant=variant)))
                teps.append(_teps(static, out["r"].distances, s))
                secs.append(s)
            record.row(graph=label, kind="bfs", search=f"dynamic {variant}",
                       variant=variant, roots=len(secs), gteps=_harmonic(teps) / 1e9,
                       median_ms=1e3 * statistics.median(secs))
        except Exception as exc:  # one variant failing must not hide the others
            record.note(f"{label}: {variant} failed: {type(exc).__name__}: {exc}")
    # Incremental repair after 1k insertions against a fresh search.
    reps, fresh, changed, repaired = [], [], [], 0
    for i, r in enumerate(roots[:8]):
        before = bfs(dg, int(r))
        u, v = new_edges(1000, SEED + 7 * i)
        dg.insert_edges(u, v)
        out = {}
        reps.append(_once(lambda r=r, out=out, before=before: out.setdefault(
            "r", bfs(dg, int(r), previous=before))))
        repaired += out["r"].incremental
        ref = {}
        fresh.append(_once(lambda r=r, ref=ref: ref.setdefault(
            "r", bfs(dg, int(r)))))
        if not bool(cp.array_equal(out["r"].distances, ref["r"].distances)):
            record.note(f"{label}: incremental distances differ from fresh at root {r}")
        changed.append(int((out["r"].distances != before.distances).sum()))
    _profile_update_and_search(label, dg, new_edges, int(roots[0]), record)
    record.row(graph=label, kind="incremental", batch=1000, roots=len(reps),
               repaired=repaired, changed_median=int(statistics.median(changed)),
               repair_ms=1e3 * statistics.median(reps),
               fresh_ms=1e3 * statistics.median(fresh),
               x_fresh=statistics.median(fresh) / statistics.median(reps))


def _profile_update_and_search(label: str, dg: DynamicGraph, new_edges: Any, root: int,
                               record: harness.Record) -> None:
    """Where the time of a search after a 1k insertion goes: each step of bfs() on its own
    (host clock around a synchronised step, median of 5)."""
    from morphgpu.bfs import layouts  # noqa: PLC0415

    steps: dict[str, list[float]] = {}

    def timed(name: str, fn: Any) -> Any:
        backend.synchronize()
        t0 = time.perf_counter()
        out = fn()
        backend.synchronize()
        steps.setdefault(name, []).append(time.perf_counter() - t0)
        return out

    for i in range(5):
        before = bfs(dg, root)
        u, v = new_edges(1000, SEED + 31 * i)
        timed("insert 1k", lambda u=u, v=v: dg.insert_edges(u, v))
        dev = timed("view", lambda: layouts.view(dg))
        timed("statistics", lambda dev=dev: dev._stats)
        new = timed("journal", lambda before=before: dg.inserted_since(before.graph_version))
        timed("repair kernel", lambda dev=dev, before=before, new=new: layouts.repair(
            dev, before.distances, None, new))
        timed("search kernel", lambda dev=dev: layouts.run(dev, root, "beamer", False))
        timed("bfs(previous=)", lambda before=before: bfs(dg, root, previous=before))
        timed("bfs() fresh", lambda: bfs(dg, root))
    record.row(graph=label, kind="profile", **{k.replace(" ", "_"): 1e3 * statistics.median(v)
                                               for k, v in steps.items()})


def _present(dg: DynamicGraph, u: Any, v: Any) -> Any:
    """A mask of the batch's edges already in the graph (before an insertion)."""
    cp = backend.cupy_module()
    n = dg.n_vertices
    src, dst, _ = dg.entries()
    keys = cp.sort(src * n + dst)
    want = cp.minimum(u, v) * n + cp.maximum(u, v)
    at = cp.minimum(cp.searchsorted(keys, want), keys.size - 1)
    return keys[at] == want


def add_args(parser: Any) -> None:
    del parser


if __name__ == "__main__":
    harness.main("dynamic", run, add_args)
