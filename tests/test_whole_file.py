"""Output files are written whole or not at all (morphgpu.whole_file), and the writers that
use it leave the old file as it was when they fail half-way."""

from __future__ import annotations

import os
import stat

import pytest

from morphgpu import sp
from morphgpu.sp import cnf as cnf_module
from morphgpu.whole_file import written_whole


class Boom(Exception):
    pass


def leftovers(directory) -> list[str]:
    return sorted(p for p in os.listdir(directory) if p.endswith(".tmp"))


def test_success_replaces_and_keeps_the_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    target.chmod(0o640)
    with written_whole(target, "w") as fh:
        fh.write("new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftovers(tmp_path) == []


def test_new_file_gets_opens_mode(tmp_path):
    with written_whole(tmp_path / "a.bin", "wb") as fh:
        fh.write(b"x")
    with open(tmp_path / "b.bin", "wb") as fh:
        fh.write(b"x")
    assert (stat.S_IMODE((tmp_path / "a.bin").stat().st_mode)
            == stat.S_IMODE((tmp_path / "b.bin").stat().st_mode))


def test_failure_leaves_the_old_file(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(Boom), written_whole(target, "w") as fh:
        fh.write("half of the new")
        raise Boom
    assert target.read_text() == "old\n"
    assert leftovers(tmp_path) == []


def test_failure_makes_no_new_file(tmp_path):
    with pytest.raises(Boom), written_whole(tmp_path / "never.txt", "w"):
        raise Boom
    assert os.listdir(tmp_path) == []


def test_a_link_keeps_pointing_at_the_replaced_file(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with written_whole(link, "w") as fh:
        fh.write("new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_non_regular_targets_are_written_in_place():
    with written_whole(os.devnull, "w") as fh:
        fh.write("discarded")


def test_errors_as_open_gives_them(tmp_path):
    with pytest.raises(FileNotFoundError), written_whole(tmp_path / "no" / "x.txt", "w"):
        pass
    with pytest.raises(IsADirectoryError), written_whole(tmp_path, "w"):
        pass
    with pytest.raises(ValueError, match="mode"), written_whole(tmp_path / "x", "r"):
        pass


@pytest.mark.parametrize("name", ["f.cnf", "f.cnf.gz", "f.cnf.xz", "f.cnf.bz2"])
def test_write_dimacs_failing_half_way_leaves_the_old_file(tmp_path, monkeypatch, name):
    target = tmp_path / name
    old = sp.random_ksat(50, 3, ratio=4.0, seed=1)
    cnf_module.write_dimacs(old, target)
    before = target.read_bytes()
    real = cnf_module.format_clause_passes

    def failing(*args, **kwargs):
        yield next(iter(real(*args, **kwargs)))
        raise Boom

    monkeypatch.setattr(cnf_module, "format_clause_passes", failing)
    with pytest.raises(Boom):
        cnf_module.write_dimacs(sp.random_ksat(80, 3, ratio=4.0, seed=2), target)
    assert target.read_bytes() == before and leftovers(tmp_path) == []
    monkeypatch.setattr(cnf_module, "format_clause_passes", real)
    back = cnf_module.read_dimacs(target)
    assert (back.n_vars, back.n_clauses) == (old.n_vars, old.n_clauses)
