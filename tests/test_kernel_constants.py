"""Host constants read from kernel files (kernels.source_constants), so host and kernel
cannot drift apart; no GPU needed."""

from __future__ import annotations

import pytest

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


def test_source_constants_refuses_a_name_set_twice(tmp_path):
    """Preprocessor branches are not evaluated: one name, two values, is an error (naming
    the file and the name), one name set twice alike is not."""
    src = tmp_path / "twice.cu"
    src.write_text("#ifdef X\nconstexpr int N = 1;\n#else\nconstexpr int N = 2;\n#endif\n")
    with pytest.raises(ValueError, match="twice.cu.*N"):
        kernels.source_constants(src)
    same = tmp_path / "same.cu"
    same.write_text("#ifdef X\nconstexpr int N = 1;\n#else\nconstexpr int N = 1;\n#endif\n")
    assert kernels.source_constants(same) == {"N": 1}


def test_host_constants_of_the_persistent_bfs_and_the_mst_are_their_kernels():
    from morphgpu.bfs.gpu import modules, persistent
    from morphgpu.mst import gpu as mst_gpu

    found = kernels.source_constants(modules.PERSISTENT_FILE)
    assert persistent.OPTIONS == found["OPT_SPREAD"] | found["OPT_HYSTERESIS"]
    assert persistent.CTRL_WIDEST_FRONTIER == found["WIDEST_FRONTIER"]
    # The workspace's ctrl holds 8 words, the first 6 the rounds' rotating slots of 2: the
    # idle flag and the widest frontier take the other two.
    assert sorted((found["IDLE_FLAG"], found["WIDEST_FRONTIER"])) == [6, 7]
    mst = kernels.source_constants(mst_gpu.KERNEL_PATH)
    assert (mst_gpu.HUGE_ROW, mst_gpu.PROFILE_ROWS) == (mst["HUGE_ROW"], mst["PROFILE_ROWS"])
