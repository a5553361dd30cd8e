"""One part of a partitioned BFS on a GPU (kernels/partitioned.cu): the engine both level
loops drive, the twin of :class:`morphgpu.bfs.partitioned.NumpyPart`.

Message levels (:func:`morphgpu.bfs.partitioned.run_levels`, any graph): one expand launch
(the shared expand operator; owned neighbours claimed, remote ones written once per search
with a per-owner count), an offsets launch (the scan of the owner counts) and one bucket
launch, then one small read of the counts (the row the exchange all-gathers). After the
exchange, one claim launch per part that sent something.

Bitmap levels (:mod:`morphgpu.bfs.bitmap_levels`, undirected graphs): four launches a
level and no wait: ``bfs_level_start`` (this part's count row; the next maps zeroed),
``bfs_level_expand`` (the direction decided from the summed row; top-down or bottom-up
here), ``bfs_level_hubs`` (a top-down level's long rows, in chunks over the grid),
``bfs_level_merge`` (the candidates other parts sent, labelled), and a 4-byte read of the
level's mode that the loop polls later; after the search, ``bfs_level_parents``.

Reads to the host go to pinned buffers asynchronously (``*_begin``) and are waited for
later (``*_end``), so a process driving several GPUs has them all working at once.
Everything runs on the part's device and stream (``device_id``/``stream``; the current ones
by default)."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from ... import backend, kernels
from . import launch, modules

PARTITIONED_FILE = "bfs/kernels/partitioned.cu"
BLOCK = modules.LEVEL_BLOCK
_KERNEL_CONSTANTS = kernels.source_constants(PARTITIONED_FILE)
MODE_RING = _KERNEL_CONSTANTS["MODE_RING"]  # the modes of the last MODE_RING levels
HUB_CHUNK = _KERNEL_CONSTANTS["HUB_CHUNK"]  # rows longer than this go to bfs_level_hubs


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
            self.k_expand_messages = mod.get_function("bfs_part_expand")
            self.k_bucket = mod.get_function("bfs_part_bucket")
            self.k_claim = mod.get_function("bfs_part_claim")
            self.k_figures = mod.get_function("bfs_part_figures")
            self.k_offsets = mod.get_function("bfs_part_offsets")
            self.k_start = mod.get_function("bfs_level_start")
            self.k_expand = mod.get_function("bfs_level_expand")
            self.k_hubs = mod.get_function("bfs_level_hubs")
            self.k_merge = mod.get_function("bfs_level_merge")
            self.k_parents = mod.get_function("bfs_level_parents")
            self.starts = cp.asarray(partition.starts, dtype=np.int64)
            self.queues = (cp.empty(max(size, 1), dtype=self.vid),
                           cp.empty(max(size, 1), dtype=self.vid))
            # words: [queue 0 tail, queue 1 tail, remote tail, owner counts (P)]
            self.words = cp.zeros(3 + P, dtype=np.uint64)
            self.figures = cp.zeros(2, dtype=np.uint64)  # [edges of reached, largest label]
            # Page-locked, so the reads of words and figures are asynchronous.
            import cupyx  # noqa: PLC0415  (with CuPy: GpuPart exists only where it does)

            self.host_words = cupyx.empty_pinned(3 + P, dtype=np.uint64)
            self.host_figures = cupyx.empty_pinned(2, dtype=np.uint64)
            self.read_done = cp.cuda.Event(disable_timing=True)
            self.remote: Any = None  # the message levels' buffers, made on their first use
            self.cand: Any = None  # the bitmap levels' buffers, likewise
            self.sent: Any = None  # both loops': the remote vertices sent this search
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
        if self.stream is None and self.cp.cuda.runtime.getDevice() == self.device_id:
            return contextlib.nullcontext()  # in-process parts: nothing to switch
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
            if self.sent is not None:
                self._zero(self.sent)
            self._zero(self.words)
            self._source = source
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

    def _message_buffers(self) -> None:
        cp = self.cp
        n, P = self.partition.n_vertices, self.partition.n_parts
        remote = max(n - (self.part.hi - self.part.lo), 1)  # each sent once a search at most
        self.remote = (cp.empty(remote, dtype=self.vid), cp.empty(remote, dtype=self.vid))
        self.bucketed = (cp.empty(remote, dtype=self.vid), cp.empty(remote, dtype=self.vid))
        self.cursor = cp.empty(P, dtype=np.uint64)  # each owner's next bucketed slot
        if self.sent is None:
            self.sent = cp.zeros((n + 31) // 32 or 1, dtype=np.uint32)

    def expand_begin(self, next_level: int) -> None:
        p, P = self.part, self.partition.n_parts
        here, nxt = (next_level - 1) & 1, next_level & 1
        w = self.words
        with self._on():
            if self.remote is None:
                self._message_buffers()
            self._zero(w[nxt:nxt + 1])
            self._zero(w, 2)
            grid, block = (self.blocks,), (BLOCK,)
            vid = self.vid.type
            self.k_expand_messages(grid, block, (
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

    # ---- bitmap levels (bitmap_levels.run: undirected graphs), four launches a level
    def bitmap_start(self, alpha: float, beta: float) -> None:
        """Ready the bitmap levels of a search started by :meth:`start`, with Beamer's
        constants (bitmap_levels.run)."""
        cp, p = self.cp, self.part
        n = self.partition.n_vertices
        self.alpha, self.beta = alpha, beta
        with self._on():
            if self.cand is None:  # kept: the exchange's views of them (bind) stay valid
                words = (n + 31) // 32 or 1
                a, b = self.partition.word_range(p.part)
                # The frontier bitmaps of this level and the next (own bits, then summed).
                self.fronts = (cp.zeros(words, dtype=np.uint32), cp.zeros(words, dtype=np.uint32))
                self.cand = cp.zeros(words, dtype=np.uint32)
                if self.sent is None:
                    self.sent = cp.zeros(words, dtype=np.uint32)
                self.staging = cp.zeros((self.partition.n_parts, b - a), dtype=np.uint32)
                # The parent each remote vertex was sent with, read by its owner after the
                # search; without parents, nothing is kept.
                self.remote_parent = (cp.empty(n, dtype=self.vid) if self.want_parents
                                      else cp.empty(0, dtype=self.vid))
                # (row, chunk) pairs of the frontier's long rows: at most 2 entries / CHUNK.
                self.chunks = cp.empty(2 * (2 * int(self.indices.size) // HUB_CHUNK + 1),
                                       dtype=np.uint64)
                self.chunk_tail = cp.zeros(1, dtype=np.uint64)
                self.level_stats_buf = cp.zeros((2, 3), dtype=np.uint64)
                self.sums = cp.zeros(3, dtype=np.uint64)
                self.rule = cp.zeros((2, 4), dtype=np.int64)
                self.modes = cp.zeros(MODE_RING, dtype=np.int32)
                import cupyx  # noqa: PLC0415

                self.host_modes = cupyx.empty_pinned(MODE_RING, dtype=np.int32)
                self.mode_read = [cp.cuda.Event(disable_timing=True)
                                  for _ in range(MODE_RING)]
            self._zero(self.fronts[0])
            self._zero(self.level_stats_buf)
            self._zero(self.rule)
            if p.lo <= self._source < p.hi:
                self.fronts[0][self._source >> 5] = np.uint32(1 << (self._source & 31))

    def parent_staging(self) -> Any:
        """Where an exchange that copies puts the other parts' kept parents of this
        part's vertices: one row per part."""
        with self._on():
            return self.cp.empty((self.partition.n_parts, self.part.hi - self.part.lo),
                                 dtype=self.vid)

    def bind_slices(self, rows: Any, parent_rows: Any, parent_staging: Any) -> None:
        """As the NumPy engine's (partitioned.NumpyPart.bind_slices), the slices' arrays
        held as device pointer tables."""
        with self._on():
            self.rows = self._pointers(rows)
            self.parent_rows = self._pointers(parent_rows)
        self.n_rows = len(rows)
        self.parent_stagings = parent_staging

    def _pointers(self, arrays: Any) -> Any:
        return self.cp.asarray(np.array([a.data.ptr for a in arrays] or [0], dtype=np.uint64))

    def _remote_parent_ptr(self) -> Any:
        return self.remote_parent if self.want_parents else launch.NULL

    def level_stats(self, level: int) -> list[tuple[Any, Any]]:
        c, n = level & 1, (level + 1) & 1
        w, stats = self.words, self.level_stats_buf
        with self._on():
            self.k_start((self.blocks,), (BLOCK,), (
                self.indptr, self.queues[c], w[c:], w[n:], self.chunk_tail,
                np.int64(self.indices.size), stats[c], stats[n], self.fronts[n], self.cand,
                np.int64(self.cand.size)))
        return [(stats[c], self.sums), (self.fronts[c], self.fronts[c])]

    def level_expand(self, level: int) -> Any:
        c, n = level & 1, (level + 1) & 1
        p, w, cp = self.part, self.words, self.cp
        vid = self.vid.type
        grid, block = (self.blocks,), (BLOCK,)
        with self._on():
            self.k_expand(grid, block, (
                self.indptr, self.indices, vid(p.lo), vid(p.hi), self.dist, self._parent_ptr(),
                self.queues[c], w[c:], self.queues[n], w[n:], self.fronts[c], self.fronts[n],
                self.cand, self.sent, self._remote_parent_ptr(), self.chunks, self.chunk_tail,
                self.sums, self.rule[c], self.rule[n], self.modes, np.int32(level),
                np.float64(self.alpha), np.float64(self.beta),
                np.int64(self.partition.n_vertices)))
            self.k_hubs(grid, block, (
                self.indptr, self.indices, vid(p.lo), vid(p.hi), self.dist, self._parent_ptr(),
                self.queues[n], w[n:], self.fronts[n], self.cand, self.sent,
                self._remote_parent_ptr(), self.chunks, self.chunk_tail, self.modes,
                np.int32(level)))
            # The mode's read: 4 bytes to pinned memory, and an event the loop polls.
            k = level % MODE_RING
            stream = cp.cuda.get_current_stream()
            cp.cuda.runtime.memcpyAsync(self.host_modes.ctypes.data + 4 * k,
                                        self.modes.data.ptr + 4 * k, 4,
                                        cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
            self.mode_read[k].record(stream)
        return self.cand

    def level_merge(self, level: int) -> None:
        if self.n_rows == 0:
            return  # one part: nothing is ever sent
        n = (level + 1) & 1
        p, w = self.part, self.words
        vid = self.vid.type
        a, b = self.partition.word_range(p.part)
        with self._on():
            self.k_merge((self.blocks,), (BLOCK,), (
                self.dist, self._parent_ptr(), vid(p.lo), vid(p.hi), self.fronts[n],
                self.queues[n], w[n:], self.rows, np.int32(self.n_rows), np.int64(a),
                np.int64(b - a), self.modes, np.int32(level)))

    def resolve_parents(self) -> None:
        with self._on():
            self.k_parents((self.blocks,), (BLOCK,), (
                self.parent, np.int64(self.part.hi - self.part.lo), self.parent_rows))

    def mode_ready(self, level: int) -> bool:
        return bool(self.mode_read[level % MODE_RING].done)

    def mode_of(self, level: int) -> int:
        return int(self.host_modes[level % MODE_RING])

    def figures_begin(self) -> None:
        """Queue [edges out of reached vertices, largest label] and its read (the level
        loop is over)."""
        with self._on():
            self._zero(self.figures)
            n_local = self.part.hi - self.part.lo
            self.k_figures((self.blocks,), (BLOCK,), (self.indptr, self.dist,
                                                      np.int64(n_local), self.figures))
            self._read(self.figures, self.host_figures)

    def figures_end(self) -> np.ndarray:
        self._wait()
        return self.host_figures.astype(np.int64)
