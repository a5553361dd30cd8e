"""Device selection and transfers (the CPU side runs everywhere)."""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from morphgpu import backend


def test_cpu_is_always_available():
    assert backend.resolve_device("cpu") == "cpu"


def test_bad_device_names_the_argument():
    with pytest.raises(ValueError, match="device must be one of"):
        backend.resolve_device("cuda")


def test_gpu_without_gpu_is_a_clear_error():
    if backend.gpu_available():
        pytest.skip("a GPU is present")
    with pytest.raises(backend.DeviceError, match="needs a CUDA GPU"):
        backend.resolve_device("gpu")


def test_auto_falls_back_and_says_so_once(caplog):
    if backend.gpu_available():
        assert backend.resolve_device("auto") == "gpu"
        return
    with caplog.at_level(logging.INFO, logger="morphgpu"):
        assert backend.resolve_device("auto", who="probe-once") == "cpu"
        assert backend.resolve_device("auto", who="probe-once") == "cpu"
    assert sum("probe-once" in r.message for r in caplog.records) == 1


def test_numpy_stays_on_the_cpu():
    a = np.arange(5)
    assert backend.side_of(a) == "cpu"
    assert backend.to_side(a, "cpu") is a or np.array_equal(backend.to_side(a, "cpu"), a)


@pytest.mark.gpu
def test_round_trip_through_the_gpu():
    a = np.arange(10, dtype=np.int64)
    g = backend.to_side(a, "gpu")
    assert backend.side_of(g) == "gpu"
    assert np.array_equal(backend.to_host(g), a)
    props = backend.gpu_properties()
    assert props["multiprocessors"] > 0 and props["memory_bytes"] > 0


def test_host_memory_check(monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**30)
    backend.require_host_bytes(2**29, "half a GiB")
    with pytest.raises(MemoryError, match="needs 2.00 GiB of host memory but only 1.00 GiB"):
        backend.require_host_bytes(2**31, "two GiB")
    monkeypatch.setattr(backend, "host_available_bytes", lambda: None)
    backend.require_host_bytes(2**60, "unknown availability is not an error")


def test_host_available_bytes_reads_the_machine():
    available = backend.host_available_bytes()
    assert available is None or available > 2**20


class _FakeCupy:
    """The few CuPy calls gpu_memory_guard makes, on a machine without a GPU."""

    class cuda:  # noqa: N801
        class memory:  # noqa: N801
            class OutOfMemoryError(MemoryError):
                pass

        class runtime:  # noqa: N801
            @staticmethod
            def memGetInfo():  # noqa: N802
                return 2 * 2**30, 80 * 2**30

    class _Pool:
        def total_bytes(self):
            return 3 * 2**30

    @classmethod
    def get_default_memory_pool(cls):
        return cls._Pool()


def test_gpu_memory_guard_names_the_work_for_a_sort_out_of_memory(monkeypatch):
    """A thrust sort's workspace failing (CuPy's bare MemoryError("std::bad_alloc")) is
    reported as CuPy's own out-of-memory error is: the work, the free memory, the pool;
    a host MemoryError is left alone."""
    monkeypatch.setattr(backend, "_probe_cupy", lambda: (_FakeCupy, None))
    with pytest.raises(backend.GPUOutOfMemoryError,
                       match=r"kronecker\(scale=25\).*free 2\.00 GiB of 80\.00 GiB.*3\.00"):
        with backend.gpu_memory_guard("kronecker(scale=25)"):
            raise MemoryError("std::bad_alloc")
    with pytest.raises(backend.GPUOutOfMemoryError, match="kronecker"):
        with backend.gpu_memory_guard("kronecker"):
            raise _FakeCupy.cuda.memory.OutOfMemoryError("out of memory allocating 8 bytes")
    with pytest.raises(MemoryError, match="Unable to allocate") as info:
        with backend.gpu_memory_guard("kronecker"):
            raise MemoryError("Unable to allocate 8.00 GiB for an array")
    assert not isinstance(info.value, backend.GPUOutOfMemoryError)


def test_usable_cores_on_this_machine():
    cores = backend.usable_cores()
    assert 1 <= cores <= (os.cpu_count() or 1)
    if hasattr(os, "sched_getaffinity"):
        assert cores == len(os.sched_getaffinity(0))


def test_usable_cores_follows_the_affinity_mask_and_the_cap(monkeypatch):
    # A process pinned to 3 of 16 CPUs (taskset, a container's cpuset).
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert backend.usable_cores() == 3
    assert backend.usable_cores(2) == 2
    assert backend.usable_cores(8) == 3
    assert backend.usable_cores(0) == 1  # never fewer than one thread


def test_usable_cores_without_an_affinity_call(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # not Linux
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert backend.usable_cores() == 6
    assert backend.usable_cores(4) == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # count unknown
    assert backend.usable_cores() == 1


def test_thread_pools_size_by_the_helper(monkeypatch):
    from morphgpu import generators, transfer

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    # The copy ring counts the mask's CPUs too, capped at MAX_THREADS.
    monkeypatch.setattr(transfer, "MAX_THREADS", 8)
    assert transfer._threads() == 3
    monkeypatch.setattr(transfer, "MAX_THREADS", 2)
    assert transfer._threads() == 2
    # The R-MAT draw's default is the affinity mask's 3 cores (with enough blocks).
    sizes = []

    class Recording(ThreadPoolExecutor):
        def __init__(self, workers):
            sizes.append(workers)
            super().__init__(workers)

    monkeypatch.setattr(generators, "ThreadPoolExecutor", Recording)
    src, dst = generators._rmat_edges_host(6, 40, 0.57, 0.19, 0.19, 0, 0, block=4)
    assert sizes == [3]
    want = generators._rmat_edges_host(6, 40, 0.57, 0.19, 0.19, 0, 0, block=4, threads=1)
    np.testing.assert_array_equal(src, want[0])
    np.testing.assert_array_equal(dst, want[1])
