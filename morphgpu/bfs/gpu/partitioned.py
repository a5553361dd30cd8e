"""One part of a partitioned BFS on a GPU (kernels/partitioned.cu): the engine that
:func:`morphgpu.bfs.partitioned.run_levels` drives, the twin of its NumpyPart.

Per level: one expand launch (the shared expand operator; owned neighbours claimed, remote
ones written once per search with a per-owner count), a scan of the owner counts and one
bucket launch, then one small read of the counts (the row the exchange all-gathers). After
the exchange, one claim launch per part that sent something. Everything runs on the part's
device and stream (``device_id``/``stream``; the current ones by default)."""

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
            self.starts = cp.asarray(partition.starts, dtype=np.int64)
            self.queues = (cp.empty(max(size, 1), dtype=self.vid),
                           cp.empty(max(size, 1), dtype=self.vid))
            remote = max(n - size, 1)  # each remote vertex is sent at most once a search
            self.remote = (cp.empty(remote, dtype=self.vid), cp.empty(remote, dtype=self.vid))
            self.bucketed = (cp.empty(remote, dtype=self.vid), cp.empty(remote, dtype=self.vid))
            # words: [queue 0 tail, queue 1 tail, remote tail, owner counts (P)]
            self.words = cp.zeros(3 + P, dtype=np.uint64)
            self.sent = cp.zeros((n + 31) // 32 or 1, dtype=np.uint32)
            props = backend.gpu_properties(self.device_id)
            self.blocks = props["multiprocessors"] * (2048 // BLOCK)

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
            self.sent.fill(0)
            self.words.fill(0)
            self.level = 0
            if p.lo <= source < p.hi:
                self.dist[source - p.lo] = 0
                if self.parent is not None:
                    self.parent[source - p.lo] = source
                self.queues[0][0] = source - p.lo
                self.words[0] = 1

    def _parent_ptr(self) -> Any:
        return launch.ptr(self.parent)

    def expand(self, next_level: int) -> tuple[np.ndarray, list[Any]]:
        cp, p, P = self.cp, self.part, self.partition.n_parts
        here, nxt = (next_level - 1) & 1, next_level & 1
        w = self.words
        with self._on():
            w[nxt] = 0
            w[2:] = 0
            grid, block = (self.blocks,), (BLOCK,)
            vid = self.vid.type
            self.k_expand(grid, block, (
                self.indptr, self.indices, vid(p.lo), vid(p.hi), self.starts, np.int32(P),
                self.dist, self._parent_ptr(), self.queues[here], w[here:], self.queues[nxt],
                w[nxt:], self.remote[0], self.remote[1], w[2:], w[3:], self.sent,
                np.int32(next_level)))
            counts = w[3:]
            cursor = cp.cumsum(counts) - counts
            self.k_bucket(grid, block, (self.remote[0], self.remote[1], w[2:], self.starts,
                                        np.int32(P), cursor, self.bucketed[0],
                                        self.bucketed[1]))
            words = w.get()  # the one read of the level's expand
        row = words[3:].astype(np.int64)
        ends = np.cumsum(row)
        dst, src = self.bucketed
        sends = [(dst[e - c:e], src[e - c:e] if self.parent is not None else None)
                 for c, e in zip(row.tolist(), ends.tolist(), strict=True)]
        row[p.part] = int(words[nxt])
        self.level = next_level
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

    def figures(self) -> np.ndarray:
        with self._on():
            words = self.cp.zeros(2, dtype=np.uint64)
            n_local = self.part.hi - self.part.lo
            self.k_figures((self.blocks,), (BLOCK,), (self.indptr, self.dist,
                                                      np.int64(n_local), words))
            return words.get().astype(np.int64)
