"""Session 36, prepared for the next GPU session: microseconds per cluster barrier
(cluster_probe.cu, clusters of 2, 4 and 8 blocks of 1024 and 256 threads) beside the
grid barriers of benchmarks/barrier.py in the same process, and a round of block 0's
distributed-shared-memory counter plus two cluster barriers (checked: every block must
see rounds * CLUSTER). One run takes well under a minute.
Usage: python3 cluster_probe.py"""
import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
import barrier as barrier_bench  # noqa: E402
import numpy as np  # noqa: E402
from harness import gpu_seconds  # noqa: E402

from morphgpu import backend, direct_launch, kernels  # noqa: E402

PROBE = Path(__file__).resolve().parent / "cluster_probe.cu"
ROUNDS = 20000


def per_round_us(pack, blocks: int, threads: int) -> float:
    with_rounds = gpu_seconds(lambda: pack.launch(blocks, threads, rounds=np.int32(ROUNDS)),
                              repeat=7)
    without = gpu_seconds(lambda: pack.launch(blocks, threads, rounds=np.int32(0)), repeat=7)
    return (with_rounds - without) / ROUNDS * 1e6


def main() -> None:
    cp = backend.cupy_module()
    print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
    for block in (1024, 256):
        us, blocks = barrier_bench.barrier_round_us("cooperative", block, ROUNDS // 10)
        print(f"grid.sync block={block} blocks={blocks} us_per_round={us:.3f}", flush=True)
    for cluster in (2, 4, 8):
        # Built as the package builds cooperative kernels (NVRTC finds cooperative_groups.h
        # so), launched through the driver as an ordinary launch, as modules.flat_launch
        # does (CuPy would launch a kernel of a cooperative build cooperatively).
        def pack(name: str, array, c=cluster):
            kernel = kernels.get_kernel(PROBE, name, defines={"CLUSTER": c}, cooperative=True)
            second = "sink" if name == "cluster_sync_rounds" else "out"
            return direct_launch.PackedLaunch(kernel, ("rounds", second),
                                              {"rounds": np.int32(0), second: array},
                                              cooperative=False)

        out = cp.zeros(cluster, dtype=cp.uint32)
        sync = pack("cluster_sync_rounds", cp.zeros(1, dtype=cp.uint32))
        dsmem = pack("cluster_dsmem_rounds", out)
        for block in (1024, 256):
            us = per_round_us(sync, cluster, block)
            us2 = per_round_us(dsmem, cluster, block)
            dsmem.launch(cluster, block, rounds=np.int32(100))
            ok = bool((out == 100 * cluster).all())
            print(f"cluster={cluster} block={block} sync_us_per_round={us:.3f} "
                  f"dsmem_round_us={us2:.3f} dsmem_right={ok}", flush=True)


if __name__ == "__main__":
    main()
