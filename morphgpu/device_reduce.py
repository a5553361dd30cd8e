"""Whole-array reductions that compile once per device (kernels/reduce.cu).

Issue 19: CuPy compiles its reductions with launch parameters baked into the source and
chosen from the array's size. ``x.any()``, ``x.all()``, ``x.min()``, ``x.max()`` and
``count_nonzero`` go through CUB block reductions whose block size is
``clp2(ceil(n / 4))`` clamped to [32, 512] and whose index type turns 64-bit past 2**31
(cupy/_core/_cub_reduction.pyx, ``_get_cub_block_specs`` and ``_cub_convert_to_c_scalar``),
so a reduction over an array of a new size can compile again (measured on an H100: a
200k-point mesh after the warm-up compiled ``cupy_cub_all_pass1``). These helpers launch
one fixed build with a fixed block; the size is a launch argument only.

Each helper takes a NumPy or a CuPy array and answers on the host (one small copy for a
CuPy array): NumPy arrays go to NumPy, so the CPU paths are unchanged. Supported device
dtypes: bool, int8/uint8 and int32/uint32 for the counts, float64 for :func:`min_max`;
1-D arrays of any stride, contiguous arrays of any shape (others are raveled, a copy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend, kernels

KERNEL_FILE = "kernels/reduce.cu"
BLOCK = 256
KERNELS = ("count_nonzero_u8", "count_nonzero_i32", "first_nonzero_u8", "min_max_f64")


def _kernel(name: str) -> Any:
    return kernels.get_kernel(KERNEL_FILE, name)  # the loader caches the module


def _flat(x: Any) -> tuple[Any, int]:
    """(a 1-D view or copy of x, its stride in elements)."""
    if x.ndim != 1:
        x = x.reshape(-1) if x.flags.c_contiguous else x.ravel()
    stride = x.strides[0] // x.itemsize if x.size > 1 else 1
    return x, stride


def _run(name: str, x: Any, words: int) -> np.ndarray:
    """Launch ``name`` over x into ``words`` zeroed u64 result words; the words, on the host."""
    cp = backend.cupy_module()
    out = cp.empty(words, dtype=cp.uint64)
    out.data.memset_async(0, out.nbytes)  # no fill kernel
    n = x.size
    if n:
        sms = backend.gpu_properties(backend.current_device_id())["multiprocessors"]
        grid = max(1, min(-(-n // BLOCK), sms * 8))
        _kernel(name)(
            (grid,), (BLOCK,), (x, np.int64(n), np.int64(_flat(x)[1]), out))
    return out.get()


def _counted(x: Any) -> tuple[str, Any]:
    x, _ = _flat(x)
    kind, size = x.dtype.kind, x.dtype.itemsize
    if kind == "b" or (kind in "iu" and size == 1):
        return "count_nonzero_u8", x.view(np.uint8)
    if kind in "iu" and size == 4:
        return "count_nonzero_i32", x.view(np.int32)
    raise TypeError(f"device_reduce: no device count for dtype {x.dtype}")


def count_nonzero(x: Any) -> int:
    """The number of nonzero (True) elements."""
    if not backend.is_cupy_array(x):
        return int(np.count_nonzero(x))
    name, flat = _counted(x)
    return int(_run(name, flat, 1)[0])


def any_true(x: Any) -> bool:
    """``bool(x.any())``."""
    if not backend.is_cupy_array(x):
        return bool(np.any(x))
    return count_nonzero(x) > 0


def all_true(x: Any) -> bool:
    """``bool(x.all())`` (True for an empty array, as NumPy)."""
    if not backend.is_cupy_array(x):
        return bool(np.all(x))
    return count_nonzero(x) == x.size


def first_true(x: Any) -> int:
    """Flat index of the first nonzero element, -1 if none (``argmax`` of a bool array,
    except that NumPy's answers 0 when none is set)."""
    if not backend.is_cupy_array(x):
        hits = np.flatnonzero(x)
        return int(hits[0]) if hits.size else -1
    flat, _ = _flat(x)
    if not (flat.dtype.kind == "b" or flat.dtype.itemsize == 1):
        raise TypeError(f"device_reduce.first_true: bool or byte arrays, not {flat.dtype}")
    found = int(_run("first_nonzero_u8", flat.view(np.uint8), 1)[0])
    return flat.size - found if found else -1


def _decode(key: int) -> float:
    bits = key ^ (1 << 63) if key >> 63 else ~key & ((1 << 64) - 1)
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def min_max(x: Any) -> tuple[float, float]:
    """(``float(x.min())``, ``float(x.max())``) of a float64 array: NaN for both if any
    element is NaN, ValueError when empty (NumPy's rules)."""
    if not backend.is_cupy_array(x):
        if x.size == 0:
            raise ValueError("min_max: zero-size array")
        return float(np.min(x)), float(np.max(x))
    flat, _ = _flat(x)
    if flat.dtype != np.float64:
        raise TypeError(f"device_reduce.min_max: float64 arrays, not {flat.dtype}")
    if flat.size == 0:
        raise ValueError("min_max: zero-size array")
    lo, hi, nans = (int(v) for v in _run("min_max_f64", flat, 3))
    if nans:
        return float("nan"), float("nan")
    return _decode(~lo & ((1 << 64) - 1)), _decode(hi)


def warm_up() -> None:
    """Load every kernel of the file on the current device and run each once."""
    cp = backend.cupy_module()
    for name in KERNELS:
        _kernel(name)
    count_nonzero(cp.ones(3, dtype=cp.bool_))
    count_nonzero(cp.ones(3, dtype=cp.int32))
    first_true(cp.ones(3, dtype=cp.bool_))
    min_max(cp.ones(3, dtype=cp.float64))
