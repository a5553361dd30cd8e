"""Issue 19: no compile keyed on the input. What the dmr GPU path can ask to compile is a
fixed list (gpu.kernel_requests), all of it loaded before the first round
(gpu.build_variants), and nothing else in the wing compiles. Checked on the CPU, with the
loader replaced by a recorder and by reading the code; the GPU test at the end runs the
real thing in a fresh process with an empty CuPy cache and counts what a second, third
and fourth input compile (none may).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from morphgpu import barrier, kernels
from morphgpu.dmr import gpu

DMR_DIR = Path(gpu.__file__).parent
COMPILING = {"load_module", "get_kernel", "persistent_kernel", "RawModule", "RawKernel",
             "ElementwiseKernel", "ReductionKernel", "compile_with_cache", "memoize"}


class _Module:
    def get_function(self, name):
        return name


def _record(monkeypatch):
    calls = []

    def load_module(path, *, defines=None, **kwargs):
        calls.append((str(path), "module", dict(defines or {})))
        return _Module()

    def persistent_kernel(path, name, *, mode, block, defines=None, **kwargs):
        assert mode in barrier.BARRIER_MODES and block == gpu.BLOCK
        calls.append((str(path), name, dict(defines or {})))
        return object()

    monkeypatch.setattr(kernels, "load_module", load_module)
    monkeypatch.setattr(barrier, "persistent_kernel", persistent_kernel)
    return calls


@pytest.mark.parametrize("tail", [None, "cooperative", "xiao-feng"])
def test_build_variants_loads_exactly_the_fixed_requests(monkeypatch, tail):
    calls = _record(monkeypatch)
    variants = gpu.build_variants(object(), tail)
    assert [v.max_cavity for v in variants] == list(gpu.CAVITY_SIZES)
    assert len(variants) == gpu.LEVELS
    assert calls == gpu.kernel_requests(tail)
    # asking again (a second mesh) asks for the same builds, which the loader caches
    calls.clear()
    gpu.build_variants(object(), tail)
    assert calls == gpu.kernel_requests(tail)


def test_requests_have_fixed_types_and_bounds():
    for _, _, defines in gpu.kernel_requests("cooperative"):
        assert defines["MG_VID_T"] == "int" and defines["MG_EID_T"] == "long long"
        assert defines["MAX_CAVITY"] in gpu.CAVITY_SIZES and defines["DMR_BLOCK"] == gpu.BLOCK
    with pytest.raises(ValueError):
        gpu.kernel_defines(100)  # no build on demand for another bound


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            yield node, f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _function(tree, name):
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_only_build_variants_compiles_in_gpu_py():
    tree = ast.parse(Path(gpu.__file__).read_text())
    variant = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
                   and n.name == "Variant")
    init = _function(variant, "__init__")
    allowed = {id(n) for n, _ in _calls(init)}
    for node, name in _calls(tree):
        if name in COMPILING:
            assert id(node) in allowed, f"gpu.py line {node.lineno}: {name} outside Variant"
    builders = {id(n) for n, _ in _calls(_function(tree, "build_variants"))}
    for node, name in _calls(tree):
        if name == "Variant":
            assert id(node) in builders, f"gpu.py line {node.lineno}: a Variant built on demand"
    # _refine calls build_variants once, as a plain statement before its loop (not inside
    # a loop or a branch that depends on the mesh)
    refine = _function(tree, "_refine")
    top = [n for stmt in refine.body if not isinstance(stmt, (ast.While, ast.For, ast.If))
           for n, name in _calls(stmt) if name == "build_variants"]
    every = [n for n, name in _calls(refine) if name == "build_variants"]
    assert len(top) == 1 and every == top
    loop = next(i for i, stmt in enumerate(refine.body) if isinstance(stmt, ast.While))
    assert top[0].lineno < refine.body[loop].lineno


def test_no_other_dmr_module_compiles():
    for path in sorted(DMR_DIR.glob("*.py")):
        if path.name == "gpu.py":
            continue
        tree = ast.parse(path.read_text())
        names = {name for _, name in _calls(tree)}
        assert not names & COMPILING, f"{path.name} compiles: {names & COMPILING}"


def test_compile_check_covers_every_request():
    # tests/test_kernels_compile.py compiles exactly these defines with nvcc
    sys.path.insert(0, str(Path(__file__).parent))
    try:
        import test_kernels_compile as tkc
    finally:
        sys.path.pop(0)
    covered = [variant for path, variant in
               (case.values for case in tkc.CASES)
               if path == kernels.resolve(gpu.KERNEL_FILE)]
    for mode in barrier.BARRIER_MODES:
        for _, name, defines in gpu.kernel_requests(mode):
            want = {**defines, **(barrier.mode_defines(mode) if name == "refine_tail" else {})}
            assert want in covered, f"not compiled by the nvcc test: {want}"


_SCRIPT = r"""
import json, os, sys, time
from pathlib import Path
from morphgpu.dmr import api

cache = Path(os.environ["CUPY_CACHE_DIR"])
def files():
    return sorted(str(p) for p in cache.rglob("*") if p.is_file())
def timed(mesh):
    t0 = time.perf_counter()
    api.refine_with_stats(mesh, min_angle=30.0, device="gpu")
    return time.perf_counter() - t0
n = int(sys.argv[1])
inputs = {"uniform": api.random_mesh(n // 2, seed=1),
          "clustered": api.clustered_mesh(n // 2, seed=2),
          "holes": api.holes_pslg(n // 2, seed=3),
          "uniform_again": api.random_mesh(n // 3, seed=4)}
out = {}
def kernels_in(paths):  # the kernel names of new cache entries (their saved sources)
    names = []
    for p in paths:
        src = Path(p + ".cu") if Path(p + ".cu").exists() else None
        if src is not None:
            names += [l.split("(")[0].split()[-1] for l in src.read_text().splitlines()
                      if "__global__" in l]
    return names
timed(api.random_mesh(500, seed=0))  # the package's first use
after_first = files()
for name, mesh in inputs.items():
    first = timed(mesh)
    new = [f for f in files() if f not in after_first and not f.endswith(".cu")]
    out[name] = {"first_s": first, "steady_s": timed(mesh), "new_cache_files": new,
                 "kernels": kernels_in(new)}
print(json.dumps(out))
"""


@pytest.mark.gpu
@pytest.mark.parametrize("n", [200_000, 2_000_000])
def test_first_call_on_new_input_compiles_nothing(tmp_path, n):
    """Issue 19: after the package's first use, a new input (clustered, PSLG with holes)
    compiles nothing (CuPy writes each compile to its disk cache: no new file) and its
    first call costs at most 1 s more than its second."""
    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path / "cupy_cache"),
           "CUPY_CACHE_SAVE_CUDA_SOURCE": "1"}  # a failure names the kernels compiled
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(n)], capture_output=True,
                          text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, row in report.items():
        assert row["new_cache_files"] == [], (name, row)
        assert row["first_s"] <= row["steady_s"] + 1.0, (name, row)
