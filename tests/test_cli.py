"""The command line: info works everywhere; bad arguments give clear errors."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import threading
import types
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import cli, report


def test_info_json(capsys):
    assert cli.main(["info", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["morphgpu"] and "gpu" in out and "numpy" in out


def test_no_command_prints_help(capsys):
    assert cli.main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_commands_name_the_subcommands_each_wing_registers():
    for wing in cli.WINGS:
        mod = cli._wing_cli(wing)
        if mod is None:
            continue
        sub = argparse.ArgumentParser().add_subparsers()
        mod.register(sub)
        assert set(sub.choices) == {c for c, w in cli.COMMANDS.items() if w == wing}, wing


def test_a_command_line_needs_only_its_wing():
    assert cli.wings_needed(["sat", "f.cnf"]) == ("sp",)
    assert cli.wings_needed(["-v", "refine", "x.poly"]) == ("dmr",)
    for argv in ([], ["info"], ["demo"], ["-h", "sat"], ["--help"], ["--version"],
                 ["--verb", "sat"], ["nope"]):
        assert cli.wings_needed(argv) == cli.WINGS, argv


def test_top_level_help_still_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        cli.main(["-h", "sat"])
    out = capsys.readouterr().out
    for command in cli.COMMANDS:
        if cli._wing_cli(cli.COMMANDS[command]) is not None:
            assert command in out


def test_an_unknown_command_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        cli.main(["nope"])
    assert "sat" in capsys.readouterr().err


class _Ended(Exception):
    """os._exit, stood in for: the test process must go on."""


def _stand_in_exit(monkeypatch) -> list[int]:
    codes: list[int] = []

    def fake_exit(code: int) -> None:
        codes.append(code)
        raise _Ended

    monkeypatch.setattr(cli.os, "_exit", fake_exit)
    return codes


def test_leave_without_cupy_is_a_normal_exit(monkeypatch):
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    codes = _stand_in_exit(monkeypatch)
    with pytest.raises(SystemExit) as ended:
        cli.leave(10)
    assert ended.value.code == 10 and codes == []


def test_leave_with_cupy_flushes_then_skips_the_teardown(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", types.ModuleType("cupy"))
    codes = _stand_in_exit(monkeypatch)
    flushed: list[str] = []
    for name in ("stdout", "stderr"):
        stream = io.StringIO()
        monkeypatch.setattr(stream, "flush", lambda name=name: flushed.append(name))
        monkeypatch.setattr(sys, name, stream)
    with pytest.raises(_Ended):
        cli.leave(20)
    assert codes == [20] and flushed[-2:] == ["stdout", "stderr"]  # logging may flush first


def test_leave_waits_for_a_running_thread(monkeypatch):
    """A thread that is not a daemon gets Python's normal exit, which joins it."""
    monkeypatch.setitem(sys.modules, "cupy", types.ModuleType("cupy"))
    codes = _stand_in_exit(monkeypatch)
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        with pytest.raises(SystemExit) as ended:
            cli.leave(0)
    finally:
        release.set()
        worker.join()
    assert ended.value.code == 0 and codes == []


def test_leave_stops_idle_copy_threads_first(monkeypatch):
    from morphgpu import transfer  # noqa: PLC0415

    monkeypatch.setitem(sys.modules, "cupy", types.ModuleType("cupy"))
    codes = _stand_in_exit(monkeypatch)
    pool = ThreadPoolExecutor(2, thread_name_prefix="morphgpu-copy")
    pool.submit(lambda: None).result()  # a non-daemon worker, alive and idle
    monkeypatch.setattr(transfer, "_pool", pool)
    with pytest.raises(_Ended):
        cli.leave(0)
    assert codes == [0] and transfer._pool is None


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def test_the_command_prints_everything_into_a_pipe(device):
    """``python -m morphgpu`` (the console entry's path) ends with its code and all its
    output, stdout a pipe (block-buffered), on the GPU's quick exit as on the CPU's."""
    proc = subprocess.run(
        [sys.executable, "-m", "morphgpu", "sat", "--random", "3000", "--ratio", "3.0",
         "--seed", "2", "--device", device], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 10, proc.stderr
    lines = proc.stdout.splitlines()
    assert "s SATISFIABLE" in lines
    values = [int(v) for line in lines if line.startswith("v ") for v in line.split()[1:]]
    assert values[-1] == 0 and sorted(abs(v) for v in values[:-1]) == list(range(1, 3001))


@given(st.recursive(
    st.one_of(st.floats(), st.integers(-2**63, 2**63 - 1), st.text(max_size=5), st.none(),
              st.floats(width=32).map(np.float32)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=4), children, max_size=4)),
    max_leaves=12))
def test_json_output_is_strict_json(value):
    """--json documents parse with a strict reader: no bare Infinity or NaN (mst --json
    printed Infinity for an infinite total); finite values come back unchanged."""
    def refuse(word):
        raise ValueError(f"non-standard JSON constant {word}")

    back = json.loads(report.to_json({"v": value, "a": np.array([1.5, -np.inf, np.nan])}),
                      parse_constant=refuse)
    assert back["a"] == [1.5, "-inf", "nan"]

    def same(x, y):
        if isinstance(x, dict):
            return x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
        if isinstance(x, list):
            return len(x) == len(y) and all(map(same, x, y))
        if isinstance(x, (float, np.floating)) and not np.isfinite(x):
            return y == ("nan" if np.isnan(x) else "inf" if x > 0 else "-inf")
        return y == (x.item() if isinstance(x, np.generic) else x)

    assert same(value, back["v"])
