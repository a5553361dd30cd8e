"""Sparse matrices converted once: the cache behind :func:`morphgpu.csr.validate_graph`.

Every wing takes SciPy and CuPy sparse matrices through ``validate_graph``, which builds a
:class:`~morphgpu.csr.CSRGraph` from them (CSC and COO to CSR, duplicates summed, index
widths chosen). Per-graph state hangs off that object (the BFS workspace: degree
statistics, the reverse graph, ELL rows, relabelled copies), so a new graph on every call
would rebuild it on every call. This module keeps, per matrix object, the graph built from
it, and hands the same object back while the matrix is unchanged.

The rule (also in the user docs, :doc:`/api/graphs`):

- **What is cached.** CSR, CSC and COO matrices (SciPy ``*_matrix``/``*_array`` and
  ``cupyx.scipy.sparse``), without a size cut-off. Other formats (LIL, DOK, DIA, BSR) are
  converted on every call. The matrix is held weakly: when it is freed, its graph (and the
  GPU memory that graph and its workspaces hold) is freed with it.
- **Replaced arrays and changed shapes are seen.** A call compares the matrix's shape,
  format, canonical-format flag and, for each array the graph was built from, the array
  object, its data pointer, shape, strides and dtype. SciPy operations that change the
  structure by replacing arrays (``m[i, j] = x`` on a new entry, ``setdiag``, growing
  ``resize``, ``m.indices = ...``) therefore get a fresh graph on the next call.
- **In-place writes are refused (SciPy) or detected (CuPy).** While a SciPy matrix is
  cached, its index arrays (``indptr`` and ``indices``; COO's ``row`` and ``col``) are
  read-only, and so is ``data`` unless the graph uses the matrix's own ``data`` array (a
  canonical CSR matrix): then writes to ``data`` are seen at once and ``data`` stays
  writeable. An in-place write to a read-only array, by hand or by a SciPy method that
  works in place (``sort_indices``, ``sum_duplicates``, ``eliminate_zeros``, ``m *= 2``,
  shrinking ``resize``), raises NumPy's ``ValueError: ... read-only``. (SciPy's shrinking
  ``resize`` fails half-way and leaves the matrix inconsistent: forget the matrix first.)
  :func:`forget` drops the matrix from the cache and makes writeable again the arrays this
  cache made read-only (not those that were read-only already). Matrices whose arrays are
  views of other arrays are not cached (NumPy could not refuse writes through the other
  array), and neither can NumPy refuse writes through a view taken before the call. CuPy
  arrays cannot be made read-only: every call fingerprints the same arrays on the GPU (one
  launch reading them, its result written to the host by the kernel; see
  ``kernels/fingerprint.cu``) and rebuilds the graph when the fingerprint changed. Any one
  changed 8-byte word always changes it; several changes cancel with a chance of about
  2**-64. A caller that passes ``pending`` (``bfs`` and the minimum spanning tree do) gets
  the fingerprints computed on a side stream, behind an event marking the matrix as its
  stream has it, queues its own work beside them and checks them after with
  :func:`confirm`, redoing the work on a rebuilt graph if the matrix changed: the GPU
  never waits for the host between the two. ``bfs``'s prepared searches (direction.cu)
  run the check themselves, where the kernel starts (:func:`check_inside`,
  ``mg::fingerprint_run``): no launch of its own, and the host waits for the verdict the
  kernel publishes to page-locked memory, not for the search. The pass reads the whole
  matrix at memory speed (about 4 TB/s on an H200): on a graph searched in less time than
  that read, the check is most of a call's extra cost.
- **Per device.** A CuPy matrix's graph lives on the matrix's device. The GPU copy of a
  SciPy matrix's graph (:func:`structure_on`, which BFS uses) is kept per CUDA device.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import backend, kernels

_INDEX_ARRAYS = {"csr": ("indptr", "indices"), "csc": ("indptr", "indices"),
                 "coo": ("row", "col")}

FINGERPRINT_FILE = "kernels/fingerprint.cu"
FINGERPRINT_BLOCK = 256
FINGERPRINT_STEP = 4 * FINGERPRINT_BLOCK  # words a block reads per step (FP_UNROLL, .cuh)
_WEYL = np.uint64(0x9E3779B97F4A7C15)


def _array_state(a: Any) -> tuple[Any, ...]:
    """What a replaced or reshaped array changes (the object is compared separately)."""
    ptr = a.data.ptr if backend.is_cupy_array(a) else a.__array_interface__["data"][0]
    return (ptr, a.shape, a.strides, a.dtype)


def _flag(matrix: Any) -> Any:
    try:
        return bool(matrix.has_canonical_format)
    except (AttributeError, TypeError):
        return None


@dataclass(eq=False)
class _Entry:
    arrays: tuple[Any, ...]  # the guarded arrays (strong: identity must not be reused)
    states: tuple[tuple[Any, ...], ...]
    head: tuple[Any, ...]  # type, format, shape, canonical flag
    graphs: dict[bool, Any]  # directed -> CSRGraph
    frozen: list[Any] = field(default_factory=list)  # NumPy arrays this cache made read-only
    fingerprint: tuple[int, ...] | None = None  # CuPy: the guarded arrays' fingerprints
    ref: Any = None  # weakref to the matrix, whose callback drops the entry
    probe: Any = None  # CuPy: the check's launches and buffers, made once (_Probe)


_entries: dict[int, _Entry] = {}
# The graphs this cache made, and their copies on other sides/devices (structure_on).
_copies: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()
# How many live entries hold each NumPy array read-only: id -> [weakref, count].
_freezes: dict[int, list[Any]] = {}


def _head(matrix: Any) -> tuple[Any, ...]:
    return (type(matrix), matrix.format, tuple(matrix.shape), _flag(matrix))


def _guarded(matrix: Any, data_live: bool) -> tuple[Any, ...]:
    names = _INDEX_ARRAYS[matrix.format] + (() if data_live else ("data",))
    return tuple(getattr(matrix, name) for name in names)


def cacheable(matrix: Any) -> bool:
    """Whether :func:`graph_of` keeps the graph of ``matrix`` (see the module's rule)."""
    if getattr(matrix, "format", None) not in _INDEX_ARRAYS:
        return False
    if backend.is_cupy_sparse(matrix):
        return True
    if not backend.is_scipy_sparse(matrix):
        return False
    return all(_chain(a) is not None for a in _guarded(matrix, data_live=False))


def _chain(a: Any) -> list[np.ndarray] | None:
    """``a`` and the arrays it is a view of, down to the one owning the memory; None when
    that memory belongs to something NumPy cannot make read-only (then no caching)."""
    chain = []
    while isinstance(a, np.ndarray):
        chain.append(a)
        if a.flags.owndata:
            return chain
        a = a.base
    return None


def _matches(entry: _Entry, matrix: Any) -> bool:
    if entry.head != _head(matrix):
        return False
    names = _INDEX_ARRAYS[matrix.format] + ("data",)
    current = tuple(getattr(matrix, name) for name in names[:len(entry.arrays)])
    if not all(a is b and _array_state(b) == s
               for a, b, s in zip(entry.arrays, current, entry.states)):
        return False
    # A guarded NumPy array (or the array it views) found writeable, made so by hand or
    # read-only before the cache saw it and made writeable since, may have been written.
    return all(not v.flags.writeable
               for a in entry.arrays if isinstance(a, np.ndarray) for v in _chain(a) or ())


def graph_of(matrix: Any, directed: bool, build: Any, pending: list | None = None) -> Any:
    """The CSRGraph of ``matrix``: the cached one while the matrix is unchanged, else
    ``build(matrix)`` (the conversion, which may raise) cached for the next call.

    ``pending``: a cached CuPy matrix's fingerprints are launched on a side stream and the
    check appended to the list, not read back here (see :func:`confirm`): the caller's
    work runs beside them, without the GPU waiting for the host."""
    if not cacheable(matrix):
        return build(matrix)
    key = id(matrix)
    entry = _entries.get(key)
    if entry is not None and _matches(entry, matrix):
        if entry.fingerprint is not None:
            if pending is not None:
                pending.append(_check_beside(key, entry))
                return _directed(entry, directed)
            if fingerprint(entry.arrays) != entry.fingerprint:
                entry = None
            else:
                return _directed(entry, directed)
        else:
            return _directed(entry, directed)
    _drop(key)
    graph = build(matrix)
    data_live = matrix.format == "csr" and graph.weights is matrix.data
    arrays = _guarded(matrix, data_live)
    entry = _Entry(arrays, tuple(_array_state(a) for a in arrays), _head(matrix),
                   {graph.directed: graph})
    if backend.is_cupy_sparse(matrix):
        entry.fingerprint = fingerprint(arrays)
    else:
        for a in arrays:
            for v in reversed(_chain(a) or []):  # the owner first, then its views
                _freeze(v, entry)
    entry.ref = weakref.ref(matrix, lambda _r, key=key: _drop(key))
    _entries[key] = entry
    _copies[graph] = {}
    return graph


def unchanged_cupy_graph(matrix: Any, directed: bool = True) -> Any:
    """The graph :func:`graph_of` would hand out for ``matrix`` if it is a cached CuPy
    matrix that passes the host-side checks (shape, format, flags, the same arrays at the
    same addresses) and that graph exists; else None. The fingerprint check is the
    caller's to launch (:func:`check_inside`, else :func:`check_launch`) and to confirm
    after its launch. One dict lookup for anything not cached; the checks inline, since
    their host time comes before the caller's launch (H200: 1.4-3.4 us against 4.7-8.0)."""
    entry = _entries.get(id(matrix))
    if entry is None or entry.fingerprint is None:
        return None
    head = entry.head
    if (type(matrix) is not head[0] or matrix.shape != head[2]
            or bool(matrix.has_canonical_format) != head[3]):
        return None
    for a, name, state in zip(entry.arrays, _INDEX_ARRAYS[head[1]] + ("data",),
                              entry.states):
        b = getattr(matrix, name)
        if (b is not a or b.data.ptr != state[0] or b.shape != state[1]
                or b.strides != state[2] or b.dtype != state[3]):
            return None
    return entry.graphs.get(directed)


def check_launch(matrix: Any) -> list:
    """The fingerprint check of a matrix :func:`unchanged_cupy_graph` just answered for,
    launched beside the caller's stream: a ``pending`` list for :func:`confirm`. (Queued
    behind the search on the caller's stream instead, the host waited for the whole search:
    H200, Kronecker 14, 68.7 us per bfs() call against 59.9 beside; s37 run 2.)"""
    key = id(matrix)
    return [_check_beside(key, _entries[key])]


def check_inside(matrix: Any) -> Any:
    """The fingerprint check of a matrix :func:`unchanged_cupy_graph` just answered for,
    for a caller whose kernel runs it (``mg::fingerprint_run``,
    include/morphgpu/fingerprint.cuh): the check object, whose
    ``arguments()`` are the kernel's two parameters, to pass to :func:`confirm` in a list
    after the launch; :func:`confirm` then waits for the kernel's published answer (the
    first phase of the search), not for the search. None where the prepared check cannot
    be used this way (an index array is an offset view, copied at every check; or a check
    of the matrix is still unconfirmed): then :func:`check_launch`."""
    key = id(matrix)
    entry = _entries[key]
    probe = _probe_for(entry)
    if probe.busy or probe.copied:
        return None
    probe.busy = True
    probe.seq += 1
    check = _Check(key, entry, None, None, probe, probe.seq)
    probe.holder = weakref.ref(check)
    return check


def _directed(entry: _Entry, directed: bool) -> Any:
    g = entry.graphs.get(directed)
    if g is None:
        base = next(iter(entry.graphs.values()))
        g = type(base)(base.indptr, base.indices, base.weights, base.n_vertices, directed)
        entry.graphs[directed] = g
        _copies[g] = {}
    return g


def _freeze(a: np.ndarray, entry: _Entry) -> None:
    slot = _freezes.get(id(a))
    if slot is None or slot[0]() is not a:
        if not a.flags.writeable:
            return  # read-only already: not ours to make writeable later
        a.flags.writeable = False
        key = id(a)
        slot = [weakref.ref(a, lambda _r: _freezes.pop(key, None)), 0]
        _freezes[key] = slot
    slot[1] += 1
    entry.frozen.append(a)


def _thaw(a: np.ndarray) -> None:
    slot = _freezes.get(id(a))
    if slot is None or slot[0]() is not a:
        return
    slot[1] -= 1
    if slot[1] <= 0:
        del _freezes[id(a)]
        try:
            a.flags.writeable = True
        except ValueError:  # a view of an array another entry still holds read-only
            pass


def _drop(key: int) -> None:
    entry = _entries.pop(key, None)
    if entry is not None:
        for a in entry.frozen:  # an owner before its views (NumPy's order for writeable)
            _thaw(a)
        entry.frozen.clear()


def forget(matrix: Any = None) -> None:
    """Drop ``matrix`` from the graph cache (every matrix when None).

    The arrays the cache made read-only become writeable again (arrays that were read-only
    before stay so), and the cached graph, its GPU copies and workspaces are freed once
    nothing else holds them. Forgetting a matrix that is not cached does nothing.
    """
    if matrix is None:
        for key in list(_entries):
            _drop(key)
        return
    entry = _entries.get(id(matrix))
    if entry is not None and entry.ref() is matrix:
        _drop(id(matrix))


def cached(matrix: Any) -> bool:
    """Whether ``matrix`` has a graph in the cache (it may still be found stale)."""
    entry = _entries.get(id(matrix))
    return entry is not None and entry.ref() is matrix


def structure_on(g: Any, side: str, *, only_cached: bool = False) -> Any:
    """``g``'s structure (indptr, indices; no weights) on ``side``.

    For a graph this cache made from a matrix, the copy is kept per CUDA device while the
    matrix's entry lives, so repeated GPU searches on a SciPy matrix reuse one GPU graph
    (and its workspace). Other graphs are copied by :meth:`CSRGraph.to` each call, or,
    with ``only_cached``, not at all (None: the caller copies what it needs).
    """
    if side == g.side:
        return g
    copies = _copies.get(g)
    if copies is None:
        return None if only_cached else g.to(side)
    where = (side, backend.current_device_id() if side == "gpu" else None)
    copy = copies.get(where)
    if copy is None:
        copy = type(g)(backend.to_side(g.indptr, side), backend.to_side(g.indices, side),  # type: ignore[arg-type]
                       None, g.n_vertices, g.directed)
        copies[where] = copy
    return copy


# ------------------------------------------------------------------ fingerprints
def fingerprint_host(a: Any) -> int:
    """The NumPy twin of ``kernels/fingerprint.cu`` on one array (the tests compare)."""
    raw = np.ascontiguousarray(backend.to_host(a)).view(np.uint8).ravel()
    pad = (-raw.size) % 8
    if pad:
        raw = np.concatenate([raw, np.zeros(pad, dtype=np.uint8)])
    words = raw.view("<u8")
    from .hashing import mix64  # noqa: PLC0415

    with np.errstate(over="ignore"):
        terms = mix64(words + np.arange(words.size, dtype=np.uint64) * _WEYL)
    return int(terms.sum(dtype=np.uint64))


@dataclass(eq=False)
class _Check:
    """A cached CuPy matrix's fingerprint check that :func:`graph_of` handed out: the
    fingerprints of the matrix as the caller's stream had it then, computed on a side
    stream so that the caller's work runs beside them instead of behind them."""

    key: int
    entry: _Entry
    on_device: Any  # uint64 per guarded array
    stream: Any  # the stream they are computed on: a side stream, or the caller's
    probe: Any = None  # the entry's _Probe whose buffers these are (busy until confirmed)
    seq: int = 0  # run inside a caller's kernel (check_inside): the number it publishes

    def arguments(self) -> tuple[int, int]:
        """(the device address of the probe's FingerprintCheck, the sequence number): the
        two kernel parameters of a check run inside the caller's kernel."""
        return self.probe.layout.data.ptr, self.seq


class _Probe:
    """One cached CuPy matrix's check, prepared once on its device: an event, the packed
    launch of kernels/fingerprint.cu's fingerprint_check over the guarded arrays, its
    accumulators (zero between checks: the launch resets them), and its outputs on the
    device and in page-locked host memory, which the kernel writes directly (under CUDA's
    unified addressing a page-locked allocation is a device address too). One launch per
    check where there were four (zeroing the output, a launch per array, the copy back),
    and none through CuPy's argument conversion (direct_launch). One check at a time uses
    it (``busy`` from the launch until :func:`confirm`, or until the check object is gone
    unconfirmed, as when the caller raised in between: a later check, queued behind it on
    the same side stream, may then reuse the buffers); a second, overlapping one takes the
    unprepared path. ``layout`` is the same check as a kernel's ``mg::FingerprintCheck``
    (with the cached fingerprints, for a search kernel that runs the check itself and
    publishes only a verdict word: :func:`check_inside`)."""

    ARRAYS = 3  # fingerprint_check's array slots: CSR/CSC indptr, indices, data; COO row, col, data

    def __init__(self, arrays: tuple[Any, ...], device_id: int,
                 expected: tuple[int, ...]) -> None:
        from . import direct_launch  # noqa: PLC0415

        cp = backend.cupy_module()
        k = len(arrays)
        if k > self.ARRAYS:
            raise ValueError(f"a check covers at most {self.ARRAYS} arrays, got {k}")
        self.device_id = device_id
        self.busy = False
        self.holder: Any = None  # weakref to the _Check using the buffers while busy
        self.ready = cp.cuda.Event(disable_timing=True)
        self.accum = cp.zeros(k, dtype=cp.uint64)
        self.blocks_done = cp.zeros(1, dtype=cp.uint32)
        self.out = cp.zeros(k, dtype=cp.uint64)
        # k fingerprints, then the word a check run inside a caller's kernel publishes
        self._pinned = cp.cuda.alloc_pinned_memory(8 * (k + 1))
        self.host = np.frombuffer(self._pinned, dtype=np.uint64, count=k)
        self.published = np.frombuffer(self._pinned, dtype=np.uint64, count=k + 1)
        self.seq = 0
        sms = backend.gpu_properties(device_id)["multiprocessors"]
        # (an offset or strided view is copied at every check: its content is the check)
        self.copied = [j for j, a in enumerate(arrays)
                       if not a.flags.c_contiguous or a.data.ptr % 8]
        values: dict[str, Any] = {"n_arrays": np.int32(k), "accum": self.accum,
                                  "blocks_done": self.blocks_done, "out": self.out,
                                  "host_out": np.uint64(self._pinned.ptr)}
        for j in range(self.ARRAYS):
            a = arrays[j] if j < k and j not in self.copied else None
            values[f"a{j}"] = a
            values[f"n{j}"] = np.uint64(arrays[j].nbytes if j < k else 0)
        # mg::FingerprintCheck (fingerprint.cuh) for a kernel that runs the check itself
        words = [0] * 13
        for j, a in enumerate(arrays):
            words[j], words[3 + j] = int(a.data.ptr), int(a.nbytes)
        words[6:10] = [k, int(self.accum.data.ptr), int(self.blocks_done.data.ptr),
                       int(self._pinned.ptr)]
        words[10:10 + k] = expected
        self.layout = cp.asarray(np.array(words, dtype=np.uint64))
        self.grid = _fingerprint_grid(max((int(a.nbytes) for a in arrays), default=0), sms)
        self.pack = direct_launch.PackedLaunch(
            _check_kernel(), ("a0", "n0", "a1", "n1", "a2", "n2", "n_arrays", "accum",
                              "blocks_done", "out", "host_out"), values, cooperative=False)

    def launch(self, arrays: tuple[Any, ...], stream: Any) -> None:
        """On ``stream`` (current): the check's one launch."""
        del stream  # current: the launch goes to it
        self.busy = True
        copies = {f"a{j}": arrays[j].copy() for j in self.copied}  # aligned, contiguous
        self.pack.launch(self.grid, FINGERPRINT_BLOCK, **copies)


def _probe_for(entry: _Entry) -> _Probe:
    """The entry's prepared check on the current device (made on first use there), its
    ``busy`` flag cleared if the check holding it was dropped unconfirmed."""
    device_id = backend.current_device_id()
    probe = entry.probe
    if probe is None or probe.device_id != device_id:
        probe = entry.probe = _Probe(entry.arrays, device_id, entry.fingerprint)
    if probe.busy and probe.holder is not None and probe.holder() is None:
        probe.busy = False  # its check was dropped unconfirmed (the caller raised)
    return probe


def _check_beside(key: int, entry: _Entry) -> _Check:
    cp = backend.cupy_module()
    stream = _side_stream(backend.current_device_id())
    probe = _probe_for(entry)
    if probe.busy:  # a check of this entry not yet confirmed: one of its own
        ready = cp.cuda.Event(disable_timing=True)
        ready.record()  # the matrix as the caller's stream has it now
        stream.wait_event(ready)
        with stream:
            return _Check(key, entry, fingerprint_on_device(entry.arrays), stream)
    probe.ready.record()  # the matrix as the caller's stream has it now
    stream.wait_event(probe.ready)
    with stream:
        probe.launch(entry.arrays, stream)
    check = _Check(key, entry, probe.out, stream, probe)
    probe.holder = weakref.ref(check)
    return check


@functools.cache
def _side_stream(device_id: int) -> Any:
    # One per device (functools.cache: the caller has made the device current).
    return backend.cupy_module().cuda.Stream(non_blocking=True)


def fingerprints(pending: list) -> list[Any]:
    """The pending checks' fingerprints as device arrays, for a caller that reads them on
    its own stream instead of through :func:`confirm`: the current stream waits for them."""
    cp = backend.cupy_module()
    for check in pending:
        done = cp.cuda.Event(disable_timing=True)
        done.record(check.stream)
        cp.cuda.get_current_stream().wait_event(done)
    return [check.on_device for check in pending]


def confirm(pending: list, values: list | None = None) -> bool:
    """Whether every graph that :func:`graph_of` handed out with ``pending`` was still its
    matrix's. ``values``: the fingerprints of each pending item, already read back with
    something else (see :func:`fingerprints`); else they are read back here, one read. A
    stale entry is dropped, so validating the matrix again builds its graph afresh."""
    fresh = True
    for i, check in enumerate(pending):
        if values is not None:
            changed = _differs(values[i], check)
        elif check.seq:
            changed = _published(check)
        elif check.probe is not None:
            check.stream.synchronize()  # the kernel wrote the host copy itself
            changed = _differs(check.probe.host, check)
        else:
            changed = _differs(check.on_device.get(stream=check.stream), check)
        if check.probe is not None:
            check.probe.busy = False
        if changed:
            fresh = False
            if _entries.get(check.key) is check.entry:
                _drop(check.key)
    pending.clear()
    return fresh


def _differs(found: Any, check: _Check) -> bool:
    return tuple(int(x) for x in found) != check.entry.fingerprint


# Reads of the page-locked sequence word before confirm gives up spinning and waits for
# the stream (a kernel queued behind long work, or one that failed): a few milliseconds.
_SPINS = 20000


def _published(check: _Check) -> bool:
    """Whether a caller's kernel found the matrix changed in ``check`` (mg::fingerprint_run
    publishes one page-locked word, seq * 2 plus 1 if any fingerprint differs); True too
    if the stream ran dry without it (then confirm rebuilds the graph)."""
    probe = check.probe
    words, k, seq = probe.published, len(probe.host), check.seq
    for _ in range(_SPINS):
        word = int(words[k])
        if word >> 1 == seq:
            return bool(word & 1)
    backend.cupy_module().cuda.get_current_stream().synchronize()  # raises a kernel's error
    word = int(words[k])
    return word >> 1 != seq or bool(word & 1)


def fingerprint(arrays: tuple[Any, ...]) -> tuple[int, ...]:
    """Each CuPy array's fingerprint, by one launch per array and one read back."""
    return tuple(int(x) for x in fingerprint_on_device(arrays).get())


@functools.cache
def _check_kernel() -> Any:
    return kernels.get_kernel(FINGERPRINT_FILE, "fingerprint_check")


@functools.cache
def _fingerprint_kernel() -> Any:
    # One RawKernel object, which keeps its function per device: get_kernel makes a new
    # one each call, whose first launch looks the function up again.
    return kernels.get_kernel(FINGERPRINT_FILE, "fingerprint_bytes")


def fingerprint_on_device(arrays: tuple[Any, ...], blocks_per_sm: int = 8) -> Any:
    """Each CuPy array's fingerprint into a uint64 device array, one launch per array and
    nothing read back."""
    cp = backend.cupy_module()
    kernel = _fingerprint_kernel()
    out = cp.zeros(len(arrays), dtype=cp.uint64)
    sms = backend.gpu_properties(backend.current_device_id())["multiprocessors"]
    for j, a in enumerate(arrays):
        if not a.flags.c_contiguous or a.data.ptr % 8:
            a = a.copy()  # an aligned, contiguous copy (rare: offset views)
        grid = _fingerprint_grid(a.nbytes, sms, blocks_per_sm)
        # (a slot index, not a view of `out`: a CuPy view costs a few microseconds)
        kernel((grid,), (FINGERPRINT_BLOCK,), (a, np.uint64(a.nbytes), out, np.int32(j)))
    return out


def _fingerprint_grid(nbytes: int, sms: int, blocks_per_sm: int = 8) -> int:
    """Blocks of a fingerprint launch over ``nbytes``: one per step of words, at most
    ``blocks_per_sm`` per SM (the sum does not depend on the grid)."""
    words = -(-nbytes // 8)
    return max(1, min(-(-words // FINGERPRINT_STEP), blocks_per_sm * sms))
