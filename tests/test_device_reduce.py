"""Issue 19: the DMR GPU path reduces through morphgpu.device_reduce (one build per device),
never through CuPy's reductions, which compile per array size (CUB block size from the
length). CPU: read the code. GPU: the helpers against NumPy on several sizes."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from morphgpu import device_reduce, reorder
from morphgpu.dmr import gpu, mesh, predicates

SIZE_KEYED = {"any", "all", "sum", "max", "min", "count_nonzero", "argmax", "argmin",
              "nonzero", "flatnonzero", "mean", "prod"}
# where a host (NumPy) value is reduced on purpose: (file, line text fragment)
HOST_OK = {("gpu.py", "np.flatnonzero"), ("predicates.py", "np.flatnonzero")}
# compactions CuPy does with its scan: one chunk size (512), a second kernel only past 512
# elements, so a size threshold, not a size key; api._warm_up_inputs has an input past it
SCANS = {("mesh.py", "xp.flatnonzero(mesh.seg"), ("mesh.py", "xp.nonzero(same)")}


@pytest.mark.parametrize("module", [gpu, mesh, predicates])
def test_no_cupy_reduction_on_the_dmr_gpu_path(module):
    path = Path(module.__file__)
    lines = path.read_text().splitlines()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SIZE_KEYED:
                text = lines[node.lineno - 1]
                base = node.func.value
                if isinstance(base, ast.Name) and base.id == "device_reduce":
                    continue
                if any(path.name == f and frag in text for f, frag in SCANS):
                    continue
                if isinstance(base, ast.Name) and base.id == "np":
                    assert any(path.name == f and frag in text for f, frag in HOST_OK), (
                        f"{path.name}:{node.lineno}: {text.strip()}")
                    continue
                raise AssertionError(f"{path.name}:{node.lineno}: size-keyed {text.strip()}")


def test_quantise_reduces_through_the_floor():
    src = ast.get_source_segment(Path(reorder.__file__).read_text(), next(
        n for n in ast.walk(ast.parse(Path(reorder.__file__).read_text()))
        if isinstance(n, ast.FunctionDef) and n.name == "_quantise"))
    assert "device_reduce.min_max" in src and ".min()" not in src and "xp.all" not in src


def test_host_helpers_match_numpy():
    rng = np.random.default_rng(0)
    for n in (0, 1, 5, 513, 4097):
        b = rng.random(n) < 0.3
        assert device_reduce.count_nonzero(b) == np.count_nonzero(b)
        assert device_reduce.any_true(b) == bool(b.any())
        assert device_reduce.all_true(b) == bool(b.all())
        hits = np.flatnonzero(b)
        assert device_reduce.first_true(b) == (hits[0] if hits.size else -1)


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 31, 32, 513, 2049, 100_003, 3_000_001])
def test_device_helpers_match_numpy(n):
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(n)
    for p in (0.0, 1e-4, 0.5, 1.0):
        b = rng.random(n) < p
        db = cp.asarray(b)
        assert device_reduce.count_nonzero(db) == np.count_nonzero(b)
        assert device_reduce.any_true(db) == bool(b.any())
        assert device_reduce.all_true(db) == bool(b.all())
        hits = np.flatnonzero(b)
        assert device_reduce.first_true(db) == (hits[0] if hits.size else -1)
        assert device_reduce.first_true(db[::3]) == (
            np.flatnonzero(b[::3])[0] if np.flatnonzero(b[::3]).size else -1)
        i = rng.integers(-2, 3, n).astype(np.int32)
        assert device_reduce.count_nonzero(cp.asarray(i)) == np.count_nonzero(i)
        assert device_reduce.count_nonzero(cp.asarray(i.view(np.uint32))) == np.count_nonzero(i)
    if n:
        x = rng.standard_normal(n) * 1e300
        assert device_reduce.min_max(cp.asarray(x)) == (x.min(), x.max())
        assert device_reduce.min_max(cp.asarray(x)[::2]) == (x[::2].min(), x[::2].max())
        x[n // 2] = np.nan
        lo, hi = device_reduce.min_max(cp.asarray(x))
        assert np.isnan(lo) and np.isnan(hi)
        x[n // 2] = -np.inf
        assert device_reduce.min_max(cp.asarray(x))[0] == -np.inf
    else:
        with pytest.raises(ValueError):
            device_reduce.min_max(cp.zeros(0))
