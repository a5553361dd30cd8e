"""Device operations per round of the GPU points-to rounds (morphgpu/pta/gpu.py ``_solve``),
counted on the CPU: the solver runs on the NumPy stand-ins of tests/test_pta_gpu_rounds.py
and each call a real run would issue is counted: kernel launches (RawKernel and persistent
launches), CuPy array operations (ufuncs, gathers, scatters, fills, sorts, searchsorted,
cumsum, concatenations; allocations not counted) and host reads (``backend.to_host``: one
stream synchronisation each). Sizes do not matter, so a small program serves.

    python3 scripts/pta_round_ops.py [--program ex] [--tree DIR]

--tree DIR counts the solver of another checkout (e.g. main), with its own tests'
stand-ins. Row r is round r's evaluation and merge plus the
propagation before it (row 1: the setup and the first propagation too).
"""

from __future__ import annotations

import argparse
import collections
import sys
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
COUNT: collections.Counter = collections.Counter()


class DeviceArray(np.ndarray):
    """A NumPy array that counts what CuPy would launch for it."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        COUNT["cupy_ops"] += 1
        inputs = tuple(np.asarray(x) if isinstance(x, DeviceArray) else x for x in inputs)
        if "out" in kw:
            kw["out"] = tuple(np.asarray(o) if isinstance(o, DeviceArray) else o
                              for o in kw["out"])
        out = getattr(ufunc, method)(*inputs, **kw)
        return out.view(DeviceArray) if isinstance(out, np.ndarray) else out

    def __getitem__(self, index):
        fancy = isinstance(index, np.ndarray) or (
            isinstance(index, tuple) and any(isinstance(i, np.ndarray) for i in index))
        COUNT["cupy_ops"] += fancy  # a gather; a slice is a view
        out = np.ndarray.__getitem__(np.asarray(self), index)
        return out.view(DeviceArray) if isinstance(out, np.ndarray) else out

    def __setitem__(self, index, value):
        COUNT["cupy_ops"] += 1
        np.ndarray.__setitem__(np.asarray(self), index, np.asarray(value))

    def fill(self, value) -> None:
        COUNT["cupy_ops"] += 1
        np.asarray(self).fill(value)


def _counted(function, counts: bool):
    def call(*args, **kwargs):
        COUNT["cupy_ops"] += counts
        args = tuple(np.asarray(a) if isinstance(a, DeviceArray) else a for a in args)
        out = function(*args, **kwargs)
        return out.view(DeviceArray) if isinstance(out, np.ndarray) else out
    return call


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", default="ex")
    parser.add_argument("--tree", type=Path, default=ROOT)
    args = parser.parse_args()
    sys.path[:0] = [str(args.tree), str(args.tree / "tests")]
    import test_pta_gpu_rounds as stand_in  # noqa: PLC0415

    from morphgpu import backend  # noqa: PLC0415
    from morphgpu.pta import gpu, load  # noqa: PLC0415
    from morphgpu.pta.layout import build_layout  # noqa: PLC0415
    from morphgpu.testing import shared_path  # noqa: PLC0415

    free = {"empty", "empty_like", "int64", "uint64", "int32", "uint32", "bool_", "uint8"}
    cp = types.SimpleNamespace(**{
        name: _counted(value, name not in free)
        if callable(value) and not isinstance(value, type) and name != "cuda" else value
        for name, value in vars(stand_in.FAKE_CP).items()})

    class Kernels(stand_in.NumpyKernels):
        def __getattribute__(self, name):
            method = object.__getattribute__(self, name)
            if name.startswith("_") or name == "check" or not callable(method):
                return method

            def launch(*a, **k):
                COUNT["launches"] += 1
                COUNT[f"launch {name}"] += 1
                return method(*(np.asarray(x) if isinstance(x, DeviceArray) else x
                                for x in a), **k)
            return launch

    def to_host(x):
        COUNT["host_reads"] += 1
        return np.array(x)

    gpu.backend.to_host = backend.to_host = to_host
    prefix = shared_path("data", "pta", f"{args.program}_nodes.txt.gz").with_name(args.program)
    lay = build_layout(load(prefix))
    marks = [COUNT.copy()]
    _, _, stats = gpu._solve(cp, Kernels(False), lay, 1000, lambda _: marks.append(COUNT.copy()))
    marks.append(COUNT.copy())
    print(f"{gpu.__file__}: {args.program}, {stats['rounds']} rounds, "
          f"{stats['nodes_merged']} HCD and {stats['cycles_collapsed']} cycle merges, "
          f"{stats['slow_merges']} relabelling rounds")
    kinds = ("launches", "cupy_ops", "host_reads")
    print("round", *kinds, "relabelled", sep="\t")
    total: collections.Counter = collections.Counter()
    for r in range(1, len(marks)):
        d = marks[r] - marks[r - 1]
        total.update(d)
        last = r == len(marks) - 1
        relabelled = stats["round_counts"][r - 1].get("general_merge", 0) if not last else ""
        print("end" if last else r, *(d[k] for k in kinds), relabelled, sep="\t")
    print("total", *(total[k] for k in kinds), sep="\t")
    print(", ".join(f"{k[7:]} {v}" for k, v in sorted(total.items()) if k.startswith("launch ")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
