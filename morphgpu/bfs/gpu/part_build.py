"""A partitioned graph built on its GPUs from edge chunks (kernels/part_build.cu): part i's
rows are made on ``devices[i]`` and never leave it, so a graph larger than one GPU's
memory (or than the host's) is searched over several with ``bfs(graph, s, devices=...)``.

Two passes, each GPU in its own host thread (CuPy and the CUDA calls release the GIL, so
the GPUs work at the same time):

1. degrees: GPU i counts the rows of its share of the chunks (every P-th chunk, where the
   source can hand out shares: ``chunks(shard=(i, P))``; otherwise it reads them all and
   counts every P-th), the host adds the P counts and draws the partition, balanced by
   edges as :meth:`PartitionedGraph.from_edge_chunks` does;
2. rows: GPU i reads every chunk and places the entries of its own rows at per-row cursors.

Chunks may be host (NumPy) or CuPy arrays; host chunks are copied to each GPU that reads
them. A chunk source that draws on the GPU (``generators.kronecker_edge_chunks(...,
device="gpu")``) draws on the reading thread's device, so nothing crosses the bus but the
degree counts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ... import backend
from .. import partitioned as pt
from . import modules

PART_BUILD_FILE = "bfs/kernels/part_build.cu"
_BLOCK = 256


def _functions(device_id: int, vid: np.dtype) -> tuple[Any, Any]:
    cp = backend.cupy_module()
    with cp.cuda.Device(device_id):  # RawModule functions are per device
        mod = modules.module(PART_BUILD_FILE, str(vid), "int64")
        return mod.get_function("part_count_rows"), mod.get_function("part_fill_rows")


def _share(chunks: Callable[..., Iterable[tuple[Any, Any]]], index: int,
           count: int) -> Iterable[tuple[Any, Any]]:
    """Chunks index, index + count, ... of the source."""
    if getattr(chunks, "shardable", False):
        return chunks(shard=(index, count))
    return (c for k, c in enumerate(chunks()) if k % count == index)


def _on_device(cp: Any, a: Any) -> Any:
    """``a`` as an int64 array on the current GPU (a copy only where it is elsewhere)."""
    if isinstance(a, np.ndarray) or a.device.id != cp.cuda.runtime.getDevice():
        return cp.asarray(np.asarray(a.get() if hasattr(a, "get") else a, dtype=np.int64))
    return a.astype(cp.int64, copy=False)


def _run(cp: Any, kernel: Any, blocks: int, src: Any, dst: Any, lo: int, hi: int,
         both: bool, *tail: Any) -> None:
    src, dst = _on_device(cp, src), _on_device(cp, dst)
    if src.shape != dst.shape:
        raise ValueError(f"an edge chunk's sources and targets differ in length "
                         f"({src.size} and {dst.size})")
    if src.size:
        kernel((blocks,), (_BLOCK,), (src, dst, np.int64(src.size), np.int64(lo),
                                       np.int64(hi), np.int32(both), *tail))


def build(chunks: Callable[..., Iterable[tuple[Any, Any]]], n_vertices: int,
          devices: Sequence[int], *, symmetrize: bool = False) -> pt.PartitionedGraph:
    """What :meth:`PartitionedGraph.from_edge_chunks_on_gpus` runs (arguments checked)."""
    cp = backend.cupy_module()
    n, P = int(n_vertices), len(devices)
    vid = np.dtype(np.int32 if n < 2**31 else np.int64)
    kernels = [_functions(d, vid) for d in devices]  # compiled here, not in the threads
    blocks = [backend.gpu_properties(d)["multiprocessors"] * 8 for d in devices]

    def count(i: int) -> np.ndarray:
        with cp.cuda.Device(devices[i]):
            counts = cp.zeros(n, dtype=cp.uint64)
            for src, dst in _share(chunks, i, P):
                _check_ids(cp, src, dst, n)
                _run(cp, kernels[i][0], blocks[i], src, dst, 0, n, symmetrize, counts)
            return counts.get()

    def fill(i: int, lo: int, hi: int, degrees: np.ndarray) -> pt.PartCSR:
        with cp.cuda.Device(devices[i]):
            indptr = cp.zeros(hi - lo + 1, dtype=cp.int64)
            cp.cumsum(cp.asarray(degrees[lo:hi]), out=indptr[1:])
            indices = cp.empty(int(degrees[lo:hi].sum()), dtype=vid)
            cursor = indptr[:-1].astype(cp.uint64)
            for src, dst in chunks():
                _run(cp, kernels[i][1], blocks[i], src, dst, lo, hi, symmetrize, cursor,
                     indices)
            cp.cuda.Device().synchronize()
            return pt.PartCSR(i, lo, hi, indptr, indices)

    with backend.gpu_memory_guard(f"a partitioned graph of {n} vertices on GPUs {list(devices)}"), \
            ThreadPoolExecutor(P) as pool:
        degrees = np.zeros(n, dtype=np.int64)
        for partial in pool.map(count, range(P)):
            degrees += partial.astype(np.int64, copy=False)
        partition = pt.Partition.balanced(degrees, P)
        ranges = [partition.range(i) for i in range(P)]
        parts = list(pool.map(lambda i: fill(i, *ranges[i], degrees), range(P)))
    # The passes' temporaries (counts, chunks, sort space) stay cached in CuPy's pools;
    # NCCL and the search allocate outside or beside them, and on a graph this size the
    # cache is what they need (seen: NCCL failing at 79.9 of 80 GB after a scale-29 build).
    for d in devices:
        with cp.cuda.Device(d):
            cp.get_default_memory_pool().free_all_blocks()
    return pt.PartitionedGraph(partition, dict(enumerate(parts)), not symmetrize, vid)


def _check_ids(cp: Any, src: Any, dst: Any, n: int) -> None:
    """Every id in [0, n): one reduction per chunk in the degree pass (the fill pass reads
    the same chunks), so a bad id is an error, not a write outside the rows."""
    xp = np if isinstance(src, np.ndarray) else cp
    for name, a in (("source", src), ("target", dst)):
        if a.size and (int(xp.min(a)) < 0 or int(xp.max(a)) >= n):
            raise ValueError(f"an edge chunk holds a {name} id outside [0, {n})")
