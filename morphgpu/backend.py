"""The ground floor: which device runs, which array module holds the data, and transfers.

Everything above this module asks it three questions: is there a usable GPU, which side
(``"cpu"`` or ``"gpu"``) should this call run on, and how do arrays move between the two.
CuPy is imported lazily and only here (and in the GPU halves of the wings), so
``import morphgpu`` works on machines with neither CuPy nor a GPU.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging
import os
import sys
import threading
from collections.abc import Iterator
from typing import Any, Literal

import numpy as np

log = logging.getLogger("morphgpu")

Device = Literal["auto", "gpu", "cpu"]
Side = Literal["cpu", "gpu"]

_DEVICE_CHOICES = ("auto", "gpu", "cpu")


class DeviceError(RuntimeError):
    """The requested device cannot be used (no CuPy, no GPU, or a broken driver)."""


class GPUOutOfMemoryError(MemoryError):
    """A GPU allocation failed; the message says how much was needed and how much was free."""


@functools.lru_cache(maxsize=1)
def _probe_cupy() -> tuple[Any, str | None]:
    """Import CuPy and touch the driver once; return (module or None, reason if unusable)."""
    try:
        import cupy  # noqa: PLC0415
    except Exception as exc:  # ImportError, or a CuPy build that fails to load its libraries
        return None, f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return None, f"CuPy found no usable CUDA driver ({type(exc).__name__}: {exc})"
    if count < 1:
        return None, "CuPy is installed but no CUDA GPU is visible"
    # Before CuPy's first compile of the process, not at our first module load: CuPy's own
    # element-wise kernels (the first array operations) looked their compiler key up before
    # it, and paid an NVRTC compile per option set (3 compiles, 36 ms of the SAT command's
    # warm-up on the H200 host).
    from . import compiler_key_cache  # noqa: PLC0415 (imports nothing of morphgpu)

    compiler_key_cache.seed(cupy)
    return cupy, None


def cupy_module() -> Any:
    """CuPy, or a DeviceError saying why it cannot be used."""
    cp, why = _probe_cupy()
    if cp is None:
        raise DeviceError(f"device='gpu' needs a CUDA GPU with CuPy: {why}")
    return cp


def gpu_available() -> bool:
    return _probe_cupy()[0] is not None


def import_gpu_stack() -> bool:
    """Import CuPy and cupyx and create the CUDA context now (for a thread that overlaps
    them with other start-up work); whether a GPU is usable. CuPy imports cupyx lazily, at
    the first use of some array routines (0.9 s of the first SP solve's build phase on the
    H100 machine's host), and the context is created at the first allocation (0.36 s
    there, which landed in the next solve's build phase). The primary context is the
    device's for every thread of the process, so creating it here serves the main one.
    The driver's own start (cuInit and the primary context, without the GIL: ctypes
    releases it) runs in a thread of its own beside the imports, which hold the GIL."""
    driver = threading.Thread(target=_start_driver, daemon=True)
    driver.start()
    try:
        if not gpu_available():
            return False
        import cupyx  # noqa: F401, PLC0415
    finally:
        driver.join()
    _probe_cupy()[0].cuda.runtime.memGetInfo()
    return True


def _start_driver() -> None:
    """cuInit and the primary context of device 0 through the driver library itself (the
    runtime CuPy uses attaches to that context later); nothing when it cannot be loaded:
    CuPy's own first call then does the work and reports any error."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        if cuda.cuInit(0) != 0:
            return
        device, context = ctypes.c_int(0), ctypes.c_void_p()
        if cuda.cuDeviceGet(ctypes.byref(device), 0) != 0:
            return
        # Retained for the life of the process, like the runtime's own reference.
        cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
    except (OSError, AttributeError):
        return


def gpu_unavailable_reason() -> str | None:
    return _probe_cupy()[1]


_fallback_logged: set[str] = set()


def resolve_device(device: str, *, who: str = "morphgpu") -> Side:
    """Map the user's ``device`` argument to the side that runs.

    ``"gpu"`` without a usable GPU raises; ``"auto"`` falls back to the CPU and logs the
    reason once per process (per caller), so long scripts are not flooded.
    """
    if device not in _DEVICE_CHOICES:
        raise ValueError(f"{who}: device must be one of {_DEVICE_CHOICES}, got {device!r}")
    if device == "cpu":
        return "cpu"
    if device == "gpu":
        cupy_module()
        return "gpu"
    if gpu_available():
        return "gpu"
    if who not in _fallback_logged:
        _fallback_logged.add(who)
        log.info("%s: running on the CPU (%s)", who, gpu_unavailable_reason())
    return "cpu"


def is_cupy_array(x: Any) -> bool:
    return type(x).__module__.startswith("cupy") and hasattr(x, "__cuda_array_interface__")


def is_cupy_sparse(x: Any) -> bool:
    return type(x).__module__.startswith("cupyx.scipy.sparse")


def is_scipy_sparse(x: Any) -> bool:
    """``scipy.sparse.issparse(x)`` without importing SciPy (~0.1 s, most of a CLI run's
    start-up): a SciPy sparse matrix can only exist once scipy.sparse has been imported."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and bool(sparse.issparse(x))


def side_of(x: Any) -> Side:
    """Where an input lives: CuPy arrays and CuPy sparse matrices are on the GPU."""
    return "gpu" if (is_cupy_array(x) or is_cupy_sparse(x)) else "cpu"


def xp_for(side: Side) -> Any:
    return cupy_module() if side == "gpu" else np


def array_module(x: Any) -> Any:
    return xp_for(side_of(x))


def to_side(x: Any, side: Side, dtype: Any = None) -> Any:
    """Move an array to ``side`` (a no-op when it is already there), optionally casting
    (on the host before an upload, as ``cupy.asarray`` does).

    Large numeric arrays go through ``transfer``'s pinned ring instead of CuPy's pageable
    copy (same floor; imported here, at the first large copy). H100 host, 400 MB: the
    process's first pageable upload took 0.22-0.31 s and later ones 0.041-0.045 s, the ring
    0.037-0.047 s (its pinned buffers) and then 0.009-0.012 s; a 1M-variable K=5 formula
    is uploaded twice per solve (build and verification)."""
    if x is None:
        return None
    if side == "gpu":
        if isinstance(x, np.ndarray) and _ring_worthy(x):
            from . import transfer  # noqa: PLC0415 (same floor; it imports this module)

            return transfer.to_device_many([np.asarray(x, dtype=dtype)])[0]
        return cupy_module().asarray(x, dtype=dtype)
    if is_cupy_array(x):
        if _ring_worthy(x) and _on_current_device(x):
            from . import transfer  # noqa: PLC0415

            x = transfer.to_host_many([x])[0]
        else:
            x = x.get()
    return np.asarray(x, dtype=dtype)


def _ring_worthy(x: Any) -> bool:
    """A copy that ``transfer``'s ring takes: plain numbers, at least its direct size."""
    from .transfer import DIRECT_BYTES  # noqa: PLC0415

    return x.dtype.kind in "biufc" and x.nbytes >= DIRECT_BYTES


def _on_current_device(x: Any) -> bool:
    """Whether a CuPy array lives on the current device (the ring is that device's)."""
    device = getattr(x.data, "device_id", None)
    return device is None or device == current_device_id()


def to_host(x: Any) -> Any:
    return to_side(x, "cpu")


def current_device_id() -> int:
    """The current CUDA device's id (a cache key for per-device GPU state)."""
    return int(cupy_module().cuda.runtime.getDevice())


def synchronize() -> None:
    """Wait for the current GPU stream; a no-op without a GPU."""
    cp, _ = _probe_cupy()
    if cp is not None:
        cp.cuda.get_current_stream().synchronize()


@contextlib.contextmanager
def gpu_memory_guard(what: str) -> Iterator[None]:
    """Turn CuPy's out-of-memory error into one that names the work and the sizes."""
    cp, _ = _probe_cupy()
    if cp is None:
        yield
        return
    try:
        yield
    except cp.cuda.memory.OutOfMemoryError as exc:
        raise gpu_out_of_memory(what, exc) from exc
    except MemoryError as exc:
        # CuPy's sorts (thrust) raise a bare MemoryError("std::bad_alloc") when their
        # workspace does not fit on the GPU (cupy/cupy#9899); a host allocation failure
        # says otherwise, and is left as it is.
        if "bad_alloc" not in str(exc) or isinstance(exc, GPUOutOfMemoryError):
            raise
        raise gpu_out_of_memory(what, exc) from exc


def gpu_out_of_memory(what: str, exc: BaseException) -> GPUOutOfMemoryError:
    """gpu_memory_guard's error for CuPy's OutOfMemoryError ``exc`` (for a caller whose
    every microsecond counts: a ``try`` costs nothing, a ``with`` a few µs of host time)."""
    cp = cupy_module()
    free, total = cp.cuda.runtime.memGetInfo()
    pool = cp.get_default_memory_pool()
    return GPUOutOfMemoryError(
        f"{what}: the GPU ran out of memory ({exc}); free {free / 2**30:.2f} GiB of "
        f"{total / 2**30:.2f} GiB, CuPy pool holds {pool.total_bytes() / 2**30:.2f} GiB"
    )


def require_gpu_bytes(needed: int, what: str) -> None:
    """Fail early, with the figure, when an allocation plan cannot fit on the GPU."""
    cp = cupy_module()
    free, total = cp.cuda.runtime.memGetInfo()
    reusable = cp.get_default_memory_pool().free_bytes()
    if needed > free + reusable:
        raise GPUOutOfMemoryError(
            f"{what}: needs {needed / 2**30:.2f} GiB of GPU memory but only "
            f"{(free + reusable) / 2**30:.2f} GiB of {total / 2**30:.2f} GiB is available"
        )


def host_available_bytes() -> int | None:
    """Memory the host can still give this process (MemAvailable), or None if unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def require_host_bytes(needed: int, what: str) -> None:
    """Fail early, with the figure, when a CPU path's arrays cannot fit in host memory.

    Large NumPy zeros are allocated lazily, so without this check an oversized plan is
    killed by the kernel's OOM killer while it runs instead of raising.
    """
    available = host_available_bytes()
    if available is not None and needed > available:
        raise MemoryError(
            f"{what}: needs {needed / 2**30:.2f} GiB of host memory but only "
            f"{available / 2**30:.2f} GiB is available (the GPU path needs it on the GPU instead)"
        )


def usable_cores(cap: int | None = None) -> int:
    """How many host threads a CPU-parallel step should use: at least 1, at most ``cap``.

    The one place that counts host cores for the package's thread pools (the R-MAT draw,
    the pinned-copy ring, DIMACS parsing and writing); each caller passes its own cap.
    The count is the CPUs this process may run on (``os.sched_getaffinity``: a cpuset or
    ``taskset`` limit, as in containers and batch jobs), not every CPU of the machine: a
    pool sized by the machine on 4 CPUs of 64 runs 16 threads a core. ``os.cpu_count()``
    where that call does not exist (not Linux).
    """
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        count = os.cpu_count() or 1
    return max(1, count if cap is None else min(cap, count))


@functools.lru_cache(maxsize=4)
def gpu_properties(device_id: int = 0) -> dict[str, Any]:
    """Name, multiprocessors, memory and compute capability of a GPU (cached)."""
    cp = cupy_module()
    props = cp.cuda.runtime.getDeviceProperties(device_id)
    name = props["name"]
    return {
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "multiprocessors": int(props["multiProcessorCount"]),
        "memory_bytes": int(props["totalGlobalMem"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "l2_bytes": int(props.get("l2CacheSize", 0)),
        "shared_per_block_optin": int(props.get("sharedMemPerBlockOptin", 0)),
        "max_threads_per_multiprocessor": int(props.get("maxThreadsPerMultiProcessor", 0)),
    }


def device_name(side: Side | None = None) -> str:
    """A human-readable name of what runs the work, for benchmark reports."""
    if side == "gpu" or (side is None and gpu_available()):
        return gpu_properties()["name"]
    import platform  # noqa: PLC0415

    return f"CPU ({platform.processor() or platform.machine()})"
