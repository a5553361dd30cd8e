"""How the parts of a partitioned BFS talk: one protocol, three engines behind it.

A partitioned search (:mod:`morphgpu.bfs.partitioned`) runs the same level loops whatever
carries its messages. The top-down message levels (any graph) need two collectives a
level; the bitmap levels of undirected graphs (:mod:`morphgpu.bfs.bitmap_levels`) two of
sizes fixed before the search; both end with one join:

- :meth:`Exchange.all_gather_rows`: every part's small row of counts (what it sends to each
  part, what it found locally) gathered on every part, as a host ``(P, K)`` int64 table.
  The receive sizes of the next step and the stop test (a zero total) both come from it,
  so it is also the loop's all-reduce. (A process that drives every part stacks the rows
  it holds: no collective.)
- :meth:`Exchange.all_to_all`: variable-size (vertex, parent) buffers from every part to
  every owner, sizes taken from that table.
- :meth:`Exchange.all_sum`: arrays summed element-wise over the parts, into each part's
  receive array (a count row; a frontier bitmap, whose sum is an OR because each bit has
  one owner).
- :meth:`Exchange.swap_slices`: each part's n-bit candidate map (or, once after the
  search, its n-entry array of parents), cut by owner (the words or the vertices of the
  owner's range), to the owners: fixed sizes, known from the partition.
- :meth:`Exchange.join`: the parts' label arrays joined in part order (on the device
  in-process, on the first GPU over NCCL, on the host under MPI).

Engines:

- :class:`InProcessExchange`: P parts in one process on one device (NumPy or CuPy
  arrays); messages are handed over by reference.
- :class:`NcclExchange`: one process driving several GPUs, one NCCL communicator per GPU
  (``NcclCommunicator.initAll``); grouped send/recv, allGather and allReduce.
- :class:`MpiNcclExchange`: one process per GPU started by ``mpirun``; the NCCL unique id
  is broadcast with mpi4py, results gathered with mpi4py.

NCCL is driven through a small array-level adapter (:class:`NcclComm`: ``send``,
``recv``, ``all_gather``, ``all_reduce_sum``, ``mark``, ``done``, ``abort``) and a
*world* (``group_start``, ``group_end``); :class:`LoopbackWorld` implements both on
NumPy arrays in one process
(threads standing in for MPI ranks), so the NCCL and MPI exchanges' logic is tested
without NCCL, MPI or a GPU.

Bounded waits: the host polls each communicator's completion (a CUDA event recorded
behind the collective) against a deadline (``timeout`` seconds), after the collective or,
for ``all_to_all``, ``all_sum`` and ``swap_slices``, at the loop's next wait (the parts'
next kernels are queued behind them first); past it, every local communicator is
aborted and :class:`ExchangeTimeout` is raised. A rank
whose peer died therefore raises instead of hanging in the level loop. Not covered: a hang
inside NCCL's own blocking calls (communicator creation, ``groupEnd`` where NCCL blocks on
connection setup), and MPI's bootstrap calls (``bcast`` of the unique id, the final
``allgather``), which wait as long as MPI does; a rank that raises calls
``MPI.COMM_WORLD.Abort`` from the ``mpirun`` entry point, which ends the others.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

import numpy as np

DEFAULT_TIMEOUT_S = 300.0  # a collective that has not completed by then is a failed peer
_POLL_S = 5e-5
_SPIN_S = 2e-3  # poll without sleeping this long first (a sleep costs 50-100 us)


class ExchangeError(RuntimeError):
    """A part of a partitioned search failed, or an exchange could not be set up."""


class ExchangeTimeout(ExchangeError):
    """A collective did not complete in time: a peer failed or stopped answering."""


Message = tuple[Any, Any]  # (vertices, parents or None), arrays of one length


class Exchange(Protocol):
    """What the level loop of :mod:`morphgpu.bfs.partitioned` needs of its transport."""

    n_parts: int
    local_parts: tuple[int, ...]  # the parts this process drives, in order
    copies_slices: bool  # swap_slices copies into staging rows (else views are read)

    def all_gather_rows(self, rows: Sequence[np.ndarray]) -> np.ndarray:
        """Rows (host int64, one per local part, equal lengths K) -> host ``(P, K)``."""
        ...

    def all_to_all(self, sends: Sequence[Sequence[Message]],
                   table: np.ndarray) -> list[list[Message]]:
        """``sends[i][dst]`` from local part i to part dst; ``table[src, dst]`` the
        lengths (host). Returns ``recv[i][src]`` for every local part i."""
        ...

    def all_sum(self, pairs: Sequence[Sequence[tuple[Any, Any]]]) -> None:
        """``pairs[i]``: (send, receive) arrays of local part i, on its device; each
        receive array gets the element-wise sum over the parts of that pair's sends
        (send and receive may be one array). Queued: the parts' next kernels follow."""
        ...

    def received_slices(self, arrays: Sequence[Any], stagings: Sequence[Any],
                        ranges: Sequence[tuple[int, int]]) -> list[list[Any]]:
        """Where each local part will find, after :meth:`swap_slices` of these arrays,
        the other parts' slices ``[a, b) = ranges[its part]`` of theirs, in part order:
        views of ``arrays`` (one device) or rows of its ``stagings`` array (``(P, b -
        a)``). Ranges: a bitmap's words (Partition.word_range) or vertices (.range)."""
        ...

    def swap_slices(self, arrays: Sequence[Any], stagings: Sequence[Any],
                    ranges: Sequence[tuple[int, int]]) -> None:
        """Each local part's array (one entry per bitmap word or per vertex of the
        graph) cut by ``ranges``, the slice of part j sent to part j (into row i of j's
        staging). Queued."""
        ...

    def wait_for(self, ready: Callable[[], bool]) -> None:
        """Poll ``ready`` (a read of the parts' devices landing) until true, bounded by the
        exchange's timeout (:class:`ExchangeTimeout` after it, communicators aborted)."""
        ...

    def begin(self) -> None:
        """Before a search's first launch: the parts' streams wait for the caller's current
        stream, so what the caller queued before the call (the graph's arrays, built or
        changed on its stream) is complete before the parts read it."""
        ...

    def settle(self) -> None:
        """Wait, bounded, for the collectives queued without a wait (``all_to_all``,
        ``all_sum``, ``swap_slices``: their receivers' kernels follow them on the same
        streams). The level loops call it before they read anything back from the parts."""
        ...

    def join(self, pieces: Sequence[Any]) -> Any:
        """One array per local part -> every part's, joined in part order: on the (one)
        device in-process, on the first GPU's for NCCL in one process, on the host under
        MPI. A device result is ordered before the caller's later work on its current
        stream, as any CuPy result is."""
        ...


def _host(x: Any) -> np.ndarray:
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else np.asarray(x)


def wait_bounded(ready: Callable[[], bool], timeout: float, abort: Callable[[], None],
                 what: str) -> None:
    """Poll ``ready`` until true; past ``timeout`` seconds call ``abort`` and raise
    :class:`ExchangeTimeout`. Spins for the first _SPIN_S (a level's work ends within it,
    and a sleep costs 50-100 us), then sleeps _POLL_S between polls."""
    if ready():
        return
    start = time.monotonic()
    deadline = start + timeout
    while not ready():
        now = time.monotonic()
        if now > deadline:
            abort()
            raise ExchangeTimeout(f"{what} did not complete within {timeout:g} s (a peer "
                                  "failed or stopped); communicators aborted")
        if now - start > _SPIN_S:
            time.sleep(_POLL_S)


# --------------------------------------------------------------------------- in-process
class InProcessExchange:
    """P parts in one process, on the CPU or on one GPU: messages change hands by
    reference (a receiver reads the sender's buffer where it lies), counts are host rows
    already. The partition logic runs exactly as it does between GPUs."""

    copies_slices = False  # swap_slices: the receivers read the senders' arrays in place

    def __init__(self, n_parts: int) -> None:
        self.n_parts = int(n_parts)
        self.local_parts = tuple(range(self.n_parts))

    def all_gather_rows(self, rows: Sequence[np.ndarray]) -> np.ndarray:
        return np.stack([np.asarray(r, dtype=np.int64) for r in rows])

    def all_to_all(self, sends: Sequence[Sequence[Message]],
                   table: np.ndarray) -> list[list[Message]]:
        del table  # the sizes are the buffers' own
        return [[sends[src][dst] for src in range(self.n_parts)]
                for dst in range(self.n_parts)]

    def begin(self) -> None:
        pass  # the parts run on the caller's stream

    def settle(self) -> None:
        pass  # nothing is in flight between parts of one process on one device

    def all_sum(self, pairs: Sequence[Sequence[tuple[Any, Any]]]) -> None:
        if self.n_parts == 1:  # the sum of one: a copy, or nothing where it is in place
            for send, recv in pairs[0]:
                if send is not recv:
                    recv[...] = send
            return
        for k in range(len(pairs[0])):
            total = pairs[0][k][0].copy()
            for part in pairs[1:]:
                total += part[k][0]
            for part in pairs:
                part[k][1][...] = total

    def received_slices(self, arrays: Sequence[Any], stagings: Sequence[Any],
                        ranges: Sequence[tuple[int, int]]) -> list[list[Any]]:
        del stagings  # one device: each part reads the others' arrays where they lie
        out = []
        for me in range(self.n_parts):
            a, b = ranges[me]
            out.append([arrays[src][a:b] for src in range(self.n_parts) if src != me])
        return out

    def swap_slices(self, arrays: Sequence[Any], stagings: Sequence[Any],
                    ranges: Sequence[tuple[int, int]]) -> None:
        pass  # the views of received_slices see the arrays as they are

    def wait_for(self, ready: Callable[[], bool]) -> None:
        wait_bounded(ready, DEFAULT_TIMEOUT_S, lambda: None, "a part's read")

    def join(self, pieces: Sequence[Any]) -> Any:
        from .. import backend  # noqa: PLC0415

        # One process, one device: the pieces are joined where they lie.
        return backend.array_module(pieces[0]).concatenate(list(pieces))


# --------------------------------------------------------------------------- NCCL
class NcclComm(Protocol):
    """One rank's NCCL communicator, seen through arrays (the adapter the exchanges use)."""

    rank: int
    xp: Any  # the array module of its buffers

    def device(self) -> Any:
        """A context manager making the communicator's device (and stream) current."""
        ...

    def send(self, buf: Any, peer: int) -> None: ...
    def recv(self, buf: Any, peer: int) -> None: ...
    def all_gather(self, send: Any, recv: Any) -> None: ...
    def all_reduce_sum(self, send: Any, recv: Any) -> None:
        """``recv`` = the element-wise sum over the ranks of ``send`` (may be one array)."""
        ...

    def mark(self) -> None:
        """Record completion of everything queued so far (a CUDA event)."""
        ...

    def follow_caller(self) -> None:
        """The communicator's stream waits for the caller's current stream (on its
        device)."""
        ...

    def hand_over(self) -> None:
        """The caller's current stream (on the communicator's device) waits for everything
        queued on the communicator's stream."""
        ...

    def done(self) -> bool: ...
    def abort(self) -> None: ...


class World(Protocol):
    def group_start(self) -> None: ...
    def group_end(self) -> None: ...


def _require_nccl() -> Any:
    try:
        from cupy.cuda import nccl  # noqa: PLC0415
    except Exception as exc:  # ImportError, or CuPy built without NCCL
        raise ExchangeError(
            "devices=[...]: the NCCL exchange needs NCCL through CuPy (cupy.cuda.nccl; "
            f"pip install nvidia-nccl-cu12 or a CuPy built with NCCL): {exc}") from exc
    if not getattr(nccl, "available", True):
        raise ExchangeError("devices=[...]: cupy.cuda.nccl is present but NCCL is not "
                            "available to CuPy (install nvidia-nccl-cu12)")
    return nccl


class _CupyNccl:
    """:class:`NcclComm` over ``cupy.cuda.nccl.NcclCommunicator`` on one GPU and stream."""

    def __init__(self, comm: Any, rank: int, device_id: int) -> None:
        import cupy as cp  # noqa: PLC0415

        self._nccl = _require_nccl()
        self.comm, self.rank, self.device_id, self.xp = comm, rank, device_id, cp
        with cp.cuda.Device(device_id):
            self.stream = cp.cuda.Stream(non_blocking=True)
        self._event: Any = None

    def device(self) -> Any:
        outer = self.xp.cuda.Device(self.device_id)
        stream = self.stream

        class _Both:
            def __enter__(self) -> None:
                outer.__enter__()
                stream.__enter__()

            def __exit__(self, *exc: Any) -> None:
                stream.__exit__(*exc)
                outer.__exit__(*exc)

        return _Both()

    def _dtype(self, buf: Any) -> int:
        nccl = self._nccl
        codes = {np.dtype(np.int64): nccl.NCCL_INT64, np.dtype(np.int32): nccl.NCCL_INT32,
                 np.dtype(np.uint64): nccl.NCCL_UINT64, np.dtype(np.uint32): nccl.NCCL_UINT32}
        return codes[np.dtype(buf.dtype)]

    def send(self, buf: Any, peer: int) -> None:
        self.comm.send(buf.data.ptr, buf.size, self._dtype(buf), peer, self.stream.ptr)

    def recv(self, buf: Any, peer: int) -> None:
        self.comm.recv(buf.data.ptr, buf.size, self._dtype(buf), peer, self.stream.ptr)

    def all_gather(self, send: Any, recv: Any) -> None:
        self.comm.allGather(send.data.ptr, recv.data.ptr, send.size, self._dtype(send),
                            self.stream.ptr)

    def all_reduce_sum(self, send: Any, recv: Any) -> None:
        self.comm.allReduce(send.data.ptr, recv.data.ptr, send.size, self._dtype(send),
                            self._nccl.NCCL_SUM, self.stream.ptr)

    def mark(self) -> None:
        with self.xp.cuda.Device(self.device_id):
            if self._event is None:  # one event, recorded again by each group
                self._event = self.xp.cuda.Event(disable_timing=True)
            self._event.record(self.stream)

    def done(self) -> bool:
        return self._event is None or bool(self._event.done)

    # The communicator's stream is non-blocking: nothing orders it against the caller's
    # stream (the legacy default stream included) but these events.
    def follow_caller(self) -> None:
        cp = self.xp
        with cp.cuda.Device(self.device_id):
            queued = cp.cuda.Event(disable_timing=True)
            queued.record(cp.cuda.get_current_stream())
            self.stream.wait_event(queued)

    def hand_over(self) -> None:
        cp = self.xp
        with cp.cuda.Device(self.device_id):
            queued = cp.cuda.Event(disable_timing=True)
            queued.record(self.stream)
            cp.cuda.get_current_stream().wait_event(queued)

    def abort(self) -> None:
        try:
            self.comm.abort()
        except Exception:  # noqa: BLE001  (aborting after a failure: best effort)
            pass


class _CupyWorld:
    def __init__(self) -> None:
        self._nccl = _require_nccl()

    def group_start(self) -> None:
        self._nccl.groupStart()

    def group_end(self) -> None:
        self._nccl.groupEnd()


def check_devices(devices: Sequence[int]) -> list[int]:
    """Device ids as ints: non-empty, distinct, each one that CUDA can see."""
    ids = list(devices)
    if not ids:
        raise ValueError("devices: give at least one GPU id")
    for d in ids:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise ValueError(f"devices: {d!r} is not an integer GPU id")
    ids = [int(d) for d in ids]
    if len(set(ids)) != len(ids):
        raise ValueError(f"devices: {ids} names a GPU twice (one part per GPU)")
    from .. import backend  # noqa: PLC0415

    cp = backend.cupy_module()
    count = int(cp.cuda.runtime.getDeviceCount())
    bad = [d for d in ids if not 0 <= d < count]
    if bad:
        raise ValueError(f"devices: GPU {bad[0]} does not exist (this machine has {count}: "
                         f"ids 0..{count - 1})")
    return ids


class NcclExchange:
    """The exchange over NCCL communicators, one per local part.

    ``comms[i]`` carries local part ``local_parts[i]`` (its NCCL rank is the part id).
    :meth:`for_devices` builds it for one process driving ``devices`` (one part each);
    tests build it on :class:`LoopbackWorld`.
    """

    copies_slices = True  # swap_slices: into the receivers' staging rows

    def __init__(self, comms: Sequence[NcclComm], world: World, n_parts: int, *,
                 timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.comms = list(comms)
        self._pending = False  # a collective queued without a wait (see settle)
        self.world = world
        self.n_parts = int(n_parts)
        self.local_parts = tuple(c.rank for c in self.comms)
        self.timeout = float(timeout)

    @classmethod
    def for_devices(cls, devices: Sequence[int], *,
                    timeout: float = DEFAULT_TIMEOUT_S) -> NcclExchange:
        nccl = _require_nccl()
        ids = list(devices)
        raw = nccl.NcclCommunicator.initAll(ids)
        comms = [_CupyNccl(c, rank, d) for rank, (c, d) in enumerate(zip(raw, ids, strict=True))]
        return cls(comms, _CupyWorld(), len(ids), timeout=timeout)

    # The one place the host waits on the collectives: bounded.
    def _wait(self) -> None:
        self._pending = False
        for c in self.comms:
            self.wait_for(c.done, f"part {c.rank}: a collective")

    def wait_for(self, ready: Callable[[], bool], what: str = "a part's read") -> None:
        wait_bounded(ready, self.timeout, self.abort, what)

    def abort(self) -> None:
        for c in self.comms:
            c.abort()

    def _grouped(self, queue: Callable[[], None], wait: bool = True) -> None:
        """Queue one group of NCCL calls and mark its end; wait for it now, or (``wait``
        false) at the next :meth:`settle` or wait, so the host queues the parts' next
        kernels behind it in the meantime."""
        self.world.group_start()
        try:
            queue()
        finally:
            try:
                self.world.group_end()
            except Exception as exc:
                if type(exc).__name__ != "NcclError":
                    raise
                # Seen: NCCL_ERROR_UNHANDLED_CUDA_ERROR with 79.9 of 80 GB in use after a
                # graph built on the GPUs, CuPy's pool holding the build's freed blocks.
                raise ExchangeError(f"NCCL failed ({exc}); {self._memory_note()}") from exc
        for c in self.comms:
            c.mark()
        if wait:
            self._wait()
        else:
            self._pending = True

    def _memory_note(self) -> str:
        """Each local GPU's free memory: NCCL allocates its buffers outside CuPy's pool,
        so a pool holding freed blocks can leave it none."""
        free = []
        for c in self.comms:
            device_id = getattr(c, "device_id", None)
            if device_id is None:
                continue
            try:
                with c.xp.cuda.Device(device_id):
                    got, total = c.xp.cuda.runtime.memGetInfo()
                free.append(f"GPU {device_id} has {got / 2**30:.1f} of {total / 2**30:.1f} "
                            f"GiB free")
            except Exception:  # noqa: BLE001  (reporting on a failure: best effort)
                continue
        where = "; ".join(free) if free else "free GPU memory unknown"
        return (f"{where}. NCCL's buffers come from outside CuPy's memory pool: "
                "cupy.get_default_memory_pool().free_all_blocks() on each GPU may let it run")

    def begin(self) -> None:
        for c in self.comms:
            c.follow_caller()

    def settle(self) -> None:
        if self._pending:
            self._wait()

    def all_gather_rows(self, rows: Sequence[np.ndarray]) -> np.ndarray:
        if len(self.comms) == self.n_parts:
            # This process drives every part: the rows are all on its host already. The
            # trip through the GPUs (upload, allGather, read back, wait) cost 0.39 ms a
            # call on 4 H100s, two calls a level (benchmarks/RESULTS.md, session 20).
            return np.stack([np.asarray(r, dtype=np.int64) for r in rows])
        k = len(rows[0])
        sends, recvs = [], []
        for c, row in zip(self.comms, rows, strict=True):
            with c.device():
                sends.append(c.xp.asarray(np.asarray(row, dtype=np.int64)))
                recvs.append(c.xp.empty(self.n_parts * k, dtype=np.int64))

        def queue() -> None:
            for c, s, r in zip(self.comms, sends, recvs, strict=True):
                with c.device():
                    c.all_gather(s, r)

        self._grouped(queue)
        with self.comms[0].device():
            return _host(recvs[0]).reshape(self.n_parts, k)

    def all_to_all(self, sends: Sequence[Sequence[Message]],
                   table: np.ndarray) -> list[list[Message]]:
        recvs: list[list[Message]] = []
        for c, out in zip(self.comms, sends, strict=True):
            me = c.rank
            row: list[Message] = []
            with c.device():
                for src in range(self.n_parts):
                    if src == me:
                        row.append(out[me])  # a part's message to itself stays put
                        continue
                    k = int(table[src, me])
                    verts = c.xp.empty(k, dtype=out[me][0].dtype)
                    parents = (None if out[me][1] is None
                               else c.xp.empty(k, dtype=out[me][1].dtype))
                    row.append((verts, parents))
            recvs.append(row)

        def queue() -> None:
            for c, peer, (out, row) in self._peer_pairs(sends, recvs):
                # Vertices before parents, on both sides.
                if table[c.rank, peer] > 0:
                    for buf in out[peer]:
                        if buf is not None:
                            c.send(buf, peer)
                if table[peer, c.rank] > 0:
                    for buf in row[peer]:
                        if buf is not None:
                            c.recv(buf, peer)

        self._grouped(queue, wait=False)
        return recvs

    def _peer_pairs(self, *per_part: Sequence[Any]) -> Iterator[tuple[Any, int, list[Any]]]:
        """(communicator, peer, that local part's items of ``per_part``) for every local
        part and every other part, peers in order, the communicator's device current:
        every rank posts its sends and receives in this order, so NCCL matches them one
        to one."""
        for c, *items in zip(self.comms, *per_part, strict=True):
            with c.device():
                for peer in range(self.n_parts):
                    if peer != c.rank:
                        yield c, peer, items

    def all_sum(self, pairs: Sequence[Sequence[tuple[Any, Any]]]) -> None:
        def queue() -> None:
            for c, mine in zip(self.comms, pairs, strict=True):
                with c.device():
                    for send, recv in mine:
                        c.all_reduce_sum(send, recv)

        self._grouped(queue, wait=False)

    def received_slices(self, arrays: Sequence[Any], stagings: Sequence[Any],
                        ranges: Sequence[tuple[int, int]]) -> list[list[Any]]:
        del arrays, ranges
        return [[staging[src] for src in range(self.n_parts) if src != c.rank]
                for c, staging in zip(self.comms, stagings, strict=True)]

    def swap_slices(self, arrays: Sequence[Any], stagings: Sequence[Any],
                    ranges: Sequence[tuple[int, int]]) -> None:
        def queue() -> None:
            for c, peer, (array, staging) in self._peer_pairs(arrays, stagings):
                a, b = ranges[peer]
                c.send(array[a:b], peer)
                c.recv(staging[peer], peer)

        self._grouped(queue, wait=False)

    def join(self, pieces: Sequence[Any]) -> Any:
        # To the first GPU over NCCL (NVLink where the GPUs have it): a search's labels
        # stay on a GPU, as a one-GPU search's do, instead of crossing PCIe to the host.
        root = self.comms[0]
        with root.device():
            into = [p if i == 0 else root.xp.empty(p.size, dtype=p.dtype)
                    for i, p in enumerate(pieces)]

        def queue() -> None:
            for i, (c, p) in enumerate(zip(self.comms, pieces, strict=True)):
                if i == 0 or p.size == 0:
                    continue
                with c.device():
                    c.send(p, root.rank)
                with root.device():
                    root.recv(into[i], c.rank)

        if len(pieces) > 1:
            self._grouped(queue)
        with root.device():
            joined = root.xp.concatenate(into)
        # Queued on the root's stream: the caller's stream waits for it. (Without this a
        # caller reading the labels on its own stream may read them before they are
        # written: session 35's run 8, one H200 shared with other processes, returned
        # labels of devices=[0] holding vertex ids, as an earlier search's parents had
        # left that memory.)
        root.hand_over()
        return joined


# --------------------------------------------------------------------------- MPI + NCCL
def require_mpi() -> Any:
    try:
        from mpi4py import MPI  # noqa: PLC0415
    except Exception as exc:
        raise ExchangeError("the MPI exchange needs mpi4py (pip install mpi4py, with an "
                            f"MPI library such as Open MPI): {exc}") from exc
    return MPI


class MpiNcclExchange(NcclExchange):
    """One part per process (``mpirun -n K``): NCCL between the processes' GPUs, its
    unique id broadcast by mpi4py from rank 0; results gathered by mpi4py on the host.

    ``mpi_comm`` is an mpi4py communicator (or anything with ``Get_rank``, ``Get_size``,
    ``bcast``, ``allgather``); ``comm`` the NCCL adapter (built here by default)."""

    def __init__(self, mpi_comm: Any = None, *, device_id: int | None = None,
                 comm: NcclComm | None = None, world: World | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S) -> None:
        if mpi_comm is None:
            mpi_comm = require_mpi().COMM_WORLD
        self.mpi = mpi_comm
        rank, size = int(mpi_comm.Get_rank()), int(mpi_comm.Get_size())
        if comm is None:
            nccl = _require_nccl()
            uid = nccl.get_unique_id() if rank == 0 else None
            uid = mpi_comm.bcast(uid, root=0)
            if device_id is None:
                import cupy as cp  # noqa: PLC0415

                device_id = local_rank(mpi_comm) % int(cp.cuda.runtime.getDeviceCount())
            import cupy as cp  # noqa: PLC0415

            with cp.cuda.Device(device_id):
                raw = nccl.NcclCommunicator(size, uid, rank)
            comm = _CupyNccl(raw, rank, device_id)
            world = _CupyWorld()
        assert world is not None
        super().__init__([comm], world, size, timeout=timeout)

    def join(self, pieces: Sequence[Any]) -> np.ndarray:
        with self.comms[0].device():
            mine = _host(pieces[0])
        return np.concatenate([np.asarray(p) for p in self.mpi.allgather(mine)])


def local_rank(mpi_comm: Any) -> int:
    """This process's rank among those of its host (which GPU it takes)."""
    try:
        MPI = require_mpi()  # noqa: N806
        return int(mpi_comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank())
    except Exception:  # noqa: BLE001  (a fake communicator: one host)
        return int(mpi_comm.Get_rank())


# --------------------------------------------------------------------------- loopback
class LoopbackWorld:
    """NCCL stand-in on NumPy arrays: ``comms()`` gives one :class:`NcclComm` per rank.

    One thread may drive every rank (as :meth:`NcclExchange.for_devices` does) or each of
    ``threads`` threads drives its own ranks (as MPI processes do): a group's operations
    are matched when every thread has reached ``group_end``, which waits at most
    ``timeout`` seconds for the others (:class:`ExchangeTimeout` after it, as a dead peer
    gives on a GPU). ``fail_at`` makes a rank raise at its n-th group (a peer failing).
    """

    def __init__(self, n_ranks: int, *, threads: int = 1, timeout: float = 5.0) -> None:
        self.n_ranks = int(n_ranks)
        self.timeout = float(timeout)
        self._barrier = threading.Barrier(int(threads))
        self._lock = threading.Lock()
        self._posted: dict[int, list[tuple[str, Any, int]]] = {}
        self._local = threading.local()
        self.fail_at: dict[int, int] = {}
        self._groups: dict[int, int] = {}

    def comms(self) -> list[_LoopbackComm]:
        return [_LoopbackComm(self, r) for r in range(self.n_ranks)]

    def _ops(self) -> list[tuple[int, str, Any, int]]:
        if not hasattr(self._local, "ops"):
            self._local.ops = []
        return self._local.ops

    def group_start(self) -> None:
        self._ops().clear()

    def _sync(self) -> None:
        try:
            self._barrier.wait(self.timeout)
        except threading.BrokenBarrierError as exc:
            raise ExchangeTimeout("loopback: a peer did not reach the collective within "
                                  f"{self.timeout:g} s") from exc

    def group_end(self) -> None:
        ops = list(self._ops())
        self._ops().clear()
        ranks = {r for r, *_ in ops}
        for r in ranks:
            n = self._groups[r] = self._groups.get(r, 0) + 1
            if self.fail_at.get(r) == n:
                self._barrier.abort()  # what a dying process does to its peers
                raise ExchangeError(f"loopback: rank {r} failed (injected)")
        with self._lock:
            for r, kind, buf, peer in ops:
                if kind in ("send", "gather"):
                    self._posted.setdefault(r, []).append((kind, buf.copy(), peer))
        self._sync()  # every thread has posted
        nth: dict[int, int] = {}  # each rank's collectives so far in this group
        for r, kind, buf, peer in ops:
            if kind == "recv":
                with self._lock:  # NCCL's order: the n-th recv from a peer takes its n-th send
                    posted = self._posted.get(peer, [])
                    at = next((i for i, e in enumerate(posted) if e[0] == "send" and e[2] == r),
                              None)
                    if at is None:
                        raise ExchangeError(f"loopback: rank {r} waits for a send from {peer} "
                                            "that was never posted")
                    sent = posted.pop(at)[1]
                if sent.size != buf.size:
                    raise ExchangeError(f"loopback: rank {r} posted a receive of {buf.size} "
                                        f"from {peer}, which sent {sent.size}")
                buf[...] = sent
            elif kind in ("gather_recv", "reduce_recv"):
                # The n-th collective of a group takes every rank's n-th posted buffer.
                n = nth[r] = nth.get(r, -1) + 1
                posted = [[e for e in self._posted[src] if e[0] == "gather"][n][1]
                          for src in range(self.n_ranks)]
                if kind == "gather_recv":
                    k = buf.size // self.n_ranks
                    for src in range(self.n_ranks):
                        buf[src * k:(src + 1) * k] = posted[src]
                else:
                    buf[...] = np.sum(posted, axis=0, dtype=buf.dtype)
        self._sync()  # every thread has read
        with self._lock:
            for r in ranks:
                self._posted[r] = [e for e in self._posted.get(r, []) if e[0] != "gather"]
        self._sync()


class _LoopbackComm:
    xp = np

    def __init__(self, world: LoopbackWorld, rank: int) -> None:
        self.world, self.rank = world, rank
        self.aborted = False

    def device(self) -> Any:
        import contextlib  # noqa: PLC0415

        return contextlib.nullcontext()

    def send(self, buf: Any, peer: int) -> None:
        self.world._ops().append((self.rank, "send", buf, peer))

    def recv(self, buf: Any, peer: int) -> None:
        self.world._ops().append((self.rank, "recv", buf, peer))

    def all_gather(self, send: Any, recv: Any) -> None:
        ops = self.world._ops()
        ops.append((self.rank, "gather", send, -1))
        ops.append((self.rank, "gather_recv", recv, -1))

    def all_reduce_sum(self, send: Any, recv: Any) -> None:
        ops = self.world._ops()
        ops.append((self.rank, "gather", send, -1))
        ops.append((self.rank, "reduce_recv", recv, -1))

    def mark(self) -> None:
        pass

    def follow_caller(self) -> None:
        pass  # NumPy: nothing is queued

    def hand_over(self) -> None:
        pass

    def done(self) -> bool:
        return True

    def abort(self) -> None:
        self.aborted = True
