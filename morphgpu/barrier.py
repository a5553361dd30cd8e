"""Persistent kernels over a grid-wide barrier (the host side of include/morphgpu/barrier.cuh).

A persistent kernel keeps every block resident for its whole life and separates rounds
(BFS levels, refinement rounds, Borůvka rounds) with ``mg::grid_sync``. That is only safe
when all blocks run at once, so the grid is sized here from the occupancy calculator:
``blocks_per_sm × multiprocessors``, never more.

Kernel convention: the barrier state (``unsigned*``) is the kernel's **last** argument;
the kernel builds ``mg::GridBarrier bar(state);`` and calls ``mg::grid_sync(bar)``.
``mode="xiao-feng"`` (default) uses the atomic-free barrier; ``mode="cooperative"``
compiles with ``-DMG_BARRIER_COOP`` and launches cooperatively so the same call is
``grid.sync()``; ``mode="atomic"`` compiles with ``-DMG_BARRIER_ATOMIC``: a counting
barrier (one release atomic per block, one generation word), no cooperative launch.
benchmarks/barrier.py measures the three.

The spinning barriers (Xiao–Feng, atomic) would hang on a grid larger than what fits at
once; instead a waiter gives up after ``MG_BARRIER_TIMEOUT_MS`` (20 s by default) and sets
an abort word in the state, which :meth:`PersistentGrid.check` turns into an error. The
abort word outlives the launch: only ``check()`` clears it, so a caller that launches many
times (one launch per round) checks once, where it reads its results anyway, and a timeout
in any launch is still reported (later launches then give up within 1024 polls per barrier
instead of running on a broken grid).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from . import backend, kernels

log = logging.getLogger("morphgpu")

BarrierMode = Literal["xiao-feng", "cooperative", "atomic"]
BARRIER_MODES: tuple[str, ...] = ("xiao-feng", "cooperative", "atomic")


def _occupancy_from_attributes(kernel: Any, block: int, shared_mem: int) -> int:
    """Blocks per SM from the kernel's registers and shared memory (conservative)."""
    attrs = kernel.attributes
    props = backend.gpu_properties()
    regs = max(1, int(attrs.get("num_regs", 32)))
    # Registers are allocated per warp in units of 256.
    regs_per_warp = -(-regs * 32 // 256) * 256
    warps = -(-block // 32)
    by_regs = 65536 // max(1, regs_per_warp * warps)
    by_threads = max(1, props["max_threads_per_multiprocessor"] or 2048) // block
    smem = int(attrs.get("shared_size_bytes", 0)) + int(shared_mem)
    by_smem = (227 * 1024) // smem if smem else 32
    return max(0, min(by_regs, by_threads, by_smem, 32))


def blocks_per_multiprocessor(kernel: Any, block: int, shared_mem: int = 0) -> int:
    """How many blocks of ``block`` threads of ``kernel`` fit on one SM at once."""
    cp = backend.cupy_module()
    try:
        occ = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, block, shared_mem
        )
    except Exception as exc:  # a CuPy without the driver call: estimate, and say so
        occ = _occupancy_from_attributes(kernel, block, shared_mem)
        log.warning("occupancy query failed (%s); estimated %d blocks per SM", exc, occ)
    if occ < 1:
        raise RuntimeError(
            f"kernel {getattr(kernel, 'name', kernel)} cannot be resident with {block} threads "
            f"and {shared_mem} bytes of dynamic shared memory per block"
        )
    return int(occ)


class PersistentGrid:
    """A kernel launched with exactly as many blocks as can be resident at once.

    The barrier state (``2 * grid`` flag words and one abort word, see barrier.cuh) is
    allocated once; its flag words are zeroed before every launch (one memset, a few µs),
    because each block counts its rounds from zero. The abort word is cleared by
    :meth:`check` alone.
    """

    def __init__(
        self,
        kernel: Any,
        *,
        block: int = 256,
        shared_mem: int = 0,
        mode: BarrierMode = "xiao-feng",
        max_blocks: int | None = None,
    ) -> None:
        if mode not in BARRIER_MODES:
            raise ValueError(f"barrier mode must be one of {BARRIER_MODES}, got {mode!r}")
        cp = backend.cupy_module()
        self.kernel = kernel
        self.block = int(block)
        self.shared_mem = int(shared_mem)
        self.mode = mode
        if self.shared_mem > 0:
            # Static plus dynamic shared memory above 48 KB is an opt-in per kernel (the
            # limit on the dynamic part). The kernel object may serve several grids: only
            # ever raise its limit.
            current = int(getattr(kernel, "max_dynamic_shared_size_bytes", 0) or 0)
            if self.shared_mem > current:
                kernel.max_dynamic_shared_size_bytes = self.shared_mem
        per_sm = blocks_per_multiprocessor(kernel, self.block, self.shared_mem)
        grid = per_sm * backend.gpu_properties()["multiprocessors"]
        if max_blocks is not None:
            grid = max(1, min(grid, int(max_blocks)))
        self.grid = grid
        self.state = cp.zeros(2 * grid + 1, dtype=cp.uint32)

    @property
    def threads(self) -> int:
        return self.grid * self.block

    def reset(self) -> None:
        """Zero the flag words for the next launch: one memset on the current stream (a
        view and CuPy's fill cost the host several times that); the abort word is left
        for :meth:`check`."""
        cp = backend.cupy_module()
        cp.cuda.runtime.memsetAsync(self.state.data.ptr, 0, 4 * 2 * self.grid,
                                    cp.cuda.get_current_stream().ptr)

    def launch(self, *args: Any) -> None:
        """Run the kernel once with ``args`` followed by the barrier state."""
        self.reset()
        self.kernel(
            (self.grid,), (self.block,), (*args, self.state), shared_mem=self.shared_mem
        )

    def aborted(self) -> bool:
        """Whether a barrier timed out in any launch since the last :meth:`check` (waits for
        the launches to finish)."""
        return bool(int(self.state[2 * self.grid].get()))

    def check(self) -> None:
        """Raise if a barrier timed out in any launch since the last check (their results are
        invalid), and clear the abort word.

        Every user of a persistent kernel calls this where it reads results anyway. In
        cooperative mode it costs nothing: the driver refuses a cooperative launch whose
        blocks cannot all be resident, so its barrier never times out.
        """
        if self.mode == "cooperative":
            return
        if self.aborted():
            self.state[2 * self.grid] = 0
            raise RuntimeError(
                f"persistent kernel {getattr(self.kernel, 'name', self.kernel)}: a grid barrier "
                f"timed out with {self.grid} blocks of {self.block} threads (were they not all "
                "resident?); its results are invalid"
            )


def mode_defines(mode: BarrierMode) -> dict[str, Any]:
    """The defines a barrier mode adds to a persistent kernel's build."""
    if mode not in BARRIER_MODES:
        raise ValueError(f"barrier mode must be one of {BARRIER_MODES}, got {mode!r}")
    return {"cooperative": {"MG_BARRIER_COOP": None},
            "atomic": {"MG_BARRIER_ATOMIC": None}}.get(mode, {})


def persistent_kernel(
    path: str,
    name: str,
    *,
    mode: BarrierMode = "xiao-feng",
    block: int = 256,
    shared_mem: int = 0,
    defines: Mapping[str, Any] | None = None,
    max_blocks: int | None = None,
) -> PersistentGrid:
    """Load ``name`` from the package file ``path`` for persistent launch in ``mode``."""
    defs = {**dict(defines or {}), **mode_defines(mode)}
    cooperative = mode == "cooperative"
    kernel = kernels.get_kernel(path, name, defines=defs, cooperative=cooperative)
    return PersistentGrid(
        kernel, block=block, shared_mem=shared_mem, mode=mode, max_blocks=max_blocks
    )
