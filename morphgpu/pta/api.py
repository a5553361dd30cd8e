"""The door of the points-to wing: load constraints, solve them on either side.

    cs = morphgpu.pta.load("shared/data/pta/perl")       # LSG prefix, Galois file or C files
    sol = morphgpu.pta.solve(cs, device="auto")
    sol.points_to(v); sol.may_alias(a, b); sol.write("perl_soln.txt.gz")
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import backend
from ..barrier import BARRIER_MODES
from . import cpu, dense
from .constraints import ConstraintSet
from .constraints import load as _load
from .layout import build_layout
from .solution import Solution


def load(source: str | Path | Sequence[str | Path]) -> ConstraintSet:
    """An LSG prefix (``.../perl``), one constraint file (LSG or Galois form), or C files."""
    paths = [source] if isinstance(source, (str, Path)) else source
    if isinstance(paths, (list, tuple)):
        # pathlib's own words otherwise: "PosixPath('.') has an empty name" of "", "expected
        # str, bytes or os.PathLike object, not int" of [1, 2].
        for p in paths:
            if not isinstance(p, (str, Path)) or not str(p):
                raise ValueError(f"load: source: expected paths (str or Path), got {p!r}")
    return _load(source)


def from_c(files: str | Path | Sequence[str | Path], **kwargs) -> ConstraintSet:
    """Constraints of C sources (see :mod:`morphgpu.pta.c_frontend`)."""
    from .c_frontend import from_c as _from_c  # noqa: PLC0415

    return _from_c(files, **kwargs)


METHODS = ("auto", "dense", "rounds")


def solve(constraints: ConstraintSet | str | Path, *, device: str = "auto",
          barrier_mode: str = "xiao-feng", method: str = "auto",
          progress: Callable[[dict[str, int]], None] | None = None) -> Solution:
    """The least solution of ``constraints`` (Andersen, inclusion-based).

    ``device``: "auto" | "gpu" | "cpu". Both sides give identical solutions; statistics
    (rounds, edges added, seconds per phase) are in ``Solution.stats``. A GPU solution keeps
    its rows on the device until they are asked for (``Solution.rows``); its fact count and
    set sizes are computed there.
    ``method``: "rounds" (difference propagation in rounds with cycle collapsing),
    "dense" (every rule re-applied over dense bit matrices until nothing changes; programs
    of at most dense.DENSE_MAX_NODES nodes; on the GPU one persistent launch) or "auto"
    (on the GPU: dense where it fits, else rounds; on the CPU: rounds).
    ``progress``: called after each round of the rounds method with a dict: ``round``,
    ``copy_edges`` and, on the CPU, ``facts`` (points-to facts so far, summed over
    variables; counting them on the GPU would cost a device pass and a sync per round).
    """
    if method not in METHODS:
        raise ValueError(f"pta.solve: method must be one of {METHODS}, got {method!r}")
    if barrier_mode not in BARRIER_MODES:
        raise ValueError(
            f"pta.solve: barrier_mode must be one of {BARRIER_MODES}, got {barrier_mode!r}"
        )
    if progress is not None and not callable(progress):
        # It failed at the first round ("'int' object is not callable") before.
        raise ValueError(f"pta.solve: progress must be a callable or None, got {progress!r}")
    side = backend.resolve_device(device, who="pta.solve")
    if not isinstance(constraints, ConstraintSet):
        if isinstance(constraints, (str, Path, list, tuple)):
            constraints = load(constraints)
        else:
            raise ValueError(
                "pta.solve: constraints must be a ConstraintSet or a path, got "
                f"{type(constraints).__name__}"
            )
    t0 = time.perf_counter()
    lay = build_layout(constraints)
    t_layout = time.perf_counter() - t0
    if side == "gpu":
        from . import gpu  # noqa: PLC0415

        # The rows stay on the device until asked for (Solution.rows); facts counted there.
        rows, row_of_var, stats = gpu.solve(lay, barrier_mode=barrier_mode, method=method,
                                            progress=progress)
    elif method == "dense":
        rows, row_of_var, stats = dense.solve_numpy(lay)
    else:
        rows, leader, stats = cpu.solve(lay, progress)
        row_of_var = leader[lay.node_of_var]
    stats = dict(stats)
    stats.setdefault("method", "rounds")
    stats.update(device=side, layout_seconds=t_layout, solve_seconds=time.perf_counter() - t0,
                 nodes=lay.n_nodes, object_bits=lay.n_bits)
    return Solution(rows=rows, row_of_var=row_of_var, objects=lay.objects, stats=stats,
                    name=constraints.name)
