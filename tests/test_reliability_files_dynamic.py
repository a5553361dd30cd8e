"""Malformed updates files of ``morphgpu dyn`` (bfs/updates.py): UpdatesFormatError naming
the file and the 1-based line, never another exception, a shifted line number or a line
read as another edge."""

from __future__ import annotations

import bz2
import gzip
import json
import math
import re

import pytest
from file_damage import damaged, write
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu import cli
from morphgpu.bfs.updates import UpdatesFormatError, read_updates, run_updates
from morphgpu.dynamic_graph import DynamicGraph

SETTINGS = settings(suppress_health_check=[HealthCheck.function_scoped_fixture],
                    deadline=None, max_examples=200)

TIMED = b"# t op u v [w]\n1 + 0 1 2.5\n1 - 2 3\n2 + 1 2 0.5\n\n3 - 0 1\n"
PLAIN = b"+ 0 1\n- 2 3\n\n+ 1 2\n+ 3 4\n"


def raises_at(name: str, line: int, what: str = ""):
    return pytest.raises(UpdatesFormatError, match=re.escape(f"{name}:{line}: {what}"))


def edges(batches) -> list[tuple[str, int, int]]:
    return [(run.sign, u, v) for b in batches for run in b.runs for u, v in zip(run.src, run.dst)]


def test_a_byte_order_mark_is_read_past(tmp_path):
    # Old: the mark stayed on the first token: an untimed file's first line was refused
    # ("got '\ufeff+ 0 1'") and a timed file's first time became '\ufeff1', so its first
    # line was a batch of its own, apart from the other lines of time 1.
    plain = read_updates(write(tmp_path, "p.txt", b"\xef\xbb\xbf+ 0 1\n"))
    assert edges(plain) == [("+", 0, 1)]
    timed = read_updates(write(tmp_path, "t.txt", b"\xef\xbb\xbf1 + 0 1\n1 + 1 2\n"))
    assert [b.time for b in timed] == ["1"] and edges(timed) == [("+", 0, 1), ("+", 1, 2)]


@pytest.mark.parametrize("pack", [gzip.compress, bz2.compress])
def test_compressed_updates_are_read(tmp_path, pack):
    # Old: "not a text file" (the graph readers took compressed files, this one did not).
    path = write(tmp_path, "u.txt.gz", pack(TIMED))
    assert edges(read_updates(path)) == edges(read_updates(write(tmp_path, "u.txt", TIMED)))
    with pytest.raises(UpdatesFormatError, match="truncated or corrupt"):
        read_updates(write(tmp_path, "cut.gz", pack(TIMED)[:-6]))


@pytest.mark.parametrize(("data", "line"), [
    # Old: str.splitlines ended lines at \v, \f, \x1c-\x1e, \x85 and \u2028 too, so the
    # error was reported one line late (line 4).
    (b"+ 0 1\n\x0b\n+ 1 x\n", 3),
    ("+ 0 1 # a\u2028b\n+ 1 2\n+ 1 x\n".encode(), 3),
    (b"+ 0 1 # a\x1cb\r\n\r\n+ 1 x\r\n", 3),
])
def test_line_numbers_count_lf_crlf_and_cr_only(tmp_path, data, line):
    with raises_at("u.txt", line, "vertex ids must be integers"):
        read_updates(write(tmp_path, "u.txt", data))


def test_a_comment_is_not_split_into_a_change(tmp_path):
    # Old: '+ 0 1 # was\f+ 2 3' was two lines, the comment's tail the insertion (2, 3).
    got = read_updates(write(tmp_path, "u.txt", b"+ 0 1 # was\x0c+ 2 3\n+ 3 4\n"))
    assert edges(got) == [("+", 0, 1), ("+", 3, 4)]
    assert read_updates(write(tmp_path, "cr.txt", b"+ 0 1\r+ 1 2\r"))[0].runs[0].src == [0, 1]


def test_a_comment_line_does_not_end_a_batch(tmp_path):
    # Old: a line holding only a comment ended the batch as a blank line does, so
    # commenting out one change ('# + 5 6') split its batch in two: two report rows, and a
    # batch of insertions and deletions searched twice, the first time incrementally.
    got = read_updates(write(tmp_path, "u.txt", b"+ 0 1\n# + 5 6\n  # why\n- 1 2\n\n+ 2 3\n"))
    assert [(b.line, [(r.sign, r.src, r.dst) for r in b.runs]) for b in got] == [
        (1, [("+", [0], [1]), ("-", [1], [2])]), (6, [("+", [2], [3])])]


@pytest.mark.parametrize(("line", "what"), [
    # Old: int() and float() read these: '1_0' as 10, Arabic-Indic one as 1, and a
    # no-break space split the tokens as a blank would.
    (b"+ 0 1_0", "vertex ids must be integers"),
    ("+ 0 \u0661".encode(), "vertex ids must be integers"),
    ("+ 0\u00a01".encode(), "expected '[TIME] + U V"),
    (b"+ 0 1 1_0", "weight '1_0' is not a number"),
    ("+ 0 1 \u0662".encode(), "weight '\u0662' is not a number"),
])
def test_numbers_python_reads_but_the_format_does_not_are_refused(tmp_path, line, what):
    with raises_at("u.txt", 2, what):
        read_updates(write(tmp_path, "u.txt", b"+ 1 2\n" + line + b"\n"))


@pytest.mark.parametrize("token", [b"9223372036854775808", b"1" + b"0" * 30, b"9" * 5000])
def test_ids_past_int64_are_refused_with_the_line(tmp_path, token):
    # Old: with no n_vertices they were read, and run_updates' int64 batch raised
    # OverflowError naming no file; 5000 digits were "vertex ids must be integers".
    with raises_at("u.txt", 1, "V = "):
        read_updates(write(tmp_path, "u.txt", b"+ 0 " + token + b"\n"))
    assert edges(read_updates(write(tmp_path, "ok.txt", b"+ 0 9223372036854775806\n"))) == [
        ("+", 0, 2**63 - 2)]


def test_bytes_that_are_not_utf8_name_their_line(tmp_path):
    # Old: "FILE: not a text file (...)", no line.
    with raises_at("u.txt", 3, "not a text file"):
        read_updates(write(tmp_path, "u.txt", b"+ 0 1\n+ 1 2\n+ 2 3 # caf\xe9\n"))


@SETTINGS
@given(data=st.data(), valid=st.sampled_from([TIMED, PLAIN]))
def test_damaged_files_read_or_name_the_line(tmp_path, data, valid):
    raw = damaged(data, valid, b"+-#0123456789. \t\r\n\x0b\x0c\xef\xbb\xbf\x00\xffe_x")
    path = write(tmp_path, "u.txt", raw)
    n_lines = max(1, len(raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")))
    try:
        batches = read_updates(path, n_vertices=6)
    except UpdatesFormatError as exc:
        m = re.match(re.escape(str(path)) + r"(:(\d+):| the batch at line (\d+) )", str(exc))
        assert m, str(exc)
        assert 1 <= int(m.group(2) or m.group(3)) <= n_lines
        return
    for batch in batches:
        for run in batch.runs:
            assert run.sign in "+-"
            assert all(0 <= x < 6 for x in run.src + run.dst)
            assert all(math.isfinite(w) for w in run.weights)
            assert not run.weights or len(run.weights) == len(run.src)


def test_the_command_reads_a_compressed_file_and_names_a_bad_line(tmp_path, capsys):
    graph = write(tmp_path, "g.gr", b"p tw 4 3\n1 2\n2 3\n3 4\n")
    good = write(tmp_path, "u.txt.gz", gzip.compress(b"\xef\xbb\xbf1 + 0 3\n1 + 3 2\n"))
    assert cli.main(["dyn", str(graph), str(good), "--source", "0", "--device", "cpu",
                     "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["batches"]
    assert [r["batch"] for r in rows] == [None, "1"]
    assert (rows[1]["inserted"], rows[1]["duplicates"]) == (1, 1)  # 3-2 was there
    assert (rows[0]["levels"], rows[1]["levels"]) == (4, 3)  # the path 0-1-2-3, then 0-3
    bad = write(tmp_path, "bad.txt", b"+ 0 1\n\x0b\n+ 0 x\n")
    assert cli.main(["dyn", str(graph), str(bad), "--source", "0", "--device", "cpu"]) == 1
    assert "bad.txt:3: vertex ids must be integers" in capsys.readouterr().err


@pytest.mark.parametrize(("data", "line", "has"), [
    (b"+ 0 1 1.0\n+ 1 2 2.0\n+ 2 3\n", 3, "none"),
    (b"1 + 0 1\n1 + 1 2\n1 + 2 3 4.5\n", 3, "one"),
])
def test_a_weight_missing_from_a_run_names_its_own_line(tmp_path, data, line, has):
    # Old: "FILE: the batch at line 1 gives weights for some insertions and not others",
    # the batch's first line, not the line that broke the run.
    with raises_at("u.txt", line, "the batch at line 1 gives weights for some insertions "
                   f"and not others (this line has {has})"):
        read_updates(write(tmp_path, "u.txt", data))
    # A deletion in between starts a new run, which may leave weights out.
    assert read_updates(write(tmp_path, "ok.txt", b"+ 0 1 1.0\n- 0 1\n+ 1 2\n"))[0].runs[2] \
        .weights == []


@pytest.mark.parametrize(("kwargs", "name"), [
    # Old: base=0.5 read '+ 1 2' as the float ids 0.5 and 1.5, base=True as base 1,
    # base='1' raised a TypeError about 'int' and 'str', n_vertices=2.5 bounded ids by 2.5
    # and n_vertices=-3 gave "U = 1 is outside [0, -3)".
    ({"base": 0.5}, "base"), ({"base": True}, "base"), ({"base": "1"}, "base"),
    ({"base": -1}, "base"), ({"n_vertices": 2.5}, "n_vertices"),
    ({"n_vertices": True}, "n_vertices"), ({"n_vertices": -3}, "n_vertices"),
])
def test_bad_reader_arguments_name_the_argument(tmp_path, kwargs, name):
    with pytest.raises(ValueError, match=name):
        read_updates(write(tmp_path, "u.txt", b"+ 1 2\n"), **kwargs)


def test_run_updates_checks_every_id_before_the_first_batch(tmp_path):
    # Old: batches read without n_vertices were applied until the first bad id, which
    # raised "insert_edges: dst[0] = 9 is outside [0, 5)": the first batch's edge (0, 1)
    # stayed in the graph, and the error named no batch or line.
    batches = read_updates(write(tmp_path, "u.txt", b"+ 0 1\n\n- 2 3\n+ 1 9\n"))
    dg = DynamicGraph(5, device="cpu")
    with pytest.raises(UpdatesFormatError, match=r"the batch at line 3: V = 9 is outside"):
        run_updates(dg, batches, 0)
    assert (dg.n_edges, dg.version) == (0, 0)
    timed = read_updates(write(tmp_path, "t.txt", b"7 + 0 1\n8 + 5 1\n"))
    with pytest.raises(UpdatesFormatError, match=r"line 2 \(time 8\): U = 5"):
        run_updates(dg, timed, 0)
