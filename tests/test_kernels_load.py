"""The kernel loader on a GPU: package include path, defines, cache, compile errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from morphgpu import barrier, kernels

PROBE = Path(__file__).parent / "data" / "loader_probe.cu"

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("mode", barrier.BARRIER_MODES)
def test_persistent_kernel_counts_every_block_once_per_round(mode):
    import cupy as cp

    grid = barrier.persistent_kernel(str(PROBE), "count_rounds", mode=mode, block=128)
    rounds = 50
    per_round = cp.zeros(rounds, dtype=cp.uint64)
    grid.launch(np.int32(rounds), per_round)
    assert (per_round.get() == grid.grid).all()


WIDTHS = [(np.int32, np.int32), (np.int32, np.int64), (np.int64, np.int64)]


@pytest.mark.parametrize("vid,eid", WIDTHS)
def test_index_defines_pick_the_c_types(vid, eid):
    import cupy as cp

    k = kernels.get_kernel(str(PROBE), "index_width", defines=kernels.index_defines(vid, eid))
    vb, eb = cp.zeros(1, dtype=vid), cp.zeros(1, dtype=eid)
    k((1,), (32,), (vb, eb))
    assert int(vb.get()[0]) == np.dtype(vid).itemsize
    assert int(eb.get()[0]) == np.dtype(eid).itemsize


def test_compile_error_names_the_file(tmp_path):
    bad = tmp_path / "broken.cu"
    bad.write_text('extern "C" __global__ void k() { this is not C++; }\n')
    with pytest.raises(kernels.KernelCompileError, match="broken.cu"):
        kernels.load_module(str(bad))
