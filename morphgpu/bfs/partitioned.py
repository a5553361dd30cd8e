"""Partitioned BFS: P parts, each owning a contiguous range of vertices, two level loops.

The design (issue 21; Merrill et al. §6 and Enterprise §4.4, 1D partition):

- :class:`Partition`: vertex ranges ``[starts[p], starts[p + 1])`` balanced by edges (each
  part gets about (m + n) / P of the CSR: rows plus entries), every part non-empty;
  ``owner(v)`` is a binary search on the starts.
- :class:`PartCSR`: a part's rows (``indptr`` rebased to 0) with GLOBAL column ids, so a
  part expands its frontier without knowing the others. :class:`PartitionedGraph` holds
  the partition and the parts (all of them, or one per process under MPI); it is built
  from a CSRGraph or, without ever holding the whole CSR, from an edge source read in
  chunks (:meth:`PartitionedGraph.from_edge_chunks`).
- Two level loops, each the same code for every transport. Any graph: the message levels
  (:func:`run_levels`): each part expands its frontier, claiming the neighbours it owns
  (first claim wins) and bucketing the others by owner, at most once per search each; the
  parts all-gather a row of counts (to each owner, and found locally: the loop stops when
  the table is all zero); the buckets go to their owners (all-to-all, sizes from the
  table); each owner claims what it received, the sender's vertex becoming the parent.
  The host reads the counts every level. Undirected graphs: the bitmap levels
  (:mod:`.bitmap_levels`, Enterprise §4.4's direction-optimizing over parts, Beamer's
  rule in :class:`Direction`): every message a fixed-size bitmap and the direction
  decided on the devices, so the host queues levels without waiting on them.
- Engines per part: :class:`NumpyPart` here (the CPU twin), and
  :class:`morphgpu.bfs.gpu.partitioned.GpuPart` (kernels/partitioned.cu). Transports:
  :mod:`morphgpu.bfs.exchange` (in-process for P parts on one device, NCCL for one
  process driving several GPUs, MPI + NCCL for one process per GPU).

:func:`search` is what ``bfs(graph, source, partitions=P)`` and ``bfs(graph, source,
devices=[...])`` run; ``python -m morphgpu.bfs.distributed`` runs it under ``mpirun``.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import bitmap_levels
from . import exchange as exchange_mod
from .cpu import _row_positions
from .variants import ALPHA, BETA

EdgeChunks = Callable[[], Iterable[tuple[Any, Any]]]  # a fresh iterator per call


# --------------------------------------------------------------------------- partition
@dataclass(frozen=True)
class Partition:
    """Contiguous vertex ranges: part p owns ``[starts[p], starts[p + 1])``."""

    starts: np.ndarray  # int64, n_parts + 1 entries, 0 first, n_vertices last, increasing

    @property
    def n_parts(self) -> int:
        return int(self.starts.size - 1)

    @property
    def n_vertices(self) -> int:
        return int(self.starts[-1])

    def range(self, part: int) -> tuple[int, int]:
        return int(self.starts[part]), int(self.starts[part + 1])

    def word_range(self, part: int) -> tuple[int, int]:
        """The 32-bit words of an n-bit map that hold the part's vertices' bits (the end
        words may hold a neighbour part's bits too)."""
        lo, hi = self.range(part)
        return lo >> 5, ((hi - 1) >> 5) + 1

    def owner(self, v: Any) -> Any:
        """The part owning each vertex id (NumPy or CuPy, as ``v`` is)."""
        xp = np if isinstance(v, (np.ndarray, int, np.integer)) else _module_of(v)
        starts = self.starts if xp is np else xp.asarray(self.starts)
        return xp.searchsorted(starts, v, side="right") - 1

    @classmethod
    def balanced(cls, degrees: Any, n_parts: int) -> Partition:
        """Ranges balanced by edges: each part's rows plus entries about (m + n) / P
        (a vertex counts as one so edgeless ranges still split); every part non-empty."""
        degrees = np.asarray(degrees, dtype=np.int64)
        n = int(degrees.size)
        check_partitions(n_parts, n)
        work = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(degrees + 1, out=work[1:])
        targets = (np.arange(1, n_parts, dtype=np.float64) * (work[-1] / n_parts))
        inner = np.searchsorted(work, targets, side="left").astype(np.int64)
        starts = np.empty(n_parts + 1, dtype=np.int64)
        starts[0], starts[-1] = 0, n
        for k in range(1, n_parts):  # P is small: clamp so every part keeps >= 1 vertex
            starts[k] = min(max(int(inner[k - 1]), int(starts[k - 1]) + 1), n - (n_parts - k))
        return cls(starts)

    @classmethod
    def from_starts(cls, starts: Sequence[int], n_vertices: int) -> Partition:
        s = np.asarray(starts, dtype=np.int64)
        if s.ndim != 1 or s.size < 2 or s[0] != 0 or s[-1] != n_vertices or (np.diff(s) <= 0).any():
            raise ValueError(f"starts must rise strictly from 0 to {n_vertices}, got {list(s)}")
        return cls(s)


def _module_of(x: Any) -> Any:
    import cupy  # noqa: PLC0415  (only reached with CuPy arrays)

    return cupy


def check_partitions(n_parts: Any, n_vertices: int) -> int:
    if isinstance(n_parts, bool) or not isinstance(n_parts, (int, np.integer)):
        raise ValueError(f"partitions must be a positive integer, got {n_parts!r}")
    p = int(n_parts)
    if p < 1:
        raise ValueError(f"partitions must be >= 1, got {p}")
    if p > n_vertices:
        raise ValueError(f"partitions={p} is more than the graph's {n_vertices} vertices "
                         "(every part owns at least one)")
    return p


@dataclass
class PartCSR:
    """One part's rows: ``indptr`` rebased to 0 (``hi - lo + 1`` entries), ``indices``
    global vertex ids. Host arrays until an engine moves them to its device."""

    part: int
    lo: int
    hi: int
    indptr: np.ndarray
    indices: np.ndarray


@dataclass
class PartitionedGraph:
    """A graph split by a :class:`Partition`; ``parts`` maps part id to its rows (every
    part, or the ones this process drives)."""

    partition: Partition
    parts: dict[int, PartCSR]
    directed: bool = True
    vid_dtype: np.dtype = field(default_factory=lambda: np.dtype(np.int32))

    @property
    def n_vertices(self) -> int:
        return self.partition.n_vertices

    @classmethod
    def from_csr(cls, g: Any, n_parts: int, *, only: Iterable[int] | None = None,
                 partition: Partition | None = None) -> PartitionedGraph:
        """Split a host CSRGraph (``only``: keep just these parts)."""
        host = g.to("cpu")
        indptr = np.asarray(host.indptr)
        if partition is None:
            partition = Partition.balanced(np.diff(indptr), n_parts)
        keep = range(partition.n_parts) if only is None else only
        parts = {}
        for p in keep:
            lo, hi = partition.range(p)
            a, b = int(indptr[lo]), int(indptr[hi])
            parts[p] = PartCSR(p, lo, hi, (indptr[lo:hi + 1] - a).astype(np.int64),
                               np.asarray(host.indices[a:b]))
        return cls(partition, parts, bool(host.directed), np.dtype(host.indices.dtype))

    @classmethod
    def from_edge_chunks(cls, chunks: EdgeChunks, n_vertices: int, n_parts: int, *,
                         symmetrize: bool = False, only: Iterable[int] | None = None,
                         place: Callable[[PartCSR], PartCSR] | None = None,
                         ) -> PartitionedGraph:
        """Build the parts from an edge source read in chunks, never holding the whole CSR.

        ``chunks()`` returns a fresh iterator of ``(src, dst)`` array pairs (a file read
        piece by piece, a generator); it is read once to count degrees (the partition)
        and once per part built, keeping only that part's edges, so the host holds one
        part's edges at a time (plus n degree counters). ``symmetrize`` adds every edge
        both ways; duplicates are kept (a BFS does not mind). ``place`` (e.g. a move to
        the part's GPU) runs on each part as it is finished, before the next is read.
        """
        n = int(n_vertices)
        degrees = np.zeros(n, dtype=np.int64)
        for src, _dst in _pairs(chunks(), symmetrize):
            degrees += np.bincount(src, minlength=n)
        partition = Partition.balanced(degrees, n_parts)
        vid = np.dtype(np.int32 if n < 2**31 else np.int64)
        keep = range(partition.n_parts) if only is None else only
        parts: dict[int, PartCSR] = {}
        for p in keep:
            lo, hi = partition.range(p)
            indptr = np.zeros(hi - lo + 1, dtype=np.int64)
            np.cumsum(degrees[lo:hi], out=indptr[1:])
            indices = np.empty(int(indptr[-1]), dtype=vid)
            fill = indptr[:-1].copy()
            for src, dst in _pairs(chunks(), symmetrize):
                mine = (src >= lo) & (src < hi)
                if not mine.any():
                    continue
                rows, cols = src[mine] - lo, dst[mine]
                order = np.argsort(rows, kind="stable")
                rows, cols = rows[order], cols[order]
                # Slot of each edge: its row's fill point plus its rank within the row here.
                first = np.searchsorted(rows, rows, side="left")
                slot = fill[rows] + (np.arange(rows.size) - first)
                indices[slot] = cols
                fill += np.bincount(rows, minlength=hi - lo)
            part = PartCSR(p, lo, hi, indptr, indices)
            parts[p] = place(part) if place is not None else part
        return cls(partition, parts, not symmetrize, vid)

    @classmethod
    def from_edge_chunks_on_gpus(cls, chunks: EdgeChunks, n_vertices: int,
                                 devices: Sequence[int], *, symmetrize: bool = False,
                                 ) -> PartitionedGraph:
        """Part i built on GPU ``devices[i]`` and kept there (one part per GPU, the same
        partition rule as :meth:`from_edge_chunks`), so neither one GPU nor the host ever
        holds the whole CSR: search it with ``bfs(graph, s, devices=devices)``. Chunks
        may be host or CuPy arrays; ``generators.kronecker_edge_chunks(..., device="gpu")``
        draws them on each GPU. Rows come out unordered inside (:mod:`.gpu.part_build`)."""
        ids = exchange_mod.check_devices(devices)
        check_partitions(len(ids), int(n_vertices))
        from .gpu import part_build  # noqa: PLC0415  (CuPy only where the GPU runs)

        return part_build.build(chunks, int(n_vertices), ids, symmetrize=symmetrize)

    @property
    def side(self) -> str:
        """"gpu" where the parts' rows are CuPy arrays (built on GPUs), else "cpu"."""
        return "cpu" if all(isinstance(p.indices, np.ndarray) for p in self.parts.values()) \
            else "gpu"


def _pairs(chunks: Iterable[tuple[Any, Any]], symmetrize: bool
           ) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    for src, dst in chunks:
        s = np.asarray(src, dtype=np.int64)
        d = np.asarray(dst, dtype=np.int64)
        yield (np.concatenate([s, d]), np.concatenate([d, s])) if symmetrize else (s, d)


# --------------------------------------------------------------------------- the CPU part
def _first_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct values, index of each one's first occurrence)."""
    return np.unique(values, return_index=True)


class NumpyPart:
    """One part's search state and level steps in NumPy (the CPU twin of GpuPart)."""

    def __init__(self, part: PartCSR, partition: Partition, want_parents: bool) -> None:
        self.part, self.partition = part, partition
        self.want_parents = want_parents
        self.vid = part.indices.dtype if part.indices.size else np.dtype(np.int64)
        self.xp = np

    def start(self, source: int) -> None:
        p = self.part
        size = p.hi - p.lo
        self.dist = np.full(size, -1, dtype=np.int32)
        self.parent = np.full(size, -1, dtype=self.vid) if self.want_parents else None
        self.sent = np.zeros(self.partition.n_vertices, dtype=bool)
        self.frontier = np.zeros(0, dtype=np.int64)  # local ids
        if p.lo <= source < p.hi:
            self.dist[source - p.lo] = 0
            if self.parent is not None:
                self.parent[source - p.lo] = source
            self.frontier = np.array([source - p.lo], dtype=np.int64)

    # The level loop starts every part's step before it waits on any (expand_begin for
    # all, then expand_end for all), so parts on different GPUs work at the same time.
    # Here the work is done at the start.
    def expand_begin(self, next_level: int) -> None:
        self._expanded = self._expand(next_level)

    def expand_end(self) -> tuple[np.ndarray, list[exchange_mod.Message]]:
        return self._expanded

    def _expand(self, next_level: int) -> tuple[np.ndarray, list[exchange_mod.Message]]:
        p, P = self.part, self.partition.n_parts
        found, rv, rs = self._expand_local(next_level)
        self.found = found
        new = ~self.sent[rv]
        rv, first = _first_of(rv[new])
        rs = rs[new][first]
        self.sent[rv] = True
        owners = self.partition.owner(rv)
        order = np.argsort(owners, kind="stable")
        rv, rs = rv[order].astype(self.vid), rs[order].astype(self.vid)
        row = np.bincount(owners, minlength=P).astype(np.int64)
        ends = np.cumsum(row)
        sends = [(rv[e - c:e], rs[e - c:e] if self.parent is not None else None)
                 for c, e in zip(row, ends, strict=True)]
        row[p.part] = found.size  # the diagonal: found here (the stop test reads it too)
        return row, sends

    def claim(self, received: Sequence[exchange_mod.Message], next_level: int) -> None:
        p = self.part
        got = [(v, s) for src, (v, s) in enumerate(received) if src != p.part and len(v)]
        claimed = np.zeros(0, dtype=np.int64)
        if got:
            v = np.concatenate([np.asarray(g[0], dtype=np.int64) for g in got]) - p.lo
            fresh = self.dist[v] < 0
            claimed, first = _first_of(v[fresh])
            self.dist[claimed] = next_level
            if self.parent is not None:
                s = np.concatenate([np.asarray(g[1]) for g in got])
                self.parent[claimed] = s[fresh][first]
        self.frontier = np.concatenate([self.found, claimed])

    # ---- bitmap levels (bitmap_levels.run: undirected graphs)
    def bitmap_start(self, alpha: float, beta: float) -> None:
        """Ready the bitmap levels of a search started by :meth:`start`, with Beamer's
        constants (bitmap_levels.run)."""
        p, n = self.part, self.partition.n_vertices
        if not hasattr(self, "cand"):  # kept: the exchange's views of them (bind) stay valid
            words = _words(n)
            self.fronts = [np.zeros(words, dtype=np.uint32), np.zeros(words, dtype=np.uint32)]
            self.cand = np.zeros(words, dtype=np.uint32)
            a, b = self.partition.word_range(p.part)
            self.staging = np.zeros((self.partition.n_parts, b - a), dtype=np.uint32)
            # The parent each remote vertex was first sent with (read by its owner after the
            # search, for the vertices it labelled from this part's candidates).
            self.remote_parent = np.zeros(n, dtype=np.int64)
        self.fronts[0][:] = 0
        _set_bits(self.fronts[0], self.frontier + p.lo)
        self.sent = np.zeros(n, dtype=bool)
        self.rule = Direction(n, alpha, beta)
        self.modes: dict[int, int] = {}

    def parent_staging(self) -> np.ndarray:
        """Where an exchange that copies puts the other parts' kept parents of this
        part's vertices: one row per part."""
        return np.zeros((self.partition.n_parts, self.part.hi - self.part.lo), np.int64)

    def bind_slices(self, rows: Sequence[np.ndarray], parent_rows: Sequence[np.ndarray],
                    parent_staging: np.ndarray | None) -> None:
        """The arrays the exchange delivers this part's slices in (candidate words and
        kept parents, one per part) and the kept parents' staging (None where the exchange
        does not copy)."""
        self.received, self.received_parents = list(rows), list(parent_rows)
        self.parent_stagings = parent_staging

    def level_stats(self, level: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The pairs (this part's, the sum over the parts) to be summed across the parts:
        [frontier vertices, their edges, the part's edges] and the frontier bitmap (own
        bits here, every part's after the sum)."""
        m_f = int(np.diff(self.part.indptr)[self.frontier].sum())
        self.stats = np.array([self.frontier.size, m_f, self.part.indices.size], np.int64)
        self.sums = np.zeros(3, dtype=np.int64)
        front = self.fronts[level & 1]
        return [(self.stats, self.sums), (front, front)]

    def level_expand(self, level: int) -> np.ndarray:
        """The level's direction from the summed row; top-down: claim own neighbours,
        mark the others never sent before in the candidate map (returned, to be swapped),
        keeping the frontier vertex each was sent from; bottom-up: adopt parents on the
        summed frontier bitmap."""
        mode = self.modes[level] = self.rule.decide(*(int(x) for x in self.sums))
        self.cand[:] = 0
        self.fronts[(level + 1) & 1][:] = 0
        self.found = np.zeros(0, dtype=np.int64)
        if mode == bitmap_levels.TOP_DOWN:
            self.found, remote, sources = self._expand_local(level + 1)
            new = ~self.sent[remote]
            remote, first = _first_of(remote[new])
            self.sent[remote] = True
            self.remote_parent[remote] = sources[new][first]
            _set_bits(self.cand, remote)
        elif mode == bitmap_levels.BOTTOM_UP:
            self.bottom_up(level + 1, self.fronts[level & 1])
            self.found = self.frontier
        return self.cand

    def level_merge(self, level: int) -> None:
        """Top-down: label the unvisited candidates sent here, each one's parent to be
        read after the search from the first part (in row order) that sent it; then the
        next frontier and its bits."""
        if self.modes[level] == bitmap_levels.TOP_DOWN:
            p = self.part
            a, _ = self.partition.word_range(p.part)
            sender = np.full(self.staging.shape[1] * 32, -1, dtype=np.int64)
            for r in range(len(self.received) - 1, -1, -1):  # the first row wins
                sender[_bit_ids(self.received[r])] = r
            ids = np.flatnonzero(sender >= 0) + a * 32
            mine = ids[(ids >= p.lo) & (ids < p.hi)] - p.lo
            fresh = mine[self.dist[mine] < 0]
            self.dist[fresh] = level + 1
            if self.parent is not None:
                self.parent[fresh] = -2 - sender[fresh + p.lo - a * 32]
            self.found = np.concatenate([self.found, fresh])
        self.frontier = self.found
        _set_bits(self.fronts[(level + 1) & 1], self.frontier + self.part.lo)

    def resolve_parents(self) -> None:
        """After the search: each vertex labelled from row r's candidates (parent -2 - r)
        takes the parent that part sent it with."""
        pending = np.flatnonzero(self.parent <= -2)
        rows = -2 - self.parent[pending]
        for r, got in enumerate(self.received_parents):
            mine = pending[rows == r]
            self.parent[mine] = got[mine]

    def mode_ready(self, level: int) -> bool:
        del level
        return True

    def mode_of(self, level: int) -> int:
        return self.modes[level]

    def bottom_up(self, next_level: int, front: np.ndarray) -> None:
        """Every unvisited vertex here adopts its first neighbour (in row order) whose bit
        is set in ``front``, the whole frontier's bitmap."""
        p = self.part
        open_ = np.flatnonzero(self.dist < 0)
        positions, degrees = _row_positions(p.indptr, open_)
        nbrs = p.indices[positions].astype(np.int64)
        hit = ((front[nbrs >> 5] >> (nbrs & 31).astype(np.uint32)) & 1).astype(bool)
        found, first = _first_of(np.repeat(open_, degrees)[hit])  # row order: first hit wins
        self.dist[found] = next_level
        if self.parent is not None:
            self.parent[found] = nbrs[hit][first]
        self.frontier = found

    def _expand_local(self, next_level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Top-down from the part's frontier: claim own neighbours (parent: the frontier
        vertex); return (claimed local ids, remote neighbours' global ids, their sources')."""
        p = self.part
        positions, degrees = _row_positions(p.indptr, self.frontier)
        nbrs = p.indices[positions].astype(np.int64)
        srcs = np.repeat(self.frontier + p.lo, degrees)
        local = (nbrs >= p.lo) & (nbrs < p.hi)
        lv, ls = nbrs[local] - p.lo, srcs[local]
        fresh = self.dist[lv] < 0
        found, first = _first_of(lv[fresh])
        self.dist[found] = next_level
        if self.parent is not None:
            self.parent[found] = ls[fresh][first]
        return found, nbrs[~local], srcs[~local]

    def figures_begin(self) -> None:
        reached = self.dist >= 0
        edges = int(np.diff(self.part.indptr)[reached].sum())
        self._figures = np.array([edges, int(self.dist.max(initial=-1))], dtype=np.int64)

    def figures_end(self) -> np.ndarray:
        return self._figures


def _words(n: int) -> int:
    return (n + 31) // 32 or 1


def _set_bits(bits: np.ndarray, ids: np.ndarray) -> None:
    ids = np.asarray(ids, dtype=np.int64)
    np.bitwise_or.at(bits, ids >> 5, (np.uint32(1) << (ids & 31).astype(np.uint32)))


def _bit_ids(words: np.ndarray) -> np.ndarray:
    """The positions of the set bits of ``words`` (uint32), in order."""
    bits = np.unpackbits(words.astype("<u4").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits).astype(np.int64)


# --------------------------------------------------------------------------- the loop
@dataclass
class Direction:
    """Beamer's rule over the whole graph, decided on every part from the same summed row,
    so all parts take the same direction: bottom-up once the frontier's edges pass the
    unexplored edges / ``alpha``; top-down again once the frontier, shrinking, is below
    n / ``beta``. Only for graphs whose rows are their in-edges too (undirected). The GPU
    parts do the same arithmetic in their kernel (kernels/partitioned.cu, decide)."""

    n_vertices: int
    alpha: float = ALPHA
    beta: float = BETA
    bottom_up: bool = False
    unexplored: int | None = None
    last: int = 0

    def decide(self, n_f: int, m_f: int, edges: int) -> int:
        """The mode of a level whose frontier has ``n_f`` vertices and ``m_f`` edges, in a
        graph of ``edges`` CSR entries (all parts'): bitmap_levels.DONE when empty."""
        if n_f == 0:
            return bitmap_levels.DONE
        if self.unexplored is None:
            self.unexplored = edges
        self.unexplored -= m_f
        if not self.bottom_up:
            self.bottom_up = m_f * self.alpha > self.unexplored
        elif n_f * self.beta < self.n_vertices and n_f < self.last:
            self.bottom_up = False
        self.last = n_f
        return bitmap_levels.BOTTOM_UP if self.bottom_up else bitmap_levels.TOP_DOWN


def run_levels(engines: Sequence[Any], exchange: exchange_mod.Exchange) -> int:
    """The top-down level loop of graphs that may be directed: expand, all-gather counts
    (stop on zero), all-to-all, claim. Returns the number of levels run (the last one
    found nothing)."""
    level = 0
    while True:
        nxt = level + 1
        for e in engines:
            e.expand_begin(nxt)
        exchange.settle()
        outs = [e.expand_end() for e in engines]
        table = exchange.all_gather_rows([row for row, _ in outs])
        if not table.any():
            return nxt
        received = exchange.all_to_all([sends for _, sends in outs], table)
        for e, r in zip(engines, received, strict=True):
            e.claim(r, nxt)
        level = nxt


@dataclass
class Outcome:
    """What a partitioned search gives back: labels in global order (where the exchange's
    ``join`` puts them: the parts' device in-process, the first GPU over NCCL, the host
    under MPI), CSR entries out of reached vertices, the largest label."""

    distances: Any
    predecessors: Any
    edges: int
    top: int


def search(engines: Sequence[Any], exchange: exchange_mod.Exchange, source: int,
           want_parents: bool, direction: Direction | None = None) -> Outcome:
    """Run a search on ``engines`` (one per local part, in ``exchange.local_parts``
    order) and gather the labels of every part. ``direction``: Beamer's constants for an
    undirected graph (the levels of :mod:`.bitmap_levels`), or None for the top-down
    message levels of :func:`run_levels` (any graph)."""
    exchange.begin()
    for e in engines:
        e.start(source)
    if direction is None:
        run_levels(engines, exchange)
    else:  # undirected: fixed-size bitmaps, no host wait per level
        bitmap_levels.run(engines, exchange, direction.alpha, direction.beta, want_parents)
    for e in engines:
        e.figures_begin()
    exchange.settle()
    figures = exchange.all_gather_rows([e.figures_end() for e in engines])
    dist = exchange.join([e.dist for e in engines])
    parent = exchange.join([e.parent for e in engines]) if want_parents else None
    return Outcome(dist, parent, int(figures[:, 0].sum()), int(figures[:, 1].max()))


def engines_for(pg: PartitionedGraph, parts: Sequence[int], side: str, want_parents: bool,
                devices: Sequence[int] | None = None, streams: Sequence[Any] | None = None,
                ) -> list[Any]:
    """One engine per part in ``parts``: NumPy on the CPU, GpuPart on the GPU (part i on
    ``devices[i]``, or all on the current device)."""
    if side == "cpu":
        return [NumpyPart(pg.parts[p], pg.partition, want_parents) for p in parts]
    from .gpu.partitioned import GpuPart  # noqa: PLC0415  (CuPy only where the GPU runs)

    out = []
    for i, p in enumerate(parts):
        out.append(GpuPart(pg.parts[p], pg.partition, want_parents,
                           device_id=None if devices is None else devices[i],
                           stream=None if streams is None else streams[i]))
    return out


# --------------------------------------------------------------------------- the door
def run(g: Any, source: int, *, side: str, want_parents: bool, partitions: int | None = None,
        devices: Sequence[int] | None = None,
        timeout: float = exchange_mod.DEFAULT_TIMEOUT_S) -> tuple[Outcome, str]:
    """What bfs(..., partitions=P) / bfs(..., devices=[...]) run (arguments checked by
    api.py): in-process parts on ``side``, or one part per GPU of ``devices`` over NCCL.
    Returns the outcome and the variant name."""
    if isinstance(g, PartitionedGraph):
        given = g.partition.n_parts
        wanted = len(devices) if devices is not None else partitions
        if wanted is not None and int(wanted) != given:
            raise ValueError(f"the graph comes in {given} parts: partitions/devices must "
                             f"give {given}, not {wanted}")
        if len(g.parts) != given:
            raise ValueError(f"the graph holds {len(g.parts)} of its {given} parts here "
                             "(a rank's share): search it with its MPI ranks")
        partitions = given
    if devices is not None:
        ids = exchange_mod.check_devices(devices)
        if partitions is not None and int(partitions) != len(ids):
            raise ValueError(f"partitions={partitions} with devices={ids}: one part per "
                             "GPU (leave partitions out, or give as many GPUs)")
        P = check_partitions(len(ids), g.n_vertices)
        key: tuple = ("nccl", tuple(ids), want_parents, timeout)
        prepared = _prepared(g, key, lambda: _prepare_nccl(g, ids, want_parents, timeout))
        name = f"partitioned-nccl-{P}"
    else:
        P = check_partitions(partitions, g.n_vertices)
        key = (side, P, want_parents, _device_key(side))
        prepared = _prepared(g, key, lambda: _prepare_in_process(g, P, side, want_parents))
        name = f"partitioned-{P}"
    engines, ex = prepared
    return search(engines, ex, source, want_parents, direction_for(g)), name


def direction_for(g: Any) -> Direction | None:
    """Beamer's rule for an undirected graph (a CSRGraph or PartitionedGraph), else None:
    bottom-up needs each row to be the vertex's in-edges too."""
    return None if g.directed else Direction(int(g.n_vertices))


# Engines (their per-part copies and buffers) and exchanges kept per graph object, so a
# second search on the same graph neither re-partitions nor re-creates communicators.
_PREPARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_COMMUNICATORS: dict[tuple, exchange_mod.NcclExchange] = {}


def _device_key(side: str) -> int:
    if side != "gpu":
        return -1
    from .. import backend  # noqa: PLC0415

    return backend.current_device_id()


def _prepared(g: Any, key: tuple, make: Callable[[], Any]) -> Any:
    try:
        per_graph = _PREPARED.setdefault(g, {})
    except TypeError:  # not weak-referenceable: nothing kept
        return make()
    if key not in per_graph:
        per_graph[key] = make()
    return per_graph[key]


def _split(g: Any, P: int) -> PartitionedGraph:
    """``g`` in P parts (a graph given in parts already is taken as it is)."""
    return g if isinstance(g, PartitionedGraph) else PartitionedGraph.from_csr(g, P)


def _prepare_in_process(g: Any, P: int, side: str, want_parents: bool) -> Any:
    pg = _split(g, P)
    ex = exchange_mod.InProcessExchange(P)
    return engines_for(pg, ex.local_parts, side, want_parents), ex


def _prepare_nccl(g: Any, ids: list[int], want_parents: bool, timeout: float) -> Any:
    ex = _COMMUNICATORS.get((tuple(ids), timeout))
    if ex is None:
        ex = exchange_mod.NcclExchange.for_devices(ids, timeout=timeout)
        _COMMUNICATORS[(tuple(ids), timeout)] = ex
    pg = _split(g, len(ids))
    ex.begin()  # the parts are copied on the communicators' streams: after the caller's work
    engines = engines_for(pg, ex.local_parts, "gpu", want_parents, devices=ids,
                          streams=[c.stream for c in ex.comms])  # type: ignore[attr-defined]
    return engines, ex
