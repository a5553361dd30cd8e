"""Copies through the pinned ring (morphgpu.transfer): same bytes, shapes and dtypes as
CuPy's own copies. On the CPU the device is a stand-in whose copies run late, when an
event is waited on (as the copy engine's do), so a chunk read before its copy finished,
a buffer refilled while in use or a wrong offset shows as wrong bytes; on the GPU the
real thing, against ``get`` and ``asarray``."""

from __future__ import annotations

import ctypes
import threading

import numpy as np
import pytest

from morphgpu import backend, transfer

SIZES = [0, 5, transfer.DIRECT_BYTES // 8 - 1, transfer.DIRECT_BYTES // 8 + 3,
         transfer.CHUNK_BYTES // 8, 3 * transfer.CHUNK_BYTES // 8 + 7]


def _arrays(seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = [rng.random(n) for n in SIZES]
    out.append(rng.integers(-9, 9, size=(transfer.CHUNK_BYTES // 4 + 11, 3), dtype=np.int32))
    out.append(rng.integers(0, 2, size=transfer.CHUNK_BYTES + 5, dtype=np.uint8))
    return out


class _Queue:
    """The stand-in copy engine: copies queue up and run when an event is waited on."""

    def __init__(self) -> None:
        self.ops: list[tuple] = []
        self.lock = threading.Lock()

    def run_to(self, mark: object) -> None:
        """Run the queue up to ``mark`` (everything for None)."""
        with self.lock:
            while self.ops and (mark is None or any(op is mark for op in self.ops)):
                op = self.ops.pop(0)
                if isinstance(op, tuple):
                    ctypes.memmove(op[1], op[2], op[3])


class _FakeCuda:
    def __init__(self) -> None:
        self.queue = _Queue()
        self.keep: list = []
        fake = self

        class Memory(bytearray):  # pinned memory: a buffer with an address
            def __init__(self, n):
                super().__init__(n)
                self.ptr = ctypes.addressof((ctypes.c_char * n).from_buffer(self))

        class Event:
            def __init__(self, disable_timing=False):
                self.mark = None

            def record(self, stream=None):
                self.mark = object()
                with fake.queue.lock:
                    fake.queue.ops.append(self.mark)

            def synchronize(self):
                if self.mark is not None:
                    fake.queue.run_to(self.mark)

        class Runtime:
            memcpyDeviceToHost, memcpyHostToDevice = 2, 1

            @staticmethod
            def setDevice(device):
                assert device == -1  # the stand-in's device id (current_device_id)

            @staticmethod
            def memcpyAsync(dst, src, n, kind, stream):
                with fake.queue.lock:
                    fake.queue.ops.append(("copy", dst, src, n))

        class Stream:
            ptr = 0

        self.Event, self.runtime = Event, Runtime
        self.Memory = Memory
        self.stream = Stream()

    def alloc_pinned_memory(self, n):
        return self.Memory(n)

    def get_current_stream(self):
        return self.stream


class _DeviceArray:
    """A host array posing as a CuPy one (what transfer.py reads of it)."""

    def __init__(self, a: np.ndarray) -> None:
        self.a = np.ascontiguousarray(a)
        self.shape, self.dtype, self.nbytes, self.size = a.shape, a.dtype, a.nbytes, a.size
        self.data = type("Ptr", (), {"ptr": self.a.ctypes.data})()

    def get(self) -> np.ndarray:
        return self.a.copy()


class _FakeCupy:
    def __init__(self) -> None:
        self.cuda = _FakeCuda()

    def ascontiguousarray(self, a):
        return a

    def asarray(self, a):
        return _DeviceArray(np.asarray(a))

    def empty(self, shape, dtype):
        return _DeviceArray(np.full(shape, 7, dtype=dtype))


@pytest.fixture
def fake_cupy(monkeypatch):
    fake = _FakeCupy()
    monkeypatch.setattr(backend, "cupy_module", lambda: fake)
    monkeypatch.setattr(backend, "is_cupy_array", lambda x: isinstance(x, _DeviceArray))
    monkeypatch.setattr(backend, "current_device_id", lambda: -1)
    monkeypatch.setattr(transfer, "_rings", {})
    monkeypatch.setattr(transfer, "MAX_THREADS", 3)
    monkeypatch.setattr(transfer, "_pool", None)
    yield fake
    if transfer._pool is not None:
        transfer._pool.shutdown()


@pytest.mark.parametrize("seed", [0, 1])
def test_to_host_many_copies_every_byte(fake_cupy, seed):
    arrays = _arrays(seed)
    got = transfer.to_host_many([_DeviceArray(a) for a in arrays] + [np.arange(3)])
    for want, have in zip(arrays + [np.arange(3)], got):
        assert have.shape == want.shape and have.dtype == want.dtype
        np.testing.assert_array_equal(have, want)


@pytest.mark.parametrize("seed", [0, 1])
def test_to_device_many_copies_every_byte(fake_cupy, seed):
    arrays = _arrays(seed)
    got = transfer.to_device_many(arrays)
    fake_cupy.cuda.queue.run_to(None)  # nothing may be left: the last copy was waited on
    assert fake_cupy.cuda.queue.ops == []
    for want, have in zip(arrays, got):
        assert have.shape == want.shape and have.dtype == want.dtype
        np.testing.assert_array_equal(have.a, want)


@pytest.mark.gpu
def test_ring_matches_cupy_copies():
    cp = backend.cupy_module()
    arrays = _arrays(2) + [np.arange(12.0).reshape(3, 4)[:, ::2]]  # a strided one too
    on_device = transfer.to_device_many(arrays)
    for want, have in zip(arrays, on_device):
        assert have.shape == want.shape and have.dtype == want.dtype
        np.testing.assert_array_equal(have.get(), want)
    back = transfer.to_host_many([cp.asarray(a) for a in arrays])
    for want, have in zip(arrays, back):
        assert have.shape == want.shape and have.dtype == want.dtype
        np.testing.assert_array_equal(have, want)


def test_to_side_takes_large_numbers_through_the_ring(fake_cupy, monkeypatch):
    """backend.to_side moves large numeric arrays through the ring both ways, byte for
    byte, casting on the host first; small arrays and other dtypes take CuPy's own copy."""
    plain = []

    def asarray(a, dtype=None):
        plain.append(a)
        return _DeviceArray(np.asarray(a, dtype=dtype))

    monkeypatch.setattr(fake_cupy, "asarray", asarray)
    big = np.random.default_rng(3).integers(-2**31, 2**31, size=transfer.DIRECT_BYTES // 4 + 5,
                                            dtype=np.int64).astype(np.int32)
    on = backend.to_side(big, "gpu")
    assert plain == [] and on.dtype == big.dtype
    np.testing.assert_array_equal(on.a, big)
    wide = backend.to_side(big, "gpu", dtype=np.int64)
    assert plain == [] and wide.dtype == np.int64
    np.testing.assert_array_equal(wide.a, big)

    def no_get():
        raise AssertionError("a large device array came back through get(), not the ring")

    on.get = no_get
    back = backend.to_side(on, "cpu")
    assert back.dtype == big.dtype
    np.testing.assert_array_equal(back, big)
    backend.to_side(big[:5], "gpu")
    backend.to_side(np.array(["x"] * (transfer.DIRECT_BYTES // 4 + 1)), "gpu")
    assert len(plain) == 2


@pytest.mark.gpu
def test_to_side_round_trips_on_the_gpu():
    """The ring path of backend.to_side on the real device: values, dtype and shape, and
    a cast on the way up."""
    if not backend.gpu_available():
        pytest.skip("no GPU")
    a = np.random.default_rng(4).random((transfer.CHUNK_BYTES // 8 + 3, 2))
    on = backend.to_side(a, "gpu")
    assert backend.is_cupy_array(on) and on.shape == a.shape and on.dtype == a.dtype
    np.testing.assert_array_equal(on.get(), a)
    np.testing.assert_array_equal(backend.to_side(on, "cpu"), a)
    np.testing.assert_array_equal(backend.to_side(a, "gpu", dtype=np.float32).get(),
                                  a.astype(np.float32))
