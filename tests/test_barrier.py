"""The grid barrier: rendezvous and memory ordering over many rounds, both modes; the
launcher's grid sizing; a too-large grid ends in an error instead of a hang."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from morphgpu import backend, barrier, kernels

PROBE = "kernels/barrier_probe.cu"


def test_unknown_mode_is_a_value_error():
    with pytest.raises(ValueError, match="barrier mode"):
        barrier.PersistentGrid(None, mode="spin")


def test_occupancy_estimate_respects_every_limit(monkeypatch):
    """The fallback estimate (used only if the driver call is missing) is the tightest of
    the register, thread and shared-memory limits."""

    class FakeKernel:
        attributes = {"num_regs": 64, "shared_size_bytes": 48 * 1024}

    props = {"max_threads_per_multiprocessor": 2048}
    monkeypatch.setattr(backend, "gpu_properties", lambda device_id=0: props)
    # 64 regs x 256 threads = 16384 regs per block -> 4 by registers; 2048/256 = 8 by
    # threads; 227 KiB / 48 KiB = 4 by shared memory.
    assert barrier._occupancy_from_attributes(FakeKernel(), 256, 0) == 4
    # 16 KiB more dynamic shared memory per block: 227 / 64 -> 3.
    assert barrier._occupancy_from_attributes(FakeKernel(), 256, 16 * 1024) == 3


VARIANTS = [
    ("xiao-feng", {}),
    ("xiao-feng", {"MG_BARRIER_THREADFENCE": None}),  # the classic fences, benchmarked too
    ("cooperative", {}),
    ("atomic", {}),
]


@pytest.mark.gpu
@pytest.mark.parametrize("mode, defines", VARIANTS, ids=[
    "acq-rel", "threadfence", "coop", "atomic"])
@pytest.mark.parametrize("block", [128, 1024])
def test_ten_thousand_rounds_no_block_runs_ahead(mode, defines, block):
    import cupy as cp

    grid = barrier.persistent_kernel(PROBE, "barrier_rounds", mode=mode, block=block,
                                     defines=defines)
    props = backend.gpu_properties()
    assert grid.grid >= props["multiprocessors"]  # at least one block per SM fits
    rounds = 10_000
    block_round = cp.zeros(grid.grid, dtype=cp.uint32)
    payload = cp.zeros(grid.grid * 8, dtype=cp.uint32)
    violations = cp.zeros(1, dtype=cp.uint64)
    grid.launch(np.int32(rounds), block_round, payload, violations)
    grid.check()
    assert int(violations.get()[0]) == 0
    assert (block_round.get() == rounds).all()


@pytest.mark.gpu
def test_grid_is_the_occupancy_limit():
    """The launcher fills the GPU exactly: blocks per SM from the driver times the SMs."""
    import cupy as cp

    grid = barrier.persistent_kernel(PROBE, "barrier_only", block=256)
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        grid.kernel.kernel.ptr, 256, 0
    )
    assert grid.grid == per_sm * backend.gpu_properties()["multiprocessors"]
    grid.launch(np.int32(100))
    grid.check()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("define", ["MG_BARRIER_THREADFENCE", "MG_BARRIER_ATOMIC"])
def test_barrier_variants_compile(define, tmp_path):
    """The variants the CI compile test does not build (it builds default and coop)."""
    cmd = kernels.nvcc_command(PROBE, tmp_path / "out.ptx", {define: None})
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("define", [None, "MG_BARRIER_ATOMIC"])
def test_too_many_blocks_times_out_instead_of_hanging(define):
    """Twice the resident grid cannot rendezvous; the barrier gives up and says so."""
    import cupy as cp

    defines = {"MG_BARRIER_TIMEOUT_MS": 200}
    if define:
        defines[define] = None
    kernel = kernels.get_kernel(PROBE, "barrier_only", defines=defines)
    grid = barrier.PersistentGrid(kernel, block=1024)
    grid.grid *= 2
    grid.state = cp.zeros(2 * grid.grid + 1, dtype=cp.uint32)
    grid.launch(np.int32(5))
    grid.launch(np.int32(5))  # a caller checks once after many launches: the abort stays
    with pytest.raises(RuntimeError, match="timed out"):
        grid.check()
    assert not grid.aborted()  # check() cleared it
