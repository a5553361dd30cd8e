"""``morphgpu dyn``: the updates file (batches by time or by blank lines, errors with the
line), and the command's report checked against SciPy on the graph after each batch."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import cli
from morphgpu.bfs.updates import UpdatesFormatError, read_updates


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_batches_by_time_and_by_blank_lines(tmp_path):
    timed = _write(tmp_path, "t.txt", "# t op u v\n1 + 0 1\n1 - 2 3\n1 + 4 5 2.5\n"
                   "2 + 1 2\n\n2 + 3 4\n")
    batches = read_updates(timed)
    assert [b.time for b in batches] == ["1", "2"]
    assert [(r.sign, r.src, r.dst) for r in batches[0].runs] == [
        ("+", [0], [1]), ("-", [2], [3]), ("+", [4], [5])]
    assert batches[0].runs[2].weights == [2.5]
    assert [r.src for r in batches[1].runs] == [[1, 3]]  # a blank line does not split times
    plain = _write(tmp_path, "p.txt", "+ 1 2\n- 2 3\n\n+ 3 4\n")
    assert [len(b.runs) for b in read_updates(plain)] == [2, 1]
    one_based = read_updates(_write(tmp_path, "o.txt", "+ 1 2\n"), base=1)
    assert (one_based[0].runs[0].src, one_based[0].runs[0].dst) == ([0], [1])


@pytest.mark.parametrize("text,message", [
    ("1 + 0 1\n+ 1 2\n", r"\.txt:2: every line needs a time"),
    ("* 0 1\n", r"\.txt:1: expected '\[TIME\] \+ U V"),
    ("+ 0 x\n", r"\.txt:1: vertex ids must be integers"),
    ("+ 0 9\n", r"\.txt:1: V = 9 is outside \[0, 5\)"),
    ("- 0 1 2.0\n", r"\.txt:1: a deletion takes no weight"),
    ("+ 0 1 nan\n", r"\.txt:1: weight 'nan' is not finite"),
    ("+ 0 1 abc\n", r"\.txt:1: weight 'abc' is not a number"),
    ("+ 0 1 1.0\n+ 1 2\n", r"gives weights for some insertions and not others"),
])
def test_malformed_updates_name_the_line(tmp_path, text, message):
    path = _write(tmp_path, "bad.txt", text)
    with pytest.raises(UpdatesFormatError, match=message):
        read_updates(path, n_vertices=5)
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UpdatesFormatError, match="not a text file"):
        read_updates(binary)


def test_the_command_reports_each_batch_and_the_search_after_it(tmp_path, capsys):
    graph = _write(tmp_path, "g.gr", "p tw 6 5\n1 2\n2 3\n3 4\n4 5\n5 6\n")  # a path
    updates = _write(tmp_path, "u.txt", "1 + 0 5\n1 + 0 5\n2 - 0 5\n2 - 1 2\n3 + 1 2\n"
                     "3 - 4 4\n")
    assert cli.main(["dyn", str(graph), str(updates), "--source", "0", "--device", "cpu",
                     "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = report["batches"]
    assert [r["batch"] for r in rows] == [None, "1", "2", "3"]
    assert [r["edges"] for r in rows] == [5, 6, 4, 5]
    assert (rows[1]["inserted"], rows[1]["duplicates"]) == (1, 0)  # one edge, listed twice
    assert (rows[2]["deleted"], rows[2]["absent"]) == (2, 0)
    assert (rows[3]["inserted"], rows[3]["absent"]) == (1, 1)
    assert [r["search"] for r in rows] == ["fresh", "incremental", "fresh", "incremental"]
    # The reached counts and depths of the graph after each batch, by SciPy.
    edges = {(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)}
    for row, change in zip(rows[1:], [{"+": [(0, 5)]}, {"-": [(0, 5), (1, 2)]},
                                      {"+": [(1, 2)]}]):
        edges |= set(change.get("+", []))
        edges -= set(change.get("-", []))
        a = np.array(sorted(edges))
        m = sp.csr_matrix((np.ones(len(a)), (a[:, 0], a[:, 1])), shape=(6, 6))
        d = csgraph.shortest_path(m, directed=False, unweighted=True, indices=0)
        assert row["reached"] == int(np.isfinite(d).sum())
        assert row["levels"] == int(d[np.isfinite(d)].max()) + 1
    assert cli.main(["dyn", str(graph), str(updates), "--source", "0", "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "3 batches" in text and "incremental" in text
    assert cli.main(["dyn", str(graph), str(updates), "--source", "9", "--device", "cpu"]) == 1
    assert "--source 9 is outside [0, 6)" in capsys.readouterr().err
