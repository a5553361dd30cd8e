"""Reliability of the ``morphgpu`` command line: bad input gets a one-line message on
stderr naming the argument or the file and a nonzero exit status, never a traceback, a
hang or a wrong answer; a failed command leaves no partial output files.

Each test says what the command did before its fix.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from morphgpu import cli, sp

DATA = Path(__file__).resolve().parent / "data"
POLY = DATA / "dmr" / "square_hole.poly"
GRAPH = DATA / "small_symmetric.mtx"


def _one_line_error(err: str, command: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith(f"morphgpu {command}: error: "), err
    return lines[0]


def test_refine_that_does_not_converge_is_a_one_line_error(monkeypatch, capsys):
    # Before: `morphgpu refine square_hole.poly --min-angle 45` ended after 220 rounds in a
    # RuntimeError traceback ("... it is not converging, stopped"), which the command did
    # not catch. The limits are lowered so that the same path is met in a few rounds.
    from morphgpu.dmr import api  # noqa: PLC0415

    monkeypatch.setattr(api, "DIVERGENCE_FLOOR", 50)
    monkeypatch.setattr(api, "DIVERGENCE_FACTOR", 1)
    code = cli.main(["refine", str(POLY), "--min-angle", "45", "--device", "cpu"])
    captured = capsys.readouterr()
    warning, error = captured.err.splitlines()
    assert warning.startswith("morphgpu refine: warning: min_angle=45.0 is above 33.8°")
    assert code == 1 and captured.out == ""
    assert "not converging" in _one_line_error(error, "refine")


def test_a_warning_is_one_line_naming_the_command(capsys):
    # Before: Python's format, two lines naming our source: "/.../morphgpu/dmr/cli.py:48:
    # UserWarning: min_angle=35.0 is above 33.8°: ..." and "  out, stats = api.refine_wi...".
    import warnings  # noqa: PLC0415

    assert cli.main(["refine", str(POLY), "--min-angle", "34", "--device", "cpu"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("morphgpu refine: warning: min_angle=34.0 is above 33.8°")
    assert err.count("\n") == 1 and "cli.py" not in err
    assert warnings.showwarning.__module__ == "warnings"  # put back for the caller


@pytest.mark.parametrize("plot", ["missing/picture.png", "picture.notaformat"])
def test_refine_whose_plot_fails_writes_no_mesh_files(tmp_path, capsys, plot):
    # Before: the .node/.ele/.poly/.neigh files were written, then the plot failed
    # ("[Errno 2] No such file or directory: '.../missing/picture.png'"), exit 1 with the
    # mesh files left behind.
    pytest.importorskip("matplotlib")
    code = cli.main(["refine", str(POLY), "--device", "cpu", "--max-area", "0.5",
                     "--output", str(tmp_path / "out"), "--plot", str(tmp_path / plot)])
    _one_line_error(capsys.readouterr().err, "refine")
    assert code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_refine_whose_mesh_cannot_be_written_leaves_no_plot(tmp_path, capsys):
    # The other half of the fix above: the plot is now made first, so a mesh that then
    # cannot be written (a missing folder) must take it away again.
    pytest.importorskip("matplotlib")
    code = cli.main(["refine", str(POLY), "--device", "cpu", "--max-area", "0.5",
                     "--output", str(tmp_path / "missing" / "out"),
                     "--plot", str(tmp_path / "picture.png")])
    _one_line_error(capsys.readouterr().err, "refine")
    assert code == 1 and list(tmp_path.iterdir()) == []


def test_refine_writes_both_when_both_can_be_written(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert cli.main(["refine", str(POLY), "--device", "cpu", "--max-area", "0.5",
                     "--output", str(tmp_path / "out"),
                     "--plot", str(tmp_path / "picture.png")]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["out.ele", "out.neigh", "out.node", "out.poly", "picture.png"]


@pytest.mark.parametrize("extra", [["--min-angle", "20"], ["--max-area", "0.5"],
                                   ["--min-angle", "30"]])
def test_refine_switches_with_angle_or_area_options_conflict(tmp_path, capsys, extra):
    # Before: `refine square_hole.poly --switches pq --min-angle 20` ran the switches alone
    # (no angle bound), exit 0, the --min-angle silently ignored.
    code = cli.main(["refine", str(POLY), "--device", "cpu", "--switches", "pq", *extra,
                     "--output", str(tmp_path / "out")])
    line = _one_line_error(capsys.readouterr().err, "refine")
    assert code == 1 and "--switches" in line and list(tmp_path.iterdir()) == []


def test_refine_defaults_and_switches_alone_still_run(capsys):
    assert cli.main(["refine", str(POLY), "--device", "cpu", "--check", "--json"]) == 0
    assert cli.main(["refine", str(POLY), "--device", "cpu", "--switches", "pq30",
                     "--check"]) == 0
    assert '"valid": true' in capsys.readouterr().out


@pytest.mark.parametrize("extra", [["--k", "5"], ["--ratio", "2"], ["--k", "3"]])
def test_sat_file_with_random_formula_options_conflicts(tmp_path, capsys, extra):
    # Before: `sat f.cnf --k 5` solved the file, ignored --k and exited 10 (SATISFIABLE).
    cnf = tmp_path / "f.cnf"
    cnf.write_text("p cnf 3 2\n1 -2 0\n2 3 0\n")
    code = cli.main(["sat", str(cnf), "--device", "cpu", *extra,
                     "--output", str(tmp_path / "model.txt")])
    captured = capsys.readouterr()
    line = _one_line_error(captured.err, "sat")
    assert code == 1 and "--k and --ratio" in line and captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.cnf"]


def test_sat_random_options_still_apply(capsys):
    assert cli.main(["sat", "--random", "40", "--k", "4", "--ratio", "2", "--seed", "3",
                     "--device", "cpu", "--no-model"]) == 10
    assert "c morphgpu sat: random 4-SAT n=40 ratio=2.0 seed=3" in capsys.readouterr().out
    assert cli.main(["sat", "--random", "40", "--seed", "3", "--device", "cpu",
                     "--no-model"]) in (0, 10, 20)
    assert "random 3-SAT n=40 ratio=4.2 seed=3" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "written"), [("dist", "dist.npy"), ("dist.npy", "dist.npy"),
                                               ("dist.NPY", "dist.NPY"),
                                               ("dist.txt", "dist.txt.npy")])
def test_bfs_output_is_reported_by_the_name_written(tmp_path, capsys, name, written):
    # Before: `bfs g.mtx --source 0 --output dist` wrote dist.npy (np.save appends .npy)
    # and reported "distances_file": "dist"; dist.NPY was written as dist.NPY.npy.
    assert cli.main(["bfs", str(GRAPH), "--source", "0", "--device", "cpu", "--json",
                     "--output", str(tmp_path / name)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p.name for p in tmp_path.iterdir()] == [written]
    assert out["distances_file"] == str(tmp_path / written)
    np.testing.assert_array_equal(np.load(tmp_path / written), [0, 1, 1, 2])


@pytest.mark.parametrize(("name", "written"), [("forest.NPY", "forest.NPY"),
                                               ("forest", "forest.npy")])
def test_mst_output_is_reported_by_the_name_written(tmp_path, capsys, name, written):
    # Before: `mst g.mtx --output forest.NPY` reported edges_file "forest.NPY" while
    # np.save wrote forest.NPY.npy (it appends .npy unless the name ends in ".npy").
    assert cli.main(["mst", str(GRAPH), "--device", "cpu", "--json",
                     "--output", str(tmp_path / name)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [p.name for p in tmp_path.iterdir()] == [written]
    assert out["edges_file"] == str(tmp_path / written)
    assert np.load(tmp_path / written).shape == (3, 3)


@pytest.mark.parametrize("as_json", [True, False])
def test_bfs_failed_check_keeps_stdout_one_document(monkeypatch, capsys, as_json):
    # Before: a failed --check printed "morphgpu bfs: <why>" on stdout ahead of the --json
    # document, which then did not parse. (The check is made to fail: a correct search
    # passes it.)
    from morphgpu.bfs import cli as bfs_cli  # noqa: PLC0415
    from morphgpu.bfs.validate import BFSValidationError  # noqa: PLC0415

    def failing(*args, **kwargs):
        raise BFSValidationError("vertex 3: distance 2, parent at 0")

    monkeypatch.setattr(bfs_cli, "graph500_check", failing)
    code = cli.main(["bfs", str(GRAPH), "--source", "0", "--device", "cpu", "--check",
                     *(["--json"] if as_json else [])])
    captured = capsys.readouterr()
    assert code == 1
    if as_json:
        out = json.loads(captured.out)
        assert out["valid"] is False and out["problem"] == "vertex 3: distance 2, parent at 0"
    else:
        assert captured.out.startswith("morphgpu bfs\n")
        assert "problem" in captured.out and "vertex 3: distance 2" in captured.out


def test_a_closed_stdout_is_a_one_line_error(tmp_path):
    # Before: `morphgpu info >&-` ended in "AttributeError: 'NoneType' object has no
    # attribute 'flush'" with a traceback (Python makes sys.stdout None), and every line
    # printed before it was dropped silently.
    proc = subprocess.run(
        ["sh", "-c", 'exec "$0" -m morphgpu bfs "$1" --source 0 --device cpu --output "$2" >&-',
         sys.executable, str(GRAPH), str(tmp_path / "d.npy")],
        capture_output=False, stderr=subprocess.PIPE, text=True, timeout=120,
        cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 1
    assert proc.stderr == "morphgpu: error: standard output is closed\n"
    assert list(tmp_path.iterdir()) == []


def _last_line(err: str) -> str:
    """What a terminal shows last: the text after the last carriage return or newline."""
    return err.replace("\r", "\n").rstrip("\n").rsplit("\n", 1)[-1]


def test_refine_failure_erases_its_progress_line_first(monkeypatch, capsys):
    # Before: the tqdm line stayed, and the error was glued onto it: "refine [00:00],
    # round 112: 1041 bad, ..., 2241 trianglesmorphgpu refine: error: dmr.refine: ...".
    from morphgpu.dmr import api  # noqa: PLC0415

    monkeypatch.setenv("MORPHGPU_PROGRESS", "1")
    monkeypatch.setattr(api, "DIVERGENCE_FLOOR", 50)
    monkeypatch.setattr(api, "DIVERGENCE_FACTOR", 1)
    assert cli.main(["refine", str(POLY), "--min-angle", "45", "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert "round" in err  # the bar was drawn
    assert _last_line(err).startswith("morphgpu refine: error: dmr.refine: min_angle=45.0")


def test_sat_failure_erases_its_progress_line_first(monkeypatch, capsys):
    # Before: as for refine, the error line was glued onto the bar the solve had drawn.
    from morphgpu.sp import api  # noqa: PLC0415

    def failing(*args, progress=None, **kwargs):
        progress("round 1: 40 free")
        raise RuntimeError("solve: stopped")

    monkeypatch.setenv("MORPHGPU_PROGRESS", "1")
    monkeypatch.setattr(api, "solve", failing)
    assert cli.main(["sat", "--random", "40", "--seed", "1", "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert "sat [" in err  # the bar was drawn
    assert _last_line(err) == "morphgpu sat: error: solve: stopped"


def test_an_interrupted_command_ends_without_a_traceback(tmp_path):
    # Before: Ctrl-C (SIGINT) during `sat --random 3 --ratio 100` (then a minute and more
    # of local search; now enumerated in milliseconds) printed a KeyboardInterrupt
    # traceback through morphgpu's modules. A formula near the threshold keeps the CPU's
    # surveys busy for many seconds.
    import os  # noqa: PLC0415
    import signal  # noqa: PLC0415

    proc = subprocess.Popen(
        [sys.executable, "-m", "morphgpu", "sat", "--random", "20000", "--ratio", "4.25",
         "--seed", "1", "--device", "cpu"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=Path(__file__).resolve().parents[1], env={**os.environ, "MORPHGPU_PROGRESS": "1"},
        # As a shell starts a foreground command: a test run started in the background
        # (`cmd &` in a script) ignores SIGINT, the child inherits that, and Python then
        # never turns Ctrl-C into KeyboardInterrupt (the command ran on for minutes).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = ""
    while "sat [" not in seen:  # the progress bar: imports done, solving
        char = proc.stderr.read(1)
        assert char, seen
        seen += char
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and _last_line(err) == "morphgpu: interrupted"


def test_an_error_without_a_message_still_says_what_it_is(monkeypatch, capsys):
    # Before: `bfs /dev/zero --source 0` under `ulimit -v 3000000` read until NumPy raised
    # a bare MemoryError() and printed "morphgpu bfs: error: " with nothing after it.
    from morphgpu import graph_formats  # noqa: PLC0415

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(graph_formats, "read", exhausted)
    assert cli.main(["bfs", str(GRAPH), "--source", "0", "--device", "cpu"]) == 1
    assert _one_line_error(capsys.readouterr().err, "bfs") == "morphgpu bfs: error: out of memory"


def _needs_c_frontend():
    import shutil  # noqa: PLC0415

    pytest.importorskip("pycparser")
    if shutil.which("cpp") is None:
        pytest.skip("needs the C preprocessor cpp")


@pytest.mark.parametrize(("text", "said"), [
    ('#include "missing.h"\nint main(void) { return 0; }\n',
     ": cpp failed: {name}:1:10: fatal error: missing.h: No such file or directory"),
    ("#error boom\n#error two\n", ": cpp failed: {name}:1:2: error: #error boom"),
])
def test_pta_cpp_failure_is_one_line(tmp_path, capsys, text, said):
    # Before: the message ran over cpp's diagnostics, five or six lines of source excerpts,
    # carets and "compilation terminated.".
    _needs_c_frontend()
    source = tmp_path / "prog.c"
    source.write_text(text)
    assert cli.main(["pta", str(source), "--device", "cpu"]) == 1
    line = _one_line_error(capsys.readouterr().err, "pta")
    assert line == f"morphgpu pta: error: {source}" + said.format(name=source)


def test_pta_c_file_that_is_not_utf8_is_named(tmp_path, capsys):
    # Before: "morphgpu pta: error: 'utf-8' codec can't decode byte 0xff in position 124:
    # invalid start byte", naming no file (the position was in cpp's output).
    _needs_c_frontend()
    good, bad = tmp_path / "good.c", tmp_path / "bad.c"
    good.write_text("int main(void) { int *p; int x; p = &x; return 0; }\n")
    bad.write_bytes(b"char *s = \"\xff\";\n")
    assert cli.main(["pta", str(good), str(bad), "--device", "cpu"]) == 1
    line = _one_line_error(capsys.readouterr().err, "pta")
    assert line.startswith(f"morphgpu pta: error: {bad}: not UTF-8 text")


def _sat_case(tmp_path):
    path = tmp_path / "f.cnf"
    sp.write_dimacs(sp.random_ksat(40, 3, ratio=3.0, seed=1), path)
    return ["sat", str(path), "--device", "cpu", "--output"], path, path


def _graph_case(command, extra=(), name="g.mtx"):
    def make(tmp_path):
        path = tmp_path / name
        path.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3 2\n")
        return [command, str(path), *extra, "--device", "cpu", "--output"], path, path
    return make


def _pta_case(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("3\n2\n0,1,0\n1,2,1\n")
    return ["pta", str(path), "--device", "cpu", "--write"], path, path


def _refine_case(tmp_path):
    path = tmp_path / "box.poly"
    path.write_text("4 2 0 0\n1 0 0\n2 1 0\n3 1 1\n4 0 1\n4 0\n1 1 2\n2 2 3\n3 3 4\n4 4 1\n0\n")
    return ["refine", str(path), "--device", "cpu", "--output"], path, tmp_path / "box"


@pytest.mark.parametrize("case", [
    _sat_case, _graph_case("mst", ["--format", "mtx"], "g.txt"),  # a text forest file
    _graph_case("bfs", ["--format", "mtx", "--source", "0"], "g.npy"),  # .npy added
    _pta_case, _refine_case],
                         ids=["sat", "mst", "bfs", "pta", "refine"])
def test_an_output_naming_the_input_is_refused_before_the_run(tmp_path, capsys, case):
    """`sat f.cnf --output f.cnf` replaced the formula with its model once solved (and
    refine --output STEM of the input's stem its .poly): refused, the input unchanged."""
    argv, path, output = case(tmp_path)
    before = path.read_bytes()
    assert cli.main([*argv, str(output)]) != 0
    err = capsys.readouterr().err
    assert "is the input file" in err and "Traceback" not in err
    assert path.read_bytes() == before


@pytest.mark.parametrize(("argv", "option"), [
    (["sat", "--random", "10"], "--output"), (["mst", "g.mtx"], "--output"),
    (["bfs", "g.mtx", "--source", "0"], "--output"), (["refine", "m.poly"], "--output"),
    (["refine", "m.poly"], "--plot")])
def test_an_empty_output_path_is_refused(capsys, argv, option):
    """`--output ''` was taken as no option: the run wrote nothing and said nothing."""
    with pytest.raises(SystemExit) as stop:
        cli.main([*argv, option, ""])
    assert stop.value.code == 2
    assert f"argument {option}: an empty path" in capsys.readouterr().err
