#!/usr/bin/env python3
"""Tiny runs of every infrastructure kernel, for compute-sanitizer:

    compute-sanitizer --tool memcheck  python3 scripts/infra_sanitize.py
    compute-sanitizer --tool racecheck python3 scripts/infra_sanitize.py

Grids are a few blocks so the instrumented runs stay short; persistent kernels get a short
barrier timeout so that a sanitizer that serialises blocks ends in an error, not a hang.
Each case checks its own result; the exit code is non-zero if any check fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import (  # noqa: E402
    alloc,
    barrier,
    conflict,
    generators,
    graph_cache,
    kernels,
    reorder,
    worklist,
)
from morphgpu.csr import CSRGraph  # noqa: E402

TIMEOUT = {"MG_BARRIER_TIMEOUT_MS": 10_000}
failures: list[str] = []


def case(name: str, ok: bool) -> None:
    print(f"{'ok  ' if ok else 'FAIL'} {name}", flush=True)
    if not ok:
        failures.append(name)


def barrier_cases(cp) -> None:
    for mode in barrier.BARRIER_MODES:
        grid = barrier.persistent_kernel("kernels/barrier_probe.cu", "barrier_rounds",
                                         mode=mode, block=64, max_blocks=4, defines=TIMEOUT)
        block_round = cp.zeros(grid.grid, dtype=cp.uint32)
        payload = cp.zeros(grid.grid * 8, dtype=cp.uint32)
        violations = cp.zeros(1, dtype=cp.uint64)
        grid.launch(np.int32(20), block_round, payload, violations)
        case(f"barrier_rounds {mode}", not grid.aborted() and int(violations[0]) == 0)


def conflict_cases(cp) -> None:
    rng = np.random.default_rng(0)
    hoods = [rng.choice(50, size=rng.integers(0, 5)) for _ in range(200)]
    offsets = np.concatenate([[0], np.cumsum([h.size for h in hoods])])
    elements = np.concatenate(hoods).astype(np.int64)
    on_gpu = conflict.claim(cp.asarray(offsets), cp.asarray(elements), round=1).get()
    case("claim matches NumPy", np.array_equal(on_gpu, conflict.claim(offsets, elements, round=1)))
    # serve_all's persistent kernel, on a small grid through the launcher's cap.
    grid = barrier.persistent_kernel(conflict.KERNEL_FILE, "claim_until_served", block=64,
                                     max_blocks=3, defines=TIMEOUT)
    served = cp.full(len(hoods), -1, dtype=cp.int32)
    unserved = cp.zeros(3, dtype=cp.uint64)
    rounds = cp.zeros(1, dtype=cp.int32)
    grid.launch(cp.asarray(offsets), cp.asarray(elements), np.int64(len(hoods)), np.int32(500),
                cp.zeros(50, dtype=cp.uint64), served, unserved, rounds)
    case("claim_until_served", not grid.aborted() and bool((served.get() >= 0).all()))


def worklist_cases(cp) -> None:
    path, block = "kernels/worklist.cu", {"WL_BLOCK": 64}
    tail = cp.zeros(1, dtype=cp.uint64)
    queue = cp.full(3 * 4 * 64 * 4, -1, dtype=cp.int64)
    kernels.get_kernel(path, "reserve_push", defines=block)(
        (4,), (64,), (np.int32(3), np.int32(3), np.uint32(5), queue, tail, np.uint64(queue.size)))
    n = int(tail[0])
    case("reserve_push", np.unique(queue.get()[:n]).size == n)
    values = cp.arange(300, dtype=cp.int64)
    prefix, totals = cp.zeros(300, dtype=cp.int64), cp.zeros(5, dtype=cp.int64)
    kernels.get_kernel(path, "block_scan", defines=block)(
        (5,), (64,), (values, np.int64(300), prefix, totals))
    want = np.concatenate([np.cumsum(c) - c for c in np.array_split(np.arange(320), 5)])[:300]
    case("block_scan", np.array_equal(prefix.get(), want))
    q = worklist.GlobalQueue(1500, xp=cp)
    owner, overflow = cp.zeros(1500, dtype=cp.int64), cp.zeros(1, dtype=cp.int32)
    kernels.get_kernel(path, "local_block_push", defines=block)(
        (3,), (64,), (np.int64(1500), np.uint32(7), owner, *q.kernel_args(), overflow))
    items = q.contents().get()
    case("local_block_push", np.unique(items).size == items.size and not q.overflowed())


def alloc_cases(cp) -> None:
    pool = alloc.SlotPool(100, xp=cp)
    got = pool.alloc(150).get()
    pool.free(cp.asarray(got[:60]))
    again = pool.alloc(80).get()
    case("slot pool", np.unique(got).size == 150 and np.isin(got[:60], again).all())
    chunks = alloc.ChunkPool(64, 4, xp=cp)
    head, size = chunks.new_lists(5)
    nodes = cp.asarray(np.arange(200) % 5)
    values = cp.arange(200, dtype=cp.int32)
    ok = cp.zeros(200, dtype=cp.bool_)
    kernels.get_kernel(alloc.KERNEL_FILE, "chunk_append")(
        (4,), (64,), (*chunks.device_struct(), head, size, nodes, values, np.int64(200), ok))
    lists = chunks.lists(head, size)
    case("chunk lists", bool(ok.get().all()) and all(
        sorted(lst.tolist()) == list(range(v, 200, 5)) for v, lst in enumerate(lists)))


def fingerprint_cases(cp) -> None:
    # Byte counts about the kernel's step and a partial last word; one and eight blocks
    # a multiprocessor (grid-stride or not), two arrays into one output.
    rng = np.random.default_rng(3)
    step = 8 * graph_cache.FINGERPRINT_STEP
    for n_bytes in (5, step + 13, 3 * step + 8):
        raw = cp.asarray(rng.integers(0, 256, n_bytes, dtype=np.uint8))
        pair = (raw, raw[8:])
        want = [graph_cache.fingerprint_host(a) for a in pair]
        for per_sm in (1, 8):
            got = graph_cache.fingerprint_on_device(pair, blocks_per_sm=per_sm).get()
            case(f"fingerprint {n_bytes} B, {per_sm}/SM", [int(x) for x in got] == want)


def grow_cases(cp) -> None:
    # reorder.cell_layout's multi-source BFS (kernels/grow.cu), plain and confined to
    # groups, against the NumPy path; then a whole layout on a mesh and on a directed graph.
    rng = np.random.default_rng(4)
    mesh = generators.delaunay_graph(3000, seed=1, device="cpu")
    directed = CSRGraph.from_edges(rng.integers(0, 900, 2700), rng.integers(0, 900, 2700),
                                   n_vertices=900)
    for label, g in (("mesh", mesh), ("directed", directed)):
        n = g.n_vertices
        sources = np.sort(rng.choice(n, size=n // 40, replace=False))
        group = rng.integers(0, 3, n)
        gg = g.to("gpu")
        for confine in (None, group):
            want = reorder._grow(g, g.indptr.astype(np.int64), sources,
                                 np.arange(sources.size), confine)
            got = reorder._grow(gg, None, cp.asarray(sources), cp.arange(sources.size),
                                None if confine is None else cp.asarray(confine))
            case(f"grow {label} confined={confine is not None}",
                 all(np.array_equal(a.get(), b) for a, b in zip(got, want)))
        new_id, n_pad = reorder.cell_layout(gg, 48, 64)
        case(f"cell_layout {label}", np.unique(new_id.get()).size == n and n_pad >= n)


def main() -> int:
    import cupy as cp

    for cases in (barrier_cases, conflict_cases, worklist_cases, alloc_cases,
                  fingerprint_cases, grow_cases):
        cases(cp)
    cp.cuda.Device().synchronize()
    print(f"infra_sanitize: {'FAILED ' + ', '.join(failures) if failures else 'all ok'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
