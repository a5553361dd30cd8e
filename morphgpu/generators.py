"""Seeded synthetic graphs, identical on the CPU and the GPU for the same arguments.

Every random number is a counter-based hash of (seed, stream, index): the SplitMix64
finaliser applied to ``key(seed, stream) + index * 0x9E3779B97F4A7C15`` in wrapping uint64
arithmetic. The same array code runs on NumPy and on CuPy, so the CPU and GPU paths build
the very same graph (not merely graphs with the same statistics): generate on the GPU
for speed, check against the CPU. Floats come from the top 53 bits (exact on both sides);
every sort either has unique keys or only decides an order the result does not keep.

Results are :class:`CSRGraph` on the side ``device`` resolves to, rows sorted.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from . import arguments, backend
from .csr import CSRGraph, check_declared_size, expand_counts
from .hashing import mix64, mix64_inplace
from .unique import sorted_unique

__all__ = [
    "kronecker",
    "rmat",
    "gnm",
    "grid2d",
    "grid3d",
    "random_geometric",
    "random_points",
    "delaunay_graph",
    "random_weights",
    "hash_uniform_bits",
]

_MASK64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_UNIT_BITS = 53

# Stream numbers: each use of randomness draws from its own stream so that changing one
# generator's parameters never shifts another's numbers.
_STREAM_LEVELS = 0  # Kronecker levels use streams 0 .. scale-1
_STREAM_PERMUTE = 1 << 20
_STREAM_POINT_X = (1 << 20) + 1
_STREAM_POINT_Y = (1 << 20) + 2
_STREAM_WEIGHTS = (1 << 20) + 3
_STREAM_GNM_PRIORITY = (1 << 20) + 4
_STREAM_GNM_ROUNDS = 1 << 21  # rounds use 2r and 2r + 1 above this


def _mix64_int(z: int) -> int:
    """hashing.mix64 on one Python int (host-side keys), with wrapping arithmetic."""
    return int(mix64(np.uint64(z & _MASK64)))


def _stream_key(seed: int, stream: int) -> int:
    return _mix64_int(_mix64_int(seed) + stream * _GOLDEN)


def hash_uniform_bits(xp: Any, seed: int, stream: int, index: Any) -> Any:
    """64 random bits per entry of ``index`` (int array), a pure function of its arguments."""
    idx = xp.asarray(index).astype(xp.uint64)
    key = xp.uint64(_stream_key(seed, stream))
    return mix64(idx * xp.uint64(_GOLDEN) + key)


def _unit_floats(xp: Any, bits: Any) -> Any:
    """Floats in [0, 1) from the top 53 bits: the same value on CPU and GPU."""
    return (bits >> xp.uint64(64 - _UNIT_BITS)).astype(xp.float64) * (2.0**-_UNIT_BITS)


# The refusal generators' size arguments have always given (tests match on it).
_COUNT_MESSAGE = "{name} must be an integer >= {low}, got {value!r}"


def _check_count(name: str, value: Any) -> int:
    """A non-negative integer (not a bool) as an int; ``name`` in the refusal."""
    return arguments.integer(value, name, low=0, message=_COUNT_MESSAGE)


def _check_fits(side: str, who: str, what: str, needed_bytes: float) -> None:
    """On the host, refuse before allocating what cannot fit (kronecker(40) met NumPy's
    MemoryError for 128 TiB, grid3d(10**5, 10**5, 10**5) for 7 PiB); the GPU path has
    its own guard (backend.gpu_memory_guard)."""
    if side == "cpu":
        check_declared_size(who, what, needed_bytes, ValueError, verb="asks for")


def _side(device: str, who: str) -> tuple[str, Any]:
    side = backend.resolve_device(device, who=who)
    return side, backend.xp_for(side)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Kronecker
def _check_recursive_args(scale: Any, edge_factor: Any, seed: Any) -> tuple[int, int, int]:
    """The size arguments Kronecker and R-MAT share, checked."""
    scale = _check_count("scale", scale)
    if scale > 40:
        raise ValueError(f"scale must be at most 40, got {scale}")
    return scale, _check_count("edge_factor", edge_factor), arguments.seed(seed)


def _rmat_edges(
    xp: Any, scale: int, n_edges: int, a: float, b: float, c: float, seed: int,
    first: int = 0,
) -> tuple[Any, Any]:
    """(src, dst) int64 of ``n_edges`` R-MAT edges, numbers ``first`` on (each edge is a
    pure function of its number, so any range of them is drawn alone): one quadrant
    choice per bit."""
    for name, p in (("a", a), ("b", b), ("c", c)):
        if not 0.0 <= arguments.real(p, f"probability {name}") <= 1.0:
            raise ValueError(f"probability {name} must be in [0, 1], got {p}")
    if a + b + c > 1.0 + 1e-12:
        raise ValueError(f"a + b + c must be at most 1, got {a + b + c}")
    if xp is np:
        return _rmat_edges_host(scale, n_edges, a, b, c, seed, first)
    return _rmat_edges_arrays(xp, scale, n_edges, a, b, c, seed, first)


def _rmat_thresholds(xp: Any, a: float, b: float, c: float) -> tuple[Any, Any, Any]:
    # Integer thresholds on the 53-bit draw keep the choice exact and identical per side.
    unit = 1 << _UNIT_BITS
    return (xp.uint64(min(unit, int(a * unit))), xp.uint64(min(unit, int((a + b) * unit))),
            xp.uint64(min(unit, int((a + b + c) * unit))))


def _rmat_edges_arrays(xp: Any, scale: int, n_edges: int, a: float, b: float, c: float,
                       seed: int, first: int) -> tuple[Any, Any]:
    """The draw as whole-array operations (the GPU's form; the host form's reference)."""
    t_a, t_ab, t_abc = _rmat_thresholds(xp, a, b, c)
    index = xp.arange(first, first + n_edges, dtype=xp.uint64)
    src = xp.zeros(n_edges, dtype=xp.int64)
    dst = xp.zeros(n_edges, dtype=xp.int64)
    for level in range(scale):
        draw = hash_uniform_bits(xp, seed, _STREAM_LEVELS + level, index) >> xp.uint64(
            64 - _UNIT_BITS
        )
        src_bit = draw >= t_ab
        dst_bit = ((draw >= t_a) & (draw < t_ab)) | (draw >= t_abc)
        src |= src_bit.astype(xp.int64) << level
        dst |= dst_bit.astype(xp.int64) << level
    return src, dst


# Edges per block of the host draw: its dozen working arrays stay in the CPU's caches.
_HOST_BLOCK = 1 << 16


def _rmat_edges_host(scale: int, n_edges: int, a: float, b: float, c: float, seed: int,
                     first: int, block: int = _HOST_BLOCK,
                     threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The same bits as _rmat_edges_arrays, drawn in blocks of ``block`` edges into
    preallocated buffers (mix64 in place): whole-array NumPy makes a fresh
    array of every intermediate, so each of the dozen operations per level went to main
    memory and back; 3.3x faster on a 2-core host at scale 20 (benchmarks/generators.py).
    The blocks are dealt out to ``threads`` threads (default: the cores this process may
    use): NumPy's ufuncs release the GIL, and each edge is a pure function of its number."""
    src = np.empty(n_edges, dtype=np.int64)
    dst = np.empty(n_edges, dtype=np.int64)
    starts = range(0, n_edges, block)
    workers = min(len(starts), threads or backend.usable_cores())
    draw = functools.partial(_rmat_blocks, scale, a, b, c, seed, first, block, src, dst)
    if workers <= 1:
        draw(starts)
    else:
        with ThreadPoolExecutor(workers) as pool:
            # Stripes (block k to thread k mod workers) keep the threads' shares even.
            list(pool.map(draw, [starts[w::workers] for w in range(workers)]))
    return src, dst


def _rmat_blocks(scale: int, a: float, b: float, c: float, seed: int, first: int,
                 block: int, src: np.ndarray, dst: np.ndarray, starts: range) -> None:
    """Draw the blocks beginning at ``starts`` into src/dst (one thread's share, with its
    own working arrays)."""
    n_edges = src.size
    t_a, t_ab, t_abc = _rmat_thresholds(np, a, b, c)
    keys = [np.uint64(_stream_key(seed, _STREAM_LEVELS + level)) for level in range(scale)]
    s_unit = np.uint64(64 - _UNIT_BITS)
    m = min(block, n_edges)
    z, t = np.empty(m, dtype=np.uint64), np.empty(m, dtype=np.uint64)
    bit = np.empty(m, dtype=np.int64)
    is_src, is_dst, far = np.empty(m, dtype=bool), np.empty(m, dtype=bool), np.empty(m, bool)
    with np.errstate(over="ignore"):
        for lo in starts:
            k = min(block, n_edges - lo)
            base = np.arange(first + lo, first + lo + k, dtype=np.uint64)
            base *= np.uint64(_GOLDEN)
            s_out, d_out = src[lo:lo + k], dst[lo:lo + k]
            s_out.fill(0)
            d_out.fill(0)
            zk, tk, bk = z[:k], t[:k], bit[:k]
            sk, dk, fk = is_src[:k], is_dst[:k], far[:k]
            for level in range(scale):
                np.add(base, keys[level], out=zk)  # hash_uniform_bits, in place
                mix64_inplace(zk, tk)
                zk >>= s_unit
                np.greater_equal(zk, t_ab, out=sk)  # the quadrant, as in the array form
                np.greater_equal(zk, t_a, out=dk)
                np.less(zk, t_ab, out=fk)
                dk &= fk
                np.greater_equal(zk, t_abc, out=fk)
                dk |= fk
                one = np.int64(1) << level
                np.multiply(sk, one, out=bk)
                s_out |= bk
                np.multiply(dk, one, out=bk)
                d_out |= bk


def _random_permutation(xp: Any, n: int, seed: int, stream: int) -> Any:
    """A permutation of range(n) from unique hash keys (so any sort gives the same one)."""
    index = xp.arange(n, dtype=xp.uint64)
    bits = max(1, int(n - 1).bit_length())
    keys = (hash_uniform_bits(xp, seed, stream, index) >> xp.uint64(bits)) << xp.uint64(bits)
    return xp.argsort(keys | index).astype(xp.int64)


def kronecker(
    scale: int,
    edge_factor: int = 16,
    *,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    device: str = "auto",
    keep_duplicates: bool = False,
) -> CSRGraph:
    """Graph500 Kronecker graph: 2**scale vertices, edge_factor * 2**scale generated edges.

    Each edge picks a quadrant per bit with probabilities (a, b, c, 1-a-b-c); vertex ids are
    then randomly permuted. Undirected: both directions, self-loops dropped, duplicates
    merged unless ``keep_duplicates``. (Graph500's per-level noise on a, b, c is not
    applied.) Identical on CPU and GPU for the same arguments.
    """
    scale, edge_factor, seed = _check_recursive_args(scale, edge_factor, seed)
    side, xp = _side(device, "kronecker")
    n = 1 << scale
    # the drawn (src, dst) in int64, then both directions and their sort keys
    _check_fits(side, "kronecker", f"2**{scale} vertices and {edge_factor * n} edges",
                64 * edge_factor * n + 16 * n)
    with backend.gpu_memory_guard(f"kronecker(scale={scale}, edge_factor={edge_factor})"):
        src, dst = _rmat_edges(xp, scale, edge_factor * n, a, b, c, seed)
        relabel = _random_permutation(xp, n, seed, _STREAM_PERMUTE)
        src, dst = relabel[src], relabel[dst]
        return CSRGraph.from_edges(
            src, dst, n_vertices=n, symmetrize=True, drop_self_loops=True,
            merge_duplicates=None if keep_duplicates else "first",
        )


def kronecker_edge_chunks(
    scale: int,
    edge_factor: int = 16,
    *,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    chunk_edges: int = 1 << 24,
    device: str = "cpu",
) -> Callable[..., Iterator[tuple[Any, Any]]]:
    """The edges :func:`kronecker` draws with the same arguments, as ``(src, dst)`` chunks of
    ``chunk_edges`` (self-loops dropped; one direction each, duplicates kept): a callable
    that returns a fresh iterator, for builders that never hold the whole graph
    (``morphgpu.bfs.partitioned.PartitionedGraph.from_edge_chunks`` with
    ``symmetrize=True`` builds the parts of ``kronecker()``'s graph, duplicates aside).

    ``device="cpu"``: NumPy chunks; the callable holds the vertex permutation (8 bytes a
    vertex) and one chunk at a time. ``device="gpu"``: CuPy chunks drawn on the GPU that
    is current when the iterator runs (the permutation made once per GPU), so each GPU of
    ``PartitionedGraph.from_edge_chunks_on_gpus`` draws its own. ``chunks(shard=(i, k))``
    yields only chunks i, i + k, ... (the others are never drawn)."""
    scale, edge_factor, seed = _check_recursive_args(scale, edge_factor, seed)
    chunk_edges = _check_count("chunk_edges", chunk_edges)
    if chunk_edges < 1:
        raise ValueError("chunk_edges must be at least 1")
    if device not in ("cpu", "gpu"):
        raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
    n = 1 << scale
    total = edge_factor * n
    xp = np if device == "cpu" else backend.cupy_module()
    relabels: dict[int, Any] = {}

    def relabel() -> Any:
        key = -1 if xp is np else int(xp.cuda.runtime.getDevice())
        if key not in relabels:
            relabels[key] = _random_permutation(xp, n, seed, _STREAM_PERMUTE)
        return relabels[key]

    relabel()  # made now: a fresh iterator should cost one chunk, not the permutation

    def chunks(shard: tuple[int, int] | None = None) -> Iterator[tuple[Any, Any]]:
        index, count = (0, 1) if shard is None else (int(shard[0]), int(shard[1]))
        if not 0 <= index < count:
            raise ValueError(f"shard must be (i, k) with 0 <= i < k, got {shard!r}")
        for first in range(index * chunk_edges, total, count * chunk_edges):
            drawn = min(chunk_edges, total - first)
            src, dst = _rmat_edges(xp, scale, drawn, a, b, c, seed, first=first)
            keep = src != dst
            ids = relabel()
            yield ids[src[keep]], ids[dst[keep]]

    chunks.shardable = True  # type: ignore[attr-defined]
    return chunks


def rmat(
    scale: int,
    edge_factor: int = 16,
    *,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    device: str = "auto",
    directed: bool = False,
) -> CSRGraph:
    """R-MAT graph (Kronecker without the vertex permutation); self-loops dropped,
    duplicates merged; ``directed=False`` adds every reverse edge."""
    scale, edge_factor, seed = _check_recursive_args(scale, edge_factor, seed)
    side, xp = _side(device, "rmat")
    n = 1 << scale
    _check_fits(side, "rmat", f"2**{scale} vertices and {edge_factor * n} edges",
                64 * edge_factor * n + 16 * n)
    with backend.gpu_memory_guard(f"rmat(scale={scale}, edge_factor={edge_factor})"):
        src, dst = _rmat_edges(xp, scale, edge_factor * n, a, b, c, seed)
        return CSRGraph.from_edges(
            src, dst, n_vertices=n, symmetrize=not directed, drop_self_loops=True,
            merge_duplicates="first",
        )


# --------------------------------------------------------------------------- G(n, m)
def gnm(n: int, m: int, *, seed: int = 0, device: str = "auto", directed: bool = False) -> CSRGraph:
    """Uniform random graph with exactly ``m`` distinct edges (pairs u != v) on ``n`` vertices.

    Undirected graphs store each of the m edges in both directions (2m CSR entries).
    Candidates are drawn in rounds until m distinct pairs exist; the m kept are those with
    the smallest hash of the pair itself, so every m-subset is equally likely.
    """
    n = _check_count("n", n)
    m = _check_count("m", m)
    seed = arguments.seed(seed)
    possible = n * (n - 1) if directed else n * (n - 1) // 2
    if m > possible:
        raise ValueError(f"m={m} exceeds the {possible} possible edges on n={n} vertices")
    if n * n > 2**63 - 1:
        # Pair ids u * n + v wrap in int64: gnm(2**40, 1) reported "edge 0 has a negative
        # vertex id" from the wrapped pair.
        raise ValueError(f"n={n}: gnm supports n * n < 2**63 (pair ids are int64)")
    side, xp = _side(device, "gnm")
    _check_fits(side, "gnm", f"{n} vertices and {m} edges", 16 * (n + 1) + 64 * m)
    with backend.gpu_memory_guard(f"gnm(n={n}, m={m})"):
        if n * n <= 1 << 26 and 3 * m >= possible:
            pairs = _all_pairs(xp, n, directed)
        else:
            pairs = _sampled_pairs(xp, n, m, seed, directed)
        priority = hash_uniform_bits(xp, seed, _STREAM_GNM_PRIORITY, pairs)
        chosen = pairs[_smallest(xp, priority, m)]
        src, dst = chosen // max(n, 1), chosen % max(n, 1)
        return CSRGraph.from_edges(src, dst, n_vertices=n, symmetrize=not directed)


def _smallest(xp: Any, keys: Any, m: int) -> Any:
    """Positions of the ``m`` smallest ``keys``, in any order (from_edges sorts the edges).
    The keys are distinct (a bijective hash of distinct pair ids), so the set is the same
    whichever way it is found: on the host a partition, linear where a sort is not."""
    if xp is np and 0 < m < keys.size:
        return np.argpartition(keys, m - 1)[:m]
    return xp.argsort(keys)[:m]


def _all_pairs(xp: Any, n: int, directed: bool) -> Any:
    ids = xp.arange(n * n, dtype=xp.int64)
    u, v = ids // max(n, 1), ids % max(n, 1)
    return ids[(u != v) if directed else (u < v)]


def _sampled_pairs(xp: Any, n: int, m: int, seed: int, directed: bool) -> Any:
    """At least m distinct pair ids (u * n + v; u < v when undirected), sorted."""
    possible = n * (n - 1) if directed else n * (n - 1) // 2
    pairs = xp.zeros(0, dtype=xp.int64)
    round_no = 0
    while pairs.size < m:
        missing = m - pairs.size
        # expect a fraction (possible - have) / possible of draws to be new
        fresh = (possible - pairs.size) / possible
        draws = int(missing / max(fresh, 1e-3) * 1.1) + 64
        index = xp.arange(draws, dtype=xp.int64)
        u_bits = hash_uniform_bits(xp, seed, _STREAM_GNM_ROUNDS + 2 * round_no, index)
        v_bits = hash_uniform_bits(xp, seed, _STREAM_GNM_ROUNDS + 2 * round_no + 1, index)
        u = (u_bits % xp.uint64(n)).astype(xp.int64)
        v = (v_bits % xp.uint64(n)).astype(xp.int64)
        keep = u != v
        u, v = u[keep], v[keep]
        if not directed:
            u, v = xp.minimum(u, v), xp.maximum(u, v)
        pairs = sorted_unique(xp.concatenate([pairs, u * n + v]))
        round_no += 1
    return pairs


# --------------------------------------------------------------------------- grids
def grid2d(nx: int, ny: int, *, device: str = "auto") -> CSRGraph:
    """5-point grid: vertex ``x + nx * y``, edges to the 4 axis neighbours (both directions).

    It has ``2 * ((nx - 1) * ny + nx * (ny - 1))`` CSR entries.
    """
    return _grid((_check_count("nx", nx), _check_count("ny", ny)), device, "grid2d")


def grid3d(nx: int, ny: int, nz: int, *, device: str = "auto") -> CSRGraph:
    """7-point grid: vertex ``x + nx * (y + ny * z)``, edges to the 6 axis neighbours."""
    dims = (_check_count("nx", nx), _check_count("ny", ny), _check_count("nz", nz))
    return _grid(dims, device, "grid3d")


def _grid(dims: tuple[int, ...], device: str, who: str) -> CSRGraph:
    side, xp = _side(device, who)
    n = math.prod(dims)
    # ids, the 2 * len(dims) neighbour entries per vertex and their sort keys
    _check_fits(side, who, f"a grid of {n} vertices", 8 * n * (2 + 8 * len(dims)))
    ids = xp.arange(n, dtype=xp.int64)
    src_parts, dst_parts = [], []
    stride = 1
    for extent in dims:
        coordinate = (ids // stride) % max(extent, 1)
        has_next = coordinate < extent - 1
        src_parts.append(ids[has_next])
        dst_parts.append(ids[has_next] + stride)
        stride *= extent
    src = xp.concatenate(src_parts) if src_parts else ids[:0]
    dst = xp.concatenate(dst_parts) if dst_parts else ids[:0]
    return CSRGraph.from_edges(src, dst, n_vertices=n, symmetrize=True)


# --------------------------------------------------------------------------- geometric
def random_points(n: int, *, seed: int = 0, device: str = "auto") -> tuple[Any, Any]:
    """``n`` uniform points in the unit square as (x, y) float64 arrays on ``device``'s side."""
    n = _check_count("n", n)
    seed = arguments.seed(seed)
    side, xp = _side(device, "random_points")
    _check_fits(side, "random_points", f"{n} points", 32 * n)  # index, bits, x, y
    index = xp.arange(n, dtype=xp.int64)
    x = _unit_floats(xp, hash_uniform_bits(xp, seed, _STREAM_POINT_X, index))
    y = _unit_floats(xp, hash_uniform_bits(xp, seed, _STREAM_POINT_Y, index))
    return x, y


def random_geometric(
    n: int,
    *,
    radius: float | None = None,
    avg_degree: float | None = None,
    seed: int = 0,
    device: str = "auto",
    return_points: bool = False,
) -> Any:
    """Random geometric graph: ``random_points(n, seed)`` joined when closer than ``radius``.

    Give ``radius`` or ``avg_degree`` (radius = sqrt(avg_degree / (pi n)); default
    avg_degree 8). Cell binning keeps it near-linear. With ``return_points`` returns
    (graph, x, y).
    """
    n = _check_count("n", n)
    if radius is not None and avg_degree is not None:
        raise ValueError("give radius or avg_degree, not both")
    if radius is None:
        # named here: a NaN avg_degree was reported as "radius must be >= 0, got nan"
        avg_degree = 8.0 if avg_degree is None else arguments.real(avg_degree, "avg_degree")
        if avg_degree < 0:
            raise ValueError(f"avg_degree must be >= 0, got {avg_degree}")
        radius = math.sqrt(avg_degree / (math.pi * max(n, 1)))
    radius = arguments.real(radius, "radius")
    if not radius >= 0:
        raise ValueError(f"radius must be >= 0, got {radius}")
    side, xp = _side(device, "random_geometric")
    x, y = random_points(n, seed=seed, device=side)
    with backend.gpu_memory_guard(f"random_geometric(n={n}, radius={radius:.3g})"):
        src, dst = _close_pairs(xp, x, y, radius)
        graph = CSRGraph.from_edges(src, dst, n_vertices=n, symmetrize=True)
    return (graph, x, y) if return_points else graph


def _close_pairs(xp: Any, x: Any, y: Any, radius: float) -> tuple[Any, Any]:
    """Pairs i < j with distance < radius, by binning into cells of side >= radius."""
    n = x.size
    if n < 2 or radius <= 0:
        return xp.zeros(0, dtype=xp.int64), xp.zeros(0, dtype=xp.int64)
    # cells no narrower than the radius, and not (many) more of them than points
    per_radius = int(1.0 / radius) if radius > 2.0**-15 else 1 << 15
    cells = max(1, min(per_radius, 1 << 15, math.isqrt(n) + 1))
    cx = xp.minimum((x * cells).astype(xp.int64), cells - 1)
    cy = xp.minimum((y * cells).astype(xp.int64), cells - 1)
    cell = cy * cells + cx
    by_cell = xp.argsort(cell)
    starts = xp.searchsorted(cell[by_cell], xp.arange(cells * cells + 1, dtype=xp.int64))
    r2 = radius * radius
    src_parts, dst_parts = [], []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            ncx, ncy = cx + dx, cy + dy
            inside = (ncx >= 0) & (ncx < cells) & (ncy >= 0) & (ncy < cells)
            neighbour = xp.where(inside, ncy * cells + ncx, 0)
            first = starts[neighbour]
            counts = xp.where(inside, starts[neighbour + 1] - first, 0)
            owner, rank = expand_counts(xp, counts)
            i = owner
            j = by_cell[first[owner] + rank]
            ddx = x[i] - x[j]
            ddy = y[i] - y[j]
            close = (i < j) & (ddx * ddx + ddy * ddy < r2)
            src_parts.append(i[close])
            dst_parts.append(j[close])
    return xp.concatenate(src_parts), xp.concatenate(dst_parts)


def delaunay_graph(
    n_points: int, *, seed: int = 0, device: str = "auto", return_points: bool = False
) -> Any:
    """Edges of the Delaunay triangulation of ``random_points(n_points, seed)``, both
    directions. With ``return_points`` returns (graph, x, y).

    The triangulation runs on the host (the ``triangle`` package when installed, about
    6x faster than scipy.spatial.Delaunay at 2**18 points, else SciPy); the graph is then
    moved to ``device``'s side.
    """
    n_points = _check_count("n_points", n_points)
    side, xp = _side(device, "delaunay_graph")
    x, y = random_points(n_points, seed=seed, device="cpu")
    triangles = _triangulate(x, y)
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    src = np.concatenate([a, b, c]).astype(np.int64)
    dst = np.concatenate([b, c, a]).astype(np.int64)
    if side == "gpu":
        src, dst = backend.to_side(src, "gpu"), backend.to_side(dst, "gpu")
    graph = CSRGraph.from_edges(
        src, dst, n_vertices=n_points, symmetrize=True, merge_duplicates="first"
    )
    if return_points:
        return graph, backend.to_side(x, side), backend.to_side(y, side)  # type: ignore[arg-type]
    return graph


def _triangulate(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Triangles (k, 3) of the Delaunay triangulation; empty below 3 points."""
    if x.size < 3:
        return np.zeros((0, 3), dtype=np.int64)
    points = np.column_stack([x, y])
    try:
        import triangle  # noqa: PLC0415
    except ImportError:
        triangle = None
    if triangle is not None:
        return np.asarray(triangle.triangulate({"vertices": points}, "Q")["triangles"])
    from scipy.spatial import Delaunay  # noqa: PLC0415

    return np.asarray(Delaunay(points).simplices)


# --------------------------------------------------------------------------- weights
def random_weights(
    graph: CSRGraph, rule: str = "uniform", *, seed: int = 0, low: float = 0.0, high: float = 1.0
) -> CSRGraph:
    """The graph with seeded edge weights; (u, v) and (v, u) get the same weight.

    ``rule="uniform"``: float64 in [low, high); ``rule="integer"``: int32 in [low, high).
    The weight is a hash of the unordered pair, so it is the same on CPU and GPU and does
    not depend on the order of the edges.
    """
    graph = CSRGraph.coerce(graph)
    seed = arguments.seed(seed)
    low, high = arguments.real(low, "low"), arguments.real(high, "high")
    if not (math.isfinite(low) and math.isfinite(high)):
        # high=inf made every weight inf or NaN (inf * 0), silently
        raise ValueError(f"low and high must be finite, got low={low}, high={high}")
    if not high > low:
        raise ValueError(f"high must exceed low, got low={low}, high={high}")
    xp = graph.xp
    src = graph.edge_sources().astype(xp.int64)
    dst = graph.indices.astype(xp.int64)
    pair = xp.minimum(src, dst) * max(graph.n_vertices, 1) + xp.maximum(src, dst)
    bits = hash_uniform_bits(xp, seed, _STREAM_WEIGHTS, pair)
    if rule == "uniform":
        weights = low + (high - low) * _unit_floats(xp, bits)
    elif rule == "integer":
        lo, hi = int(math.ceil(low)), int(math.ceil(high))
        if hi <= lo or lo < -(2**31) or hi > 2**31:
            raise ValueError(
                f"integer weights need int32 bounds with high > low, got {low}, {high}"
            )
        weights = (lo + (bits % xp.uint64(hi - lo)).astype(xp.int64)).astype(xp.int32)
    else:
        raise ValueError(f"rule must be 'uniform' or 'integer', got {rule!r}")
    return graph.with_weights(weights)
