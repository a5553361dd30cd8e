"""Large copies between host and device through pinned staging buffers and host threads.

``cupy.ndarray.get()`` into new NumPy memory is a pageable copy: the driver stages it
through its own pinned buffer and copies it out on one host thread, faulting in the
fresh destination pages as it goes. Issue 19, H100 host: the 200 MB of a refined mesh of
5.8M triangles came back at about 3.5 GB/s (0.06 s of a 0.13 s refinement). The other
way, ``cupy.asarray`` copies the whole array into a pinned buffer on one thread and only
then starts the copy engine. Here both directions go in fixed-size chunks through a ring
of pinned buffers (allocated once per device and kept): the copy engine moves one chunk
while a pool of host threads fills or empties others, several at a time, so the bus
rather than one host thread sets the pace.

Arrays below ``DIRECT_BYTES`` take CuPy's plain copy (one chunk gains nothing from the
ring). Everything runs on the current stream, in order with the work around it.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from . import backend

CHUNK_BYTES = 4 << 20
DIRECT_BYTES = 1 << 20
MAX_THREADS = 8  # host copy-out threads; the copy engine's ~25 GB/s needs a few


def _threads() -> int:
    # Read at each call (tests shrink MAX_THREADS).
    return backend.usable_cores(MAX_THREADS)


class _Ring:
    """Pinned chunk buffers of one device, each with the event of its last copy in."""

    def __init__(self, cp: Any, buffers: int) -> None:
        self.memory = [cp.cuda.alloc_pinned_memory(CHUNK_BYTES) for _ in range(buffers)]
        self.host = [np.ndarray((CHUNK_BYTES,), np.uint8, buffer=m) for m in self.memory]
        self.events = [cp.cuda.Event(disable_timing=True) for _ in range(buffers)]
        self.lock = threading.Lock()  # one batch at a time uses the ring


_rings: dict[int, _Ring] = {}
_pool: ThreadPoolExecutor | None = None
_setup = threading.Lock()


def _ring_and_pool(cp: Any) -> tuple[_Ring, ThreadPoolExecutor]:
    global _pool
    device = backend.current_device_id()
    with _setup:
        if _pool is None:
            _pool = ThreadPoolExecutor(_threads(), thread_name_prefix="morphgpu-copy")
        if device not in _rings:
            _rings[device] = _Ring(cp, 2 * _threads())  # one copying in, one out per thread
        return _rings[device], _pool


def close() -> None:
    """Stop the copy threads (idle between calls: every copy is awaited before it
    returns); the next copy starts them again."""
    global _pool
    with _setup:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=True)


def warm_up() -> None:
    """Allocate the current device's ring and start the threads (the pinned allocation
    costs milliseconds: a first refinement pays it, not each call)."""
    if backend.gpu_available():
        _ring_and_pool(backend.cupy_module())


def _on_device(device: int) -> None:
    """Make ``device`` current in a pool thread (its events are that device's)."""
    backend.cupy_module().cuda.runtime.setDevice(device)


def _copy_out(device: int, event: Any, staged: np.ndarray, dst: np.ndarray) -> None:
    _on_device(device)
    event.synchronize()  # the chunk is in the pinned buffer (releases the GIL)
    np.copyto(dst, staged[: dst.size])  # releases the GIL too


def to_host_many(arrays: list[Any]) -> list[np.ndarray]:
    """NumPy copies of ``arrays`` (CuPy arrays; others are passed through
    ``np.asarray``), same shapes and dtypes, through the pinned ring (module doc)."""
    cp = backend.cupy_module() if any(backend.is_cupy_array(a) for a in arrays) else None
    out: list[np.ndarray] = []
    chunks: list[tuple[int, np.ndarray]] = []  # (device address, destination bytes)
    keep = []  # the contiguous sources, alive until their copies are done
    for a in arrays:
        if not backend.is_cupy_array(a):
            out.append(np.asarray(a))
            continue
        if a.nbytes < DIRECT_BYTES:
            out.append(a.get())
            continue
        src = cp.ascontiguousarray(a)
        keep.append(src)
        dst = np.empty(a.shape, dtype=a.dtype)
        flat = dst.reshape(-1).view(np.uint8)
        for off in range(0, a.nbytes, CHUNK_BYTES):
            chunks.append((src.data.ptr + off, flat[off: off + CHUNK_BYTES]))
        out.append(dst)
    if not chunks:
        return out
    ring, pool = _ring_and_pool(cp)
    device = backend.current_device_id()
    stream = cp.cuda.get_current_stream()
    to_host = cp.cuda.runtime.memcpyDeviceToHost
    with ring.lock:
        pending: list[Future | None] = [None] * len(ring.memory)
        try:
            for i, (address, dst) in enumerate(chunks):
                b = i % len(ring.memory)
                if pending[b] is not None:
                    pending[b].result()  # its last chunk is out: the buffer is free
                cp.cuda.runtime.memcpyAsync(ring.memory[b].ptr, address, dst.size, to_host,
                                            stream.ptr)
                ring.events[b].record(stream)
                pending[b] = pool.submit(_copy_out, device, ring.events[b], ring.host[b], dst)
        finally:
            for p in pending:
                if p is not None:
                    p.result()
    del keep
    return out


def _fill(device: int, event: Any, staged: np.ndarray, src: np.ndarray) -> None:
    _on_device(device)
    event.synchronize()  # the buffer's last chunk has gone to the device
    np.copyto(staged[: src.size], src)


def to_device_many(arrays: list[np.ndarray]) -> list[Any]:
    """CuPy copies of the NumPy ``arrays``, same shapes and dtypes, through the pinned
    ring (module doc)."""
    cp = backend.cupy_module()
    out: list[Any] = []
    chunks: list[tuple[np.ndarray, int]] = []  # (source bytes, device address)
    for a in arrays:
        a = np.asarray(a)
        if a.nbytes < DIRECT_BYTES:
            out.append(cp.asarray(a))
            continue
        src = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        dst = cp.empty(a.shape, dtype=a.dtype)
        for off in range(0, a.nbytes, CHUNK_BYTES):
            chunks.append((src[off: off + CHUNK_BYTES], dst.data.ptr + off))
        out.append(dst)
    if not chunks:
        return out
    ring, pool = _ring_and_pool(cp)
    device = backend.current_device_id()
    stream = cp.cuda.get_current_stream()
    to_device = cp.cuda.runtime.memcpyHostToDevice
    n = len(ring.memory)
    with ring.lock:
        filled: dict[int, Future] = {}
        try:
            for i, (src, address) in enumerate(chunks):
                # keep the ring full: the chunks up to n ahead are being filled (chunk j's
                # buffer was last sent in round j - n, issued before this loop reached j)
                for j in range(i, min(i + n, len(chunks))):
                    if j not in filled:
                        filled[j] = pool.submit(_fill, device, ring.events[j % n],
                                                ring.host[j % n], chunks[j][0])
                filled.pop(i).result()
                b = i % n
                cp.cuda.runtime.memcpyAsync(address, ring.memory[b].ptr, src.size, to_device,
                                            stream.ptr)
                ring.events[b].record(stream)
        finally:
            for f in filled.values():
                f.result()
        ring.events[(len(chunks) - 1) % n].synchronize()  # the ring is free for the next use
    return out
