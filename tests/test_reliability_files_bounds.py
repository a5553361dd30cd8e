"""Inputs that would take more memory than the machine has free: a device that never ends
(/dev/zero) and a small compressed file built to inflate without end are refused with the
reader's own format error naming the file, instead of being read until the system kills
the process. The bound (half of compressed.available_memory, or MORPHGPU_MAX_INPUT_BYTES)
is lowered here to 1 MiB so the cases stay small. Genuine input is never refused by it: a
regular file is read whole, and a compressed one only counts against the bound past
compressed.BOMB_RATIO times its size (some virtual machines report a fraction of their
memory as available). Streams that are cut short or carry data after their end keep their
errors, and concatenated streams (``cat a.gz b.gz``) read whole."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path

import numpy as np
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
    "graph_io": (lambda p: graph_io.read_graph(p, "mtx"), graph_io.GraphFormatError, ".mtx"),
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


@pytest.mark.parametrize("kind", [None, *sorted(COMPRESSORS)])
def test_genuine_input_past_the_bound_is_read(tmp_path, small_memory, kind):
    """A 3 MiB Matrix Market file of random edges, plain or compressed as such text
    compresses (2-3x): read whole, past the 1 MiB bound."""
    rng = np.random.default_rng(0)
    pairs = rng.integers(1, 100_000, size=(250_000, 2))
    text = b"%%MatrixMarket matrix coordinate pattern general\n100000 100000 250000\n" + \
        b"".join(b"%d %d\n" % (int(u), int(v)) for u, v in pairs)
    assert len(text) > 2 * LIMIT
    data = text if kind is None else COMPRESSORS[kind](text)
    assert len(text) < compressed.BOMB_RATIO * len(data)
    path = write(tmp_path, "edges.mtx", data)
    assert compressed.read_bounded(path, ValueError) == data
    g = graph_io.read_graph(path, "mtx")
    assert g.n_vertices == 100_000 and g.indices.size == 250_000


def test_the_bound_can_be_set(monkeypatch):
    """MORPHGPU_MAX_INPUT_BYTES, for machines whose free-memory figure is wrong; a value
    that is not a number is ignored."""
    monkeypatch.setattr(compressed, "available_memory", lambda: 2 * LIMIT)
    bomb = gzip.compress(b"\0" * (8 * LIMIT))
    with pytest.raises(ValueError, match=compressed.LIMIT_VARIABLE):
        compressed.decompressed(bomb, "bomb.gz", ValueError)
    monkeypatch.setenv(compressed.LIMIT_VARIABLE, str(16 * LIMIT))
    assert len(compressed.decompressed(bomb, "bomb.gz", ValueError)) == 8 * LIMIT
    monkeypatch.setenv(compressed.LIMIT_VARIABLE, "lots")
    with pytest.raises(ValueError, match="half the memory available"):
        compressed.decompressed(bomb, "bomb.gz", ValueError)


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
    with pytest.raises(error, match=r"bomb.*decompressed, it comes to over 100 times its "
                                    r"size and more than .*half the memory"):
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
