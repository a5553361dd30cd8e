"""Microseconds per grid barrier round and per empty kernel launch, in one run.

Barriers: ours (Xiao–Feng in two fence styles, and the counting barrier) against
cooperative groups' grid.sync(); a launch is the alternative to a barrier.

A persistent kernel doing R rounds of barriers only, minus the same launch with R = 0,
over R: the barrier's cost alone. Launch cost: N back-to-back launches of an empty kernel
timed with CUDA events, over N (a one-block launch and a full-grid one).
"""

from __future__ import annotations

import numpy as np
from harness import gpu_seconds, main

from morphgpu import backend, barrier, kernels

PROBE = "kernels/barrier_probe.cu"


def barrier_round_us(mode: str, block: int, rounds: int, max_blocks: int | None = None,
                     defines: dict | None = None):
    grid = barrier.persistent_kernel(PROBE, "barrier_only", mode=mode, block=block,
                                     max_blocks=max_blocks, defines=defines)
    with_rounds = gpu_seconds(lambda: grid.launch(np.int32(rounds)), repeat=7)
    grid.check()
    without = gpu_seconds(lambda: grid.launch(np.int32(0)), repeat=7)
    return (with_rounds - without) / rounds * 1e6, grid.grid


def launch_us(n_launches: int, blocks: int, threads: int) -> float:
    empty = kernels.get_kernel(PROBE, "empty_kernel")

    def launches():
        for _ in range(n_launches):
            empty((blocks,), (threads,), ())

    return gpu_seconds(launches, repeat=5) / n_launches * 1e6


def run(args, record) -> None:
    if args.side != "gpu":
        record.note("barrier benchmark needs a GPU; nothing to time on the CPU")
        return
    rounds = 2_000 if args.quick else 10_000
    n_launches = 1_000
    sms = backend.gpu_properties()["multiprocessors"]
    record.note(f"R = {rounds} rounds per persistent launch; {n_launches} empty launches; "
                f"{sms} SMs; grid from the occupancy calculator unless said")

    launch_one = launch_us(n_launches, 1, 32)
    full_blocks = sms * (2048 // 256)
    launch_full = launch_us(n_launches, full_blocks, 256)
    record.row(what="empty launch", blocks=1, threads=32, us=launch_one)
    record.row(what="empty launch", blocks=full_blocks, threads=256, us=launch_full)

    configs = [(256, None), (1024, None), (256, sms)]
    for block, max_blocks in configs:
        ours, grid = barrier_round_us("xiao-feng", block, rounds, max_blocks)
        classic, _ = barrier_round_us("xiao-feng", block, rounds, max_blocks,
                                      {"MG_BARRIER_THREADFENCE": None})
        coop, _ = barrier_round_us("cooperative", block, rounds, max_blocks)
        counting, _ = barrier_round_us("atomic", block, rounds, max_blocks)
        record.row(
            what="barrier round",
            grid=grid,
            block=block,
            xiao_feng_us=ours,
            xiao_feng_threadfence_us=classic,
            grid_sync_us=coop,
            atomic_us=counting,
            grid_sync_over_ours=coop / ours,
            launch_over_ours=launch_full / ours,
        )
    record.note("xiao_feng: release/acquire flags (default); xiao_feng_threadfence: the same "
                "barrier with volatile flags and __threadfence() (-DMG_BARRIER_THREADFENCE); "
                "atomic: the counting barrier (mode='atomic')")
    record.note("grid_sync_over_ours > 1: our barrier is faster than cooperative grid.sync(); "
                "launch_over_ours: how many of our barrier rounds one empty full-grid launch costs")


if __name__ == "__main__":
    main("barrier", run)
