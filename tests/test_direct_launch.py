"""morphgpu.direct_launch: arguments packed once into C storage, launched by the driver.

CPU: the pack's bytes, read back through ctypes, hold each value at its C width, and a
rewrite changes only the named slot (a fake driver records the launch). GPU: a real
kernel (kernels/figures.cu) launched through a pack gives what CuPy's own launch gives.
"""

from __future__ import annotations

import ctypes
import types

import numpy as np
import pytest

from morphgpu import backend, direct_launch


class _Array:
    """Stands in for a CuPy array: what the pack reads is data.ptr."""

    def __init__(self, ptr: int) -> None:
        self.data = types.SimpleNamespace(ptr=ptr)


class _Driver:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def launchCooperativeKernel(self, *args):  # noqa: N802 (CuPy's name)
        self.calls.append(("cooperative", *args))

    def launchKernel(self, *args):  # noqa: N802
        self.calls.append(("plain", *args))


@pytest.fixture
def fake_cupy(monkeypatch):
    driver = _Driver()
    stream = types.SimpleNamespace(ptr=77)
    cp = types.SimpleNamespace(cuda=types.SimpleNamespace(
        driver=driver, get_current_stream=lambda: stream))
    monkeypatch.setattr(backend, "cupy_module", lambda: cp)
    return driver


def _slots(pack: direct_launch.PackedLaunch) -> list[int]:
    """The address each parameter slot of the pack points at."""
    n = len(pack.slot)
    array = (ctypes.c_void_p * n).from_address(pack._array_address)
    return [array[i] for i in range(n)]


def test_values_sit_at_their_c_widths(fake_cupy):
    kernel = types.SimpleNamespace(kernel=types.SimpleNamespace(ptr=1234))
    params = ("a", "n", "k", "x", "flag", "nothing")
    pack = direct_launch.PackedLaunch(
        kernel, params,
        {"a": _Array(0xDEAD0000), "n": np.int64(-5), "k": np.int32(7), "x": np.float32(0.5),
         "flag": np.uint8(3), "nothing": None}, cooperative=True, shared_mem=64)
    at = _slots(pack)
    assert ctypes.c_uint64.from_address(at[0]).value == 0xDEAD0000
    assert ctypes.c_int64.from_address(at[1]).value == -5
    assert ctypes.c_int32.from_address(at[2]).value == 7
    assert ctypes.c_float.from_address(at[3]).value == 0.5
    assert ctypes.c_uint8.from_address(at[4]).value == 3
    assert ctypes.c_uint64.from_address(at[5]).value == 0
    pack.launch(10, 256, n=np.int64(9), nothing=_Array(0xBEEF))
    assert ctypes.c_int64.from_address(at[1]).value == 9
    assert ctypes.c_uint64.from_address(at[5]).value == 0xBEEF
    assert ctypes.c_int32.from_address(at[2]).value == 7  # untouched
    kind, function, gx, gy, gz, bx, by, bz, shared, stream, params_address = \
        fake_cupy.calls[-1]
    assert (kind, function, gx, bx, shared, stream) == ("cooperative", 1234, 10, 256, 64, 77)
    assert params_address == pack._array_address and (gy, gz, by, bz) == (1, 1, 1, 1)


def test_plain_launch_and_null_rewrite(fake_cupy):
    kernel = types.SimpleNamespace(kernel=types.SimpleNamespace(ptr=5))
    pack = direct_launch.PackedLaunch(kernel, ("p",), {"p": _Array(42)}, cooperative=False)
    pack.launch(1, 32, p=None)
    assert ctypes.c_uint64.from_address(_slots(pack)[0]).value == 0
    assert fake_cupy.calls[-1][0] == "plain" and fake_cupy.calls[-1][-1] == 0


@pytest.mark.parametrize("bad", [5, 0.5, "x", np.complex64(1)])
def test_values_without_a_c_type_are_refused(fake_cupy, bad):
    kernel = types.SimpleNamespace(kernel=types.SimpleNamespace(ptr=5))
    with pytest.raises(TypeError, match="'v'"):
        direct_launch.PackedLaunch(kernel, ("v",), {"v": bad}, cooperative=False)


def test_names_must_match_the_parameters(fake_cupy):
    kernel = types.SimpleNamespace(kernel=types.SimpleNamespace(ptr=5))
    with pytest.raises(ValueError, match="no value"):
        direct_launch.PackedLaunch(kernel, ("a", "b"), {"a": None}, cooperative=False)
    with pytest.raises(ValueError, match="no kernel parameters named"):
        direct_launch.PackedLaunch(kernel, ("a",), {"a": None, "z": None}, cooperative=False)
    pack = direct_launch.PackedLaunch(kernel, ("a",), {"a": None}, cooperative=False)
    with pytest.raises(TypeError, match="pointer"):
        pack.set(a=np.int64(3))


@pytest.mark.gpu
def test_packed_launch_matches_cupy_launch():
    cp = backend.cupy_module()
    from morphgpu import generators, kernels  # noqa: PLC0415

    g = generators.kronecker(10, 8, seed=3, device="gpu")
    defines = kernels.index_defines(g.indices.dtype, g.indptr.dtype)
    kernel = kernels.get_kernel("bfs/kernels/figures.cu", "bfs_result_figures",
                                defines=defines)
    rng = np.random.default_rng(0)
    dist = cp.asarray(rng.integers(-1, 6, g.n_vertices).astype(np.int32))
    expected = cp.zeros(3, dtype=cp.uint64)
    kernel((8,), (128,), (g.indptr, g.indices, dist, np.int64(g.n_vertices), expected))
    got = cp.zeros(3, dtype=cp.uint64)
    pack = direct_launch.PackedLaunch(
        kernel, ("indptr", "indices", "dist", "n", "out"),
        {"indptr": g.indptr, "indices": g.indices, "dist": dist,
         "n": np.int64(g.n_vertices), "out": got}, cooperative=False)
    pack.launch(8, 128)
    np.testing.assert_array_equal(got.get(), expected.get())
    degrees = np.diff(g.indptr.get())
    host = dist.get()
    assert int(got[0]) == int(degrees[host >= 0].sum()) and int(got[1]) == int(host.max())
    # a rewrite of one slot: half the labels unreached
    half = cp.where(cp.arange(g.n_vertices) % 2 == 0, dist, -1).astype(cp.int32)
    again = cp.zeros(3, dtype=cp.uint64)
    pack.launch(8, 128, dist=half, out=again)
    host = half.get()
    assert int(again[0]) == int(degrees[host >= 0].sum())
