"""Small GPU points-to runs for compute-sanitizer (memcheck / racecheck): a hand-written
set and ex, each by both GPU methods (the round solver and the dense persistent kernel) in
both barrier modes, compared with the CPU path. Exit status 1 on any mismatch.
PTA_HUB=CHUNK,MIN sets gpu.HUB_CHUNK and gpu.HUB_MIN (small values make most of ex's
nodes hubs, pulled in chunks by several warps)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import pta  # noqa: E402
from morphgpu.pta.constraints import from_lists  # noqa: E402
from morphgpu.testing import shared_path  # noqa: E402


def main() -> int:
    if os.environ.get("PTA_HUB"):
        from morphgpu.pta import gpu  # noqa: PLC0415

        gpu.HUB_CHUNK, gpu.HUB_MIN = (int(x) for x in os.environ["PTA_HUB"].split(","))
        print(f"hub chunks of {gpu.HUB_CHUNK} above {gpu.HUB_MIN} in-edges", flush=True)
    cases = [from_lists(13, [(0, 5, 2), (0, 6, 3), (1, 2, 4), (3, 3, 4), (2, 4, 9),
                             (4, 3, 10, 2), (0, 1, 12), (3, 3, 12)],
                        obj_size=[1] * 6 + [3, 2, 1] + [1] * 4)]
    ex = shared_path("data", "pta", "ex_nodes.txt.gz")
    if ex is not None:
        cases.append(pta.load(ex.with_name("ex")))
    ok = True
    for cs in cases:
        c = pta.solve(cs, device="cpu")
        for method in ("rounds", "dense"):
            for mode in ("xiao-feng", "cooperative"):
                g = pta.solve(cs, device="gpu", barrier_mode=mode, method=method)
                diffs = g.differences_from(c)
                print(f"{cs.name} {method} {mode}: facts {g.n_facts}, rounds "
                      f"{g.stats['rounds']}, {'identical' if not diffs else diffs}", flush=True)
                ok &= not diffs
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
