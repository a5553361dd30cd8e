"""CuPy's compiler-version key kept on disk between processes (compiler_key_cache)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from morphgpu import compiler_key_cache


def _fake_cupy(cache_dir, monkeypatch, version="13.0.0", driver=12050):
    """A stand-in with the attributes compiler_key_cache reads from CuPy (the cache
    directory comes from CUPY_CACHE_DIR, as CuPy's does)."""
    monkeypatch.setenv("CUPY_CACHE_DIR", str(cache_dir))
    compiler = SimpleNamespace(_empty_file_preprocess_cache={})
    runtime = SimpleNamespace(runtimeGetVersion=lambda: 12040, driverGetVersion=lambda: driver)
    cuda = SimpleNamespace(compiler=compiler, runtime=runtime)
    return SimpleNamespace(__version__=version, cuda=cuda)


@pytest.fixture
def fresh_state(monkeypatch):
    monkeypatch.setattr(compiler_key_cache, "_state", {"path": None, "known": None})

    def new_process():
        compiler_key_cache._state.update(path=None, known=None)
    return new_process


KEY = ("compute_90", ("-std=c++17", "-I/x", "-ftz=true"), (12, 4), "nvrtc")


def test_an_entry_written_by_one_process_is_read_by_the_next(tmp_path, fresh_state,
                                                             monkeypatch):
    first = _fake_cupy(tmp_path, monkeypatch)
    compiler_key_cache.seed(first)
    first.cuda.compiler._empty_file_preprocess_cache[KEY] = "// banner 1\n"
    compiler_key_cache.save(first)

    fresh_state()
    second = _fake_cupy(tmp_path, monkeypatch)
    compiler_key_cache.seed(second)
    assert second.cuda.compiler._empty_file_preprocess_cache == {KEY: "// banner 1\n"}


@pytest.mark.parametrize("change", [{"version": "13.1.0"}, {"driver": 12060}])
def test_another_toolkit_reads_nothing(tmp_path, fresh_state, change, monkeypatch):
    first = _fake_cupy(tmp_path, monkeypatch)
    compiler_key_cache.seed(first)
    first.cuda.compiler._empty_file_preprocess_cache[KEY] = "// banner 1\n"
    compiler_key_cache.save(first)

    fresh_state()
    other = _fake_cupy(tmp_path, monkeypatch, **change)
    compiler_key_cache.seed(other)
    assert other.cuda.compiler._empty_file_preprocess_cache == {}


@pytest.mark.parametrize("text", ["[", "[1, 2]", '[[["a", 1], 3]]', '[[[true], "b"]]',
                                  '{"a": "b"}', "", "[" * 100000])
def test_a_damaged_file_is_ignored(tmp_path, fresh_state, text, monkeypatch):
    cp = _fake_cupy(tmp_path, monkeypatch)
    path = compiler_key_cache._file(cp)
    path.write_text(text)
    compiler_key_cache.seed(cp)
    assert cp.cuda.compiler._empty_file_preprocess_cache == {}
    cp.cuda.compiler._empty_file_preprocess_cache[KEY] = "// banner\n"
    compiler_key_cache.save(cp)  # and replaced by a good one
    assert "banner" in path.read_text()


def test_an_unwritable_cache_dir_is_not_an_error(tmp_path, fresh_state, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    cp = _fake_cupy(blocker / "sub", monkeypatch)
    compiler_key_cache.seed(cp)
    cp.cuda.compiler._empty_file_preprocess_cache[KEY] = "// banner\n"
    compiler_key_cache.save(cp)


def test_a_cupy_without_the_table_is_left_alone(tmp_path, fresh_state, monkeypatch):
    cp = _fake_cupy(tmp_path, monkeypatch)
    del cp.cuda.compiler._empty_file_preprocess_cache
    compiler_key_cache.seed(cp)
    compiler_key_cache.save(cp)
    assert list(tmp_path.iterdir()) == []


# What a process does before its first module of ours: nothing, or CuPy's own element-wise
# and reduction kernels (a solve's first array operations), which look their compiler key
# up before that load (backend's CuPy probe must read the keys before any compile).
FIRST_WORK = {
    "our module alone": "",
    "CuPy's kernels first": """
        x = cupy.arange(1000, dtype=cupy.int32)
        assert bool(((x != 3) & (x >= 0)).any())
    """,
}


@pytest.mark.gpu
@pytest.mark.parametrize("first_work", list(FIRST_WORK))
def test_a_new_process_compiles_no_empty_program(tmp_path, first_work):
    """Two processes do the same work and load the same kernel; the second must not call
    CuPy's _preprocess."""
    script = textwrap.dedent("""
        import sys
        import cupy
        from morphgpu import backend, kernels
        if sys.argv[1] == "second":
            def refuse(*a, **k):
                raise AssertionError("empty program compiled again")
            cupy.cuda.compiler._preprocess = refuse
        assert backend.gpu_available()
    """) + textwrap.dedent(FIRST_WORK[first_work]) + textwrap.dedent("""
        kernels.get_kernel(sys.argv[2], "index_width",
                           defines={"MG_VID_T": "int", "MG_EID_T": "int"})
        print("ok")
    """)
    probe = str(Path(__file__).parent / "data" / "loader_probe.cu")
    env = {**os.environ, "CUPY_CACHE_DIR": str(tmp_path)}
    for which in ("first", "second"):
        done = subprocess.run([sys.executable, "-c", script, which, probe],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]
        assert list(tmp_path.glob("morphgpu-nvrtc-banner-*.json")), list(tmp_path.iterdir())
