"""Inputs larger than the memory the machine has free: every reader refuses them with its
own format error naming the file, before or while reading, instead of being killed by the
system or raising a bare MemoryError. The bound (half of compressed.available_memory) is
lowered here to 1 MiB so the cases stay small: a regular file past it (refused by its
size), a device that never ends (/dev/zero), and a small compressed file that inflates
past it (gzip, xz, bzip2). Streams that are cut short or carry data after their end keep
their errors, and concatenated streams (``cat a.gz b.gz``) read whole."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path

import pytest
from file_damage import write

from morphgpu import compressed, graph_io
from morphgpu.bfs import updates
from morphgpu.dmr import triangle_io
from morphgpu.pta import constraints
from morphgpu.sp import cnf

LIMIT = 1 << 20

# (reader, its error, file suffix): each takes a path and reads it through compressed.
READERS = {
    "graph_io": (lambda p: graph_io.read_graph(p, "edgelist"), graph_io.GraphFormatError, ".txt"),
    "dimacs cnf": (cnf.read_dimacs, cnf.CNFFormatError, ".cnf"),
    "pta constraints": (lambda p: constraints.read_constraints(Path(p)),
                        constraints.ConstraintFormatError, ".txt.gz"),
    "triangle": (triangle_io.read_node, triangle_io.MeshFormatError, ".node"),
    "edge updates": (updates.read_updates, updates.UpdatesFormatError, ".txt"),
}
COMPRESSORS = {"gzip": gzip.compress, "xz": lzma.compress, "bzip2": bz2.compress}


@pytest.fixture
def small_memory(monkeypatch):
    monkeypatch.setattr(compressed, "available_memory", lambda: 2 * LIMIT)


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_file_past_the_memory_is_refused_by_its_size(tmp_path, small_memory, name):
    read, error, suffix = READERS[name]
    path = write(tmp_path, "big" + suffix, b"1 2\n" * (LIMIT // 2))
    with pytest.raises(error, match=r"big.*on disk.*half the memory available"):
        read(path)


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_without_end_is_refused_as_it_streams(small_memory, name):
    read, error, _ = READERS[name]
    with pytest.raises(error, match=r"/dev/zero: not a regular file.*memory available"):
        read("/dev/zero")


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
@pytest.mark.parametrize("name", sorted(READERS))
def test_a_small_file_that_inflates_past_the_memory_is_refused(tmp_path, small_memory,
                                                                name, kind):
    if name == "pta constraints" and kind != "gzip":
        pytest.skip("the points-to files are gzip only (by their .gz suffix)")
    if name == "triangle":
        pytest.skip("Triangle's files are read as they are (its tools never compress)")
    read, error, suffix = READERS[name]
    bomb = COMPRESSORS[kind](b"1 2\n" * (4 * LIMIT))  # 16 MiB in a few KiB
    assert len(bomb) < LIMIT
    path = write(tmp_path, "bomb" + suffix, bomb)
    with pytest.raises(error, match=r"bomb.*decompressed, it comes to more than .*half the memory"):
        read(path)


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_streams_whole_cut_short_and_followed_by_data(kind):
    z = COMPRESSORS[kind]
    data = os.urandom(3000) + b"x" * 3_000_000
    assert compressed.decompressed(z(data), "f", ValueError) == data
    assert compressed.decompressed(z(data) + z(b"tail"), "f", ValueError) == data + b"tail"
    assert compressed.decompressed(z(data) + b"\0" * 7, "f", ValueError) == data
    assert compressed.decompressed(z(b""), "f", ValueError) == b""
    whole = z(data)
    for cut in (len(whole) // 2, len(whole) - 1):
        with pytest.raises(ValueError, match="f: compressed stream is truncated or corrupt"):
            compressed.decompressed(whole[:cut], "f", ValueError)
    with pytest.raises(ValueError, match="data after the end"):
        compressed.decompressed(whole + b"junk", "f", ValueError)
