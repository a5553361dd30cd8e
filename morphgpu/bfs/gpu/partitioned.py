"""One part of a partitioned BFS on a GPU (kernels/partitioned.cu): the engine that
:func:`morphgpu.bfs.partitioned.run_levels` drives, the twin of its NumpyPart.

Top-down level: one expand launch (the shared expand operator; owned neighbours claimed,
remote ones written once per search with a per-owner count), an offsets launch (the scan of
the owner counts) and one bucket launch, then one small read of the counts (the row the
exchange all-gathers).
After the exchange, one claim launch per part that sent something. Bottom-up level (the
loop's Direction): the frontier's size and edges read first; the frontier marked in an
n-bit map, which the exchange ORs across the parts; one launch where each unvisited vertex
here adopts its first neighbour on that map (the shared bottom-up scan).

Reads to the host go to pinned buffers asynchronously (``*_begin``) and are waited for
later (``*_end``), so a process driving several GPUs has them all working at once.
Everything runs on the part's device and stream (``device_id``/``stream``; the current ones
by default)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from ... import backend
from . import launch, modules

PARTITIONED_FILE = "bfs/kernels/partitioned.cu"
BLOCK = modules.LEVEL_BLOCK


class GpuPart:
    def __init__(self, part: Any, partition: Any, want_parents: bool, *,
                 device_id: int | None = None, stream: Any = None) -> None:
        cp = backend.cupy_module()
        self.cp = self.xp = cp
        self.part, self.partition, self.want_parents = part, partition, want_parents
        self.device_id = int(cp.cuda.runtime.getDevice()) if device_id is None else device_id
        self.stream = stream
        n, size, P = partition.n_vertices, part.hi - part.lo, partition.n_parts
        self.vid = np.dtype(np.int32 if n < 2**31 else np.int64)
        with self._on():
            self.indptr = cp.asarray(part.indptr, dtype=np.int64)
            eid = "int64"
            self.indices = cp.asarray(part.indices, dtype=self.vid)
            mod = modules.module(PARTITIONED_FILE, str(self.vid), eid)
            # Functions are per device: fetch them with this part's device current.
            self.k_expand = mod.get_function("bfs_part_expand")
            self.k_bucket = mod.get_function("bfs_part_bucket")
            self.k_claim = mod.get_function("bfs_part_claim")
            self.k_figures = mod.get_function("bfs_part_figures")
            self.k_offsets = mod.get_function("bfs_part_offsets")
            self.k_edges = mod.get_function("bfs_part_frontier_edges")
            self.k_mark = mod.get_function("bfs_part_mark")
            self.k_bottom_up = mod.get_function("bfs_part_bottom_up")
            self.starts = cp.asarray(partition.starts, dtype=np.int64)
            self.queues = (cp.empty(max(size, 1), dtype=self.vid),
                           cp.empty(max(size, 1), dtype=self.vid))
            remote = max(n - size, 1)  # each remote vertex is sent at most once a search
            self.remote = (cp.empty(remote, dtype=self.vid), cp.empty(remote, dtype=self.vid))
            self.bucketed = (cp.empty(remote, dtype=self.vid), cp.empty(remote, dtype=self.vid))
            # words: [queue 0 tail, queue 1 tail, remote tail, owner counts (P)]
            self.words = cp.zeros(3 + P, dtype=np.uint64)
            self.cursor = cp.empty(P, dtype=np.uint64)  # each owner's next bucketed slot
            self.sent = cp.zeros((n + 31) // 32 or 1, dtype=np.uint32)
            self.front = cp.zeros((n + 31) // 32 or 1, dtype=np.uint32)  # bottom-up's map
            self.stats = cp.zeros(2, dtype=np.uint64)  # [frontier size, frontier edges]
            # Page-locked, so the reads of words and stats are asynchronous.
            import cupyx  # noqa: PLC0415  (with CuPy: GpuPart exists only where it does)

            self.host_words = cupyx.empty_pinned(3 + P, dtype=np.uint64)
            self.host_stats = cupyx.empty_pinned(2, dtype=np.uint64)
            self.read_done = cp.cuda.Event(disable_timing=True)
            props = backend.gpu_properties(self.device_id)
            self.blocks = props["multiprocessors"] * (2048 // BLOCK)

    def _zero(self, a: Any, start: int = 0) -> None:
        """``a[start:] = 0`` as one memset on the current stream (a CuPy fill or slice
        assignment is a kernel launch and several Python calls)."""
        cp = self.cp
        item = a.dtype.itemsize
        cp.cuda.runtime.memsetAsync(a.data.ptr + start * item, 0, (a.size - start) * item,
                                    cp.cuda.get_current_stream().ptr)

    def _on(self) -> Any:
        stack = contextlib.ExitStack()
        stack.enter_context(self.cp.cuda.Device(self.device_id))
        if self.stream is not None:
            stack.enter_context(self.stream)
        return stack

    def start(self, source: int) -> None:
        cp, p = self.cp, self.part
        size = p.hi - p.lo
        with self._on():
            self.dist = cp.full(size, -1, dtype=cp.int32)
            self.parent = cp.full(size, -1, dtype=self.vid) if self.want_parents else None
            self._zero(self.sent)
            self._zero(self.words)
            if p.lo <= source < p.hi:
                self.dist[source - p.lo] = 0
                if self.parent is not None:
                    self.parent[source - p.lo] = source
                self.queues[0][0] = source - p.lo
                self.words[0] = 1

    def _parent_ptr(self) -> Any:
        return launch.ptr(self.parent)

    def _read(self, device: Any, host: Any) -> None:
        """Queue ``device`` -> ``host`` (pinned) on the part's stream; _wait() ends it."""
        cp = self.cp
        cp.asnumpy(device, out=host, blocking=False)
        self.read_done.record(cp.cuda.get_current_stream())

    def _wait(self) -> None:
        self.read_done.synchronize()

    def expand_begin(self, next_level: int) -> None:
        p, P = self.part, self.partition.n_parts
        here, nxt = (next_level - 1) & 1, next_level & 1
        w = self.words
        with self._on():
            self._zero(w[nxt:nxt + 1])
            self._zero(w, 2)
            grid, block = (self.blocks,), (BLOCK,)
            vid = self.vid.type
            self.k_expand(grid, block, (
                self.indptr, self.indices, vid(p.lo), vid(p.hi), self.starts, np.int32(P),
                self.dist, self._parent_ptr(), self.queues[here], w[here:], self.queues[nxt],
                w[nxt:], self.remote[0], self.remote[1], w[2:], w[3:], self.sent,
                np.int32(next_level)))
            self.k_offsets((1,), (32,), (w[3:], np.int32(P), self.cursor))
            self.k_bucket(grid, block, (self.remote[0], self.remote[1], w[2:], self.starts,
                                        np.int32(P), self.cursor, self.bucketed[0],
                                        self.bucketed[1]))
            self._read(w, self.host_words)  # the one read of the level's expand
        self._nxt = nxt

    def expand_end(self) -> tuple[np.ndarray, list[Any]]:
        p = self.part
        self._wait()
        words = self.host_words
        row = words[3:].astype(np.int64)
        ends = np.cumsum(row)
        dst, src = self.bucketed
        sends = [(dst[e - c:e], src[e - c:e] if self.parent is not None else None)
                 for c, e in zip(row.tolist(), ends.tolist(), strict=True)]
        row[p.part] = int(words[self._nxt])
        return row, sends

    def stats_begin(self, next_level: int) -> None:
        here = (next_level - 1) & 1
        with self._on():
            self._zero(self.stats)
            self.k_edges((self.blocks,), (BLOCK,), (self.indptr, self.queues[here],
                                                    self.words[here:], self.stats))
            self._read(self.stats, self.host_stats)

    def stats_end(self) -> np.ndarray:
        self._wait()
        n_f, m_f = (int(x) for x in self.host_stats)
        return np.array([n_f, m_f, int(self.indices.size)], dtype=np.int64)

    def frontier_bits(self, next_level: int) -> Any:
        here = (next_level - 1) & 1
        with self._on():
            self._zero(self.front)
            self.k_mark((self.blocks,), (BLOCK,), (self.queues[here], self.words[here:],
                                                   self.vid.type(self.part.lo), self.front))
        return self.front

    def bottom_up(self, next_level: int, front: Any) -> None:
        nxt = next_level & 1
        n_local = self.part.hi - self.part.lo
        with self._on():
            self._zero(self.words[nxt:nxt + 1])
            self.k_bottom_up((self.blocks,), (BLOCK,), (
                self.indptr, self.indices, np.int64(n_local), self.dist, self._parent_ptr(),
                front, self.queues[nxt], self.words[nxt:], np.int32(next_level)))

    def claim(self, received: Any, next_level: int) -> None:
        p = self.part
        nxt = next_level & 1
        with self._on():
            for src, (v, s) in enumerate(received):
                if src == p.part or len(v) == 0:
                    continue
                self.k_claim((self.blocks,), (BLOCK,), (
                    v, launch.ptr(s), np.int64(len(v)),
                    self.vid.type(p.lo), self.dist, self._parent_ptr(), self.queues[nxt],
                    self.words[nxt:], np.int32(next_level)))

    def figures_begin(self) -> None:
        """Queue [edges out of reached vertices, largest label] and its read (into the
        stats buffers: the level loop is over)."""
        with self._on():
            self._zero(self.stats)
            n_local = self.part.hi - self.part.lo
            self.k_figures((self.blocks,), (BLOCK,), (self.indptr, self.dist,
                                                      np.int64(n_local), self.stats))
            self._read(self.stats, self.host_stats)

    def figures_end(self) -> np.ndarray:
        self._wait()
        return self.host_stats.astype(np.int64)
