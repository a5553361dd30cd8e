"""Host constants read from kernel files (kernels.source_constants), so host and kernel
cannot drift apart; no GPU needed."""

from __future__ import annotations

from morphgpu import kernels


def test_source_constants_reads_file_scope_integer_constexprs(tmp_path):
    """File-scope integer constexprs with literal values, several per line; not those
    inside functions, not computed ones, not other types."""
    src = tmp_path / "k.cu"
    src.write_text("constexpr int A = 1, B_2 = -3;  // a comment\n"
                   "constexpr i64 BIG = 4096;\n"
                   "constexpr int C = A + 1;\n"
                   "constexpr float F = 1.5f;\n"
                   "__device__ void f() {\n    constexpr int LOCAL = 7;\n}\n")
    kernels.source_constants.cache_clear()
    assert kernels.source_constants(src) == {"A": 1, "B_2": -3, "BIG": 4096}


def test_partitioned_host_constants_are_the_kernels():
    """The host side of the partitioned search takes the kernel's ring and chunk sizes from
    kernels/partitioned.cu, and the NumPy twin's mode codes are the kernel's."""
    from morphgpu.bfs import bitmap_levels
    from morphgpu.bfs.gpu import partitioned

    found = kernels.source_constants(partitioned.PARTITIONED_FILE)
    assert (partitioned.MODE_RING, partitioned.HUB_CHUNK) == (found["MODE_RING"],
                                                              found["HUB_CHUNK"])
    assert (bitmap_levels.DONE, bitmap_levels.TOP_DOWN, bitmap_levels.BOTTOM_UP) == (
        found["MODE_DONE"], found["MODE_TOP_DOWN"], found["MODE_BOTTOM_UP"])
