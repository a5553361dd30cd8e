"""benchmarks/bfs.py's rows that time one kernel's runner directly, beside its bfs() rows:
an earlier kernel kept outside the repository (--before), the tree's kernel with one
compile-time define changed (--define), the runner with its relabel choice flipped
(--relabel-rows), the tiled kernel without its horizon (--tiled-rows); per-level clocks
of a profile build (--profile-levels); and the tiled kernel's counters per search
(:func:`tiled_counters`, :func:`tiled_fields`: on every row that ran ``tiled``).

Folded in from scripts/bfs_wide_probe.py and scripts/bfs_deep_probe.py (session 12; git
keeps them; the deep probe's tiled rows and breakdown in session 14). Each family of
graphs has one kernel and one runner row, the tree's kernel
searched as the earlier kernels of those scripts searched:
- wide graphs, direction.cu: ``beamer runner``, a direction.DirectionCall(rule="beamer",
  relabel="auto") of its own: the prepared launch and its result arrays, no bfs() around
  it (the degree-relabelled copy where the tree's rule takes it);
- deep graphs, persistent.cu: ``persistent runner``, persistent.run_persistent on the
  graph as given (relabel=False).

--before DIR (repeatable) an earlier kernel compiled beside the tree's, launched as its
    own tree launched it; DIR is recognised by what it holds:
    * direction.cu (wide graphs): DIR/morphgpu/bfs/kernels/direction.cu (and the
      map_back.cuh beside it), DIR/morphgpu/include and DIR/morphgpu/bfs/gpu/direction.py,
      e.g. ``git archive <commit> morphgpu/include morphgpu/bfs/kernels/direction.cu
      morphgpu/bfs/kernels/map_back.cuh morphgpu/bfs/gpu/direction.py | tar -x -C DIR``:
      compiled against its own headers with the defines its modules.py gave it
      (WIDE_BEFORE_DEFINES, those of 1ac73c1, or DIR/defines.json), launched by its own
      DirectionCall (beamer, relabel "auto") over the tree's workspace;
    * persistent.cu (deep graphs): DIR/persistent.cu and DIR/expand.cuh, the traversal
      header it was built with (``git show <commit>:morphgpu/bfs/kernels/persistent.cu``,
      ``git show <commit>:morphgpu/include/morphgpu/traversal/expand.cuh``): compiled from a
      temporary copy that includes that expand.cuh (the tree's other headers) with the
      tree's persistent.cu defines, launched by the tree's persistent.prepare on the graph
      as given.
    Every row of the graph then gets ``x_before``: the earlier kernel's mean time over the
    row's.
--define NAME[=VALUE] (repeatable) a row of the tree's kernel built with NAME set (bare:
    1) over its usual defines (modules.direction_defines / persistent_defines), run as
    the runner row runs, on the families whose kernel file (or the package's headers)
    names NAME; a NAME named nowhere is an error.
--relabel-rows: the runner on the orders it did not choose: ``beamer runner, relabelled``
    / ``sorted rows`` / ``as given`` (Workspace.search_order); ``persistent runner,
    relabelled`` (the locality copy, built now if auto dropped it).
--tiled-rows: ``tiled runner, no horizon`` (deep graphs): tiled.run_tiled with horizon=0
    on the tiled copy bfs() searches (the check of tiled.HORIZON's choice); with
    ``--variants tiled`` beside the bfs() row of the default launch.
--profile-levels N: on the first N roots, one search of the MG_BFS_PROFILE build (its
    clocks are not timed rows): direction.cu, block 0's clock per level (phase A, then
    phase B when not fused; and the earlier kernel's, given --before), in us at the
    device's rated clock; persistent.cu, block 0's counters (rounds of each kind, us per
    one-block level, per grid round and in its barrier), on the graph as given and on the
    relabelled copy where one was built.

These rows run in bfs.py's rotation with its bfs() rows and pass its checks: distances
equal SciPy's on the first root and the bfs() rows' on every root, Graph500's checks (with
parents up to bfs.FULL_CHECK_MAX_EDGES) on the first root.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import re
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness
import numpy as np

from morphgpu import backend, barrier, direct_launch, kernels

# modules.direction_defines at main 1ac73c1 (what .probe/bfs-before's kernel ran with); an
# earlier tree of another commit gives its own in DIR/defines.json.
WIDE_BEFORE_DEFINES = {"MG_BFS_BLOCK": 512, "MG_BFS_SPREAD_QUEUE": 1, "MG_BFS_FUSED_FLAT": 0,
                       "MG_BFS_BU_BATCH": 2, "MG_BFS_BU_PROBE": 2}
DIRECTION_PROFILE_ROWS = 256  # direction.cu's PROFILE_ROWS
EXPAND_INCLUDE = "#include <morphgpu/traversal/expand.cuh>"


@dataclass(frozen=True)
class Row:
    search: Callable[[int], tuple[Any, Any]]  # root -> (labels, parents), on the GPU
    ran: str  # what the row runs


def add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--before", type=Path, action="append", default=[], metavar="DIR",
                        help="an earlier direction.cu tree (wide graphs) or persistent.cu "
                             "+ expand.cuh (deep graphs) kept outside the repository, timed "
                             "beside the tree's kernel (repeatable; see benchmarks/bfs_ab.py)")
    parser.add_argument("--define", action="append", default=[], metavar="NAME[=VALUE]",
                        help="a row of the tree's kernel (direction.cu on wide graphs, "
                             "persistent.cu on deep ones) with this define (repeatable)")
    parser.add_argument("--relabel-rows", action="store_true",
                        help="the kernel's runner on the graph orders it did not choose")
    parser.add_argument("--tiled-rows", action="store_true",
                        help="deep graphs: the tiled kernel without its horizon (a runner "
                             "row; add --variants tiled for the default launch)")
    parser.add_argument("--profile-levels", type=int, default=0, metavar="N",
                        help="per-level clocks of the MG_BFS_PROFILE build on the first N "
                             "roots")


def before_family(path: Path) -> str:
    """The family whose kernel an earlier tree ``path`` holds ("wide" or "deep")."""
    if (path / "morphgpu" / "bfs" / "kernels" / "direction.cu").is_file() and (
            path / "morphgpu" / "bfs" / "gpu" / "direction.py").is_file():
        return "wide"
    if (path / "persistent.cu").is_file():
        if not (path / "expand.cuh").is_file():
            raise ValueError(f"--before {path}: expand.cuh missing (git show "
                             f"<commit>:morphgpu/include/morphgpu/traversal/expand.cuh > "
                             f"{path / 'expand.cuh'})")
        return "deep"
    raise ValueError(f"--before {path}: holds neither morphgpu/bfs/kernels/direction.cu with "
                     f"morphgpu/bfs/gpu/direction.py nor persistent.cu")


def parse_define(text: str) -> tuple[str, str | None]:
    name, _, value = text.partition("=")
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise ValueError(f"--define {text!r}: NAME or NAME=VALUE with a C identifier NAME")
    return name, (value if "=" in text else None)


def kernel_file(family: str) -> str:
    from morphgpu.bfs.gpu import modules  # noqa: PLC0415

    return modules.DIRECTION_FILE if family == "wide" else modules.PERSISTENT_FILE


def _kernel_names(family: str) -> set[str]:
    """The identifiers of a family's kernel file and the package's headers."""
    texts = [kernels.resolve(kernel_file(family)).read_text()]
    texts += [path.read_text() for path in sorted(kernels.INCLUDE_DIR.rglob("*.cuh"))]
    return set(re.findall(r"\b[A-Za-z_]\w*\b", "".join(texts)))


def resolve_args(args: Any) -> None:
    """Checks the options, before any graph is built: ``args.before_dirs`` (family ->
    directory) and ``args.define_list`` (family -> [(name, value)]: a define goes to the
    kernels whose file or the package's headers name it)."""
    args.before_dirs = {}
    for path in args.before:
        path = path.resolve()
        family = before_family(path)
        if family in args.before_dirs:
            raise ValueError(f"--before {path}: a second earlier {family} kernel "
                             f"(first: {args.before_dirs[family]})")
        args.before_dirs[family] = path
    args.define_list = {"wide": [], "deep": []}
    names = {family: _kernel_names(family) for family in args.define_list}
    for text in args.define:
        name, value = parse_define(text)
        families = [family for family in names if name in names[family]]
        if not families:
            raise ValueError(f"--define {text!r}: {name} occurs in neither "
                             f"{kernel_file('wide')} nor {kernel_file('deep')} (nor the "
                             f"headers)")
        for family in families:
            args.define_list[family].append((name, value))
    if args.profile_levels < 0:
        raise ValueError("--profile-levels must be >= 0")


def _define_text(name: str, value: str | None) -> str:
    return name if value is None else f"{name}={value}"


def rows(family: str, g: Any, args: Any) -> dict[str, Row]:
    """The rows these options add to a graph of ``family`` (none without an option)."""
    tiled_rows = family == "deep" and args.tiled_rows
    if not (args.before_dirs.get(family) or args.define_list[family] or args.relabel_rows
            or tiled_rows):
        return {}
    from morphgpu.bfs.gpu.workspace import workspace  # noqa: PLC0415  (GPU runs only)

    return (_wide_rows if family == "wide" else _deep_rows)(workspace(g), args)


def profile(family: str, g: Any, args: Any, roots: list[int]) -> list[dict[str, Any]]:
    """--profile-levels: one entry per root and kernel (fields for a record row)."""
    if not args.profile_levels:
        return []
    from morphgpu.bfs.gpu.workspace import workspace  # noqa: PLC0415

    ws = workspace(g)
    out = []
    for root in roots[:args.profile_levels]:
        if family == "wide":
            out += _direction_profiles(ws, root, args.before_dirs.get("wide"))
        else:
            out += _persistent_profiles(ws, root)
    return out


@contextmanager
def launch_clock() -> Iterator[list[float]]:
    """While open, every direct_launch.PackedLaunch.launch (the persistent kernels'
    prepared calls launch through it) appends perf_counter() to the list given."""
    plain = direct_launch.PackedLaunch.launch
    launched: list[float] = []

    def stamped(self: Any, *args: Any, **kwargs: Any) -> None:
        launched.append(time.perf_counter())
        plain(self, *args, **kwargs)

    direct_launch.PackedLaunch.launch = stamped
    try:
        yield launched
    finally:
        direct_launch.PackedLaunch.launch = plain


def clocked_call(fn: Callable[[], Any]) -> tuple[float, float | None, float]:
    """(seconds between CUDA events around ``fn()``, host seconds from the call to its
    first packed launch or None where it made none, host seconds of the whole call)."""
    called: list[float] = []

    def timed() -> Any:
        called.append(time.perf_counter())
        out = fn()
        called.append(time.perf_counter())
        return out

    with launch_clock() as launched:
        seconds, _ = harness.event_seconds(timed)
    return (seconds, launched[0] - called[0] if launched else None, called[1] - called[0])


def clock_mhz() -> float:
    """The SM clock the profiles' cycles are divided by (the device's rated clock)."""
    cp = backend.cupy_module()
    device = cp.cuda.runtime.getDevice()
    try:
        return cp.cuda.runtime.deviceGetAttribute(13, device) / 1e3  # cudaDevAttrClockRate
    except Exception:  # noqa: BLE001  (a CuPy without the attribute call)
        return float(cp.cuda.runtime.getDeviceProperties(device)["clockRate"]) / 1e3


# ---- wide graphs: direction.cu --------------------------------------------------------


def _layout(g: Any) -> tuple:
    from morphgpu.bfs.gpu import modules  # noqa: PLC0415

    return modules.layout_key(modules.csr_defines(g.indices.dtype, g.indptr.dtype))


def _pair(call: Any) -> Callable[[int], tuple[Any, Any]]:
    """A DirectionCall as a row's search (labels, parents)."""
    return lambda root: call(root, True)[:2]


def _direction_build(layout: tuple, extra: dict[str, Any]) -> tuple[Any, Any]:
    """(grid, module) of the tree's direction.cu with ``extra`` defines over its own (the
    module is the one the grid's kernel comes from: the loader caches by defines)."""
    from morphgpu.bfs.gpu import modules  # noqa: PLC0415

    defines = {**modules.direction_defines(layout), **extra}
    grid = barrier.persistent_kernel(modules.DIRECTION_FILE, "bfs_direction_persistent",
                                     mode="cooperative", block=modules.DIRECTION_BLOCK,
                                     defines=defines)
    module = kernels.load_module(modules.DIRECTION_FILE, cooperative=True, defines={
        **defines, **barrier.mode_defines("cooperative")})
    return grid, module


@functools.cache
def _wide_before_build(before: Path, layout: tuple, profiled: bool) -> tuple[Any, Any]:
    """(grid, module) of the earlier direction.cu, compiled against its own headers (as
    kernels._load builds the package's files: defines in the source, cooperative)."""
    cp = backend.cupy_module()
    own = before / "defines.json"
    settings = json.loads(own.read_text()) if own.is_file() else WIDE_BEFORE_DEFINES
    defines = {**dict(layout), **settings, "MG_BARRIER_COOP": None}
    if profiled:
        defines["MG_BFS_PROFILE"] = None
    path = before / "morphgpu" / "bfs" / "kernels" / "direction.cu"
    source = kernels.define_lines(defines) + f'#line 1 "{path}"\n' + path.read_text()
    module = cp.RawModule(code=source, options=(
        *kernels.BASE_OPTIONS, f"-I{before / 'morphgpu' / 'include'}",
        f"-I{before / 'morphgpu'}"), enable_cooperative_groups=True)
    module.compile()
    grid = barrier.PersistentGrid(module.get_function("bfs_direction_persistent"),
                                  block=int(settings["MG_BFS_BLOCK"]), mode="cooperative")
    return grid, module


def _wide_before_call(before: Path, ws: Any, profiled: bool = False) -> Any:
    """The earlier gpu/direction.py's DirectionCall (beamer, relabel "auto") on ``ws``: the
    file loaded as a module of this package (its relative imports resolve here), its
    kernel grids the earlier direction.cu's."""
    from morphgpu.bfs.gpu import modules  # noqa: PLC0415

    path = before / "morphgpu" / "bfs" / "gpu" / "direction.py"
    name = "morphgpu.bfs.gpu._direction_before" + ("_profiled" if profiled else "")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.modules = types.SimpleNamespace(
        layout_key=modules.layout_key, csr_defines=modules.csr_defines,
        direction_grid=lambda layout: _wide_before_build(before, layout, profiled)[0])
    if not hasattr(ws, "spare_results"):
        ws.spare_results = {}  # the earlier DirectionCall's result arrays (gone since)
    return module.DirectionCall(ws, rule="beamer", relabel="auto")


def _wide_rows(ws: Any, args: Any) -> dict[str, Row]:
    from morphgpu.bfs.gpu import direction  # noqa: PLC0415

    runner = direction.DirectionCall(ws, rule="beamer", relabel="auto")
    out = {"beamer runner": Row(_pair(runner),
                                f"direction.cu DirectionCall, relabel auto: {runner.order}")}
    before = args.before_dirs.get("wide")
    if before is not None:
        out[f"before: {before.name}"] = Row(_pair(_wide_before_call(before, ws)),
                                            f"{before}'s direction.cu and DirectionCall")
    if args.relabel_rows:
        for relabel in (True, "rows", False):
            other = direction.DirectionCall(ws, rule="beamer", relabel=relabel)
            if other.order != runner.order:
                out[f"beamer runner, {other.order}"] = Row(_pair(other),
                                                           f"direction.cu, {other.order}")
    layout = _layout((runner.search_ws or ws).g)
    for name, value in args.define_list["wide"]:
        grid, _ = _direction_build(layout, {name: value})
        text = _define_text(name, value)
        out[f"beamer runner, {text}"] = Row(_pair(runner.on_grid(grid)),
                                            f"direction.cu with {text}")
    return out


def _direction_profile(call: Any, module: Any, root: int) -> dict[str, Any]:
    """One search by a profile build: block 0's clock stamps per level, in us."""
    cp = backend.cupy_module()
    stamps = cp.ndarray((DIRECTION_PROFILE_ROWS, 4), dtype=cp.uint64,
                        memptr=module.get_global("mg_bfs_profile"))
    stamps.fill(0)  # rows past this search's last level stay 0
    call(root, True)
    table = stamps.get().astype(np.int64)
    mhz = clock_mhz()

    def us(cycles: Any) -> float:
        return round(float(cycles) / mhz, 1)

    start = table[0, 0]
    levels = []
    last = table[0, 2]
    for row in table[1:]:
        if row[0] == 0:
            break
        a_end = row[1] if row[1] else row[2]
        flags = int(row[3])
        levels.append({"dir": ("BU" if flags & 1 else "TD") + ("F" if flags & 2 else ""),
                       "n_f": flags >> 8, "A_us": us(a_end - row[0]),
                       "B_us": us(row[2] - row[1]) if row[1] else 0.0,
                       "us": us(row[2] - row[0])})
        last = row[2]
    return {"setup_us": us(table[0, 2] - start), "per_level": levels,
            "tail_us": us(table[0, 3] - last) if table[0, 3] > last else None,
            "total_us": us(max(table[0, 3], last) - start)}


def _direction_profiles(ws: Any, root: int, before: Path | None) -> list[dict[str, Any]]:
    from morphgpu.bfs.gpu import direction  # noqa: PLC0415

    runner = direction.direction_call(ws, rule="beamer", relabel="auto")
    grid, module = _direction_build(_layout((runner.search_ws or ws).g),
                                    {"MG_BFS_PROFILE": None})
    out = [{"root": root, "kernel": "direction.cu",
            **_direction_profile(runner.on_grid(grid), module, root)}]
    if before is not None:
        old = _wide_before_call(before, ws, profiled=True)
        module = _wide_before_build(before, _layout(old.search_ws.g), True)[1]
        out.append({"root": root, "kernel": f"before: {before.name}",
                    **_direction_profile(old, module, root)})
    return out


# ---- deep graphs: persistent.cu -------------------------------------------------------


class PersistentRow:
    """persistent.cu's launch on the graph as given, with ``grid`` (an earlier kernel or a
    define's build), as gpu/persistent.py launches it: blocks from the widest frontier,
    re-read at its 2nd, 4th, 8th, ... call."""

    def __init__(self, ws: Any, grid: Any) -> None:
        from morphgpu.bfs.gpu import persistent  # noqa: PLC0415

        g = ws.g
        self.ws, self.grid = ws, grid
        self.call = persistent.prepare(
            grid, (g.indptr, g.indices), queues=ws.queues, tails=ws.tails, ctrl=ws.ctrl,
            n=g.n_vertices, enter_local=persistent.ENTER_LOCAL, max_degree=ws.max_degree,
            ell=ws.ell() if ws.ell_width else None)
        self.calls = 0
        self.widest = 0

    def __call__(self, source: int, want_parents: bool = True) -> tuple[Any, Any]:
        from morphgpu.bfs.gpu import launch, persistent  # noqa: PLC0415

        ws, g, cp = self.ws, self.ws.g, self.ws.cp
        self.calls += 1
        if self.calls >= 2 and self.calls & (self.calls - 1) == 0:
            self.widest = int(ws.ctrl[persistent.CTRL_WIDEST_FRONTIER].get())
        blocks = launch.grid_blocks(self.grid, g.n_vertices, widest=self.widest)
        dist = cp.empty(g.n_vertices, dtype=cp.int32)
        parent = cp.empty(g.n_vertices, dtype=g.indices.dtype) if want_parents else None
        self.call(blocks, dist=dist, parent=launch.ptr(parent),
                  source=g.indices.dtype.type(source))
        return dist, parent


def _persistent_build(ws: Any, extra: dict[str, Any],
                      path: str | None = None) -> tuple[Any, dict[str, Any]]:
    """(grid, its defines) of persistent.cu (or the file ``path``) for ``ws``'s graph with
    ``extra`` defines over the tree's."""
    from morphgpu.bfs.gpu import modules, persistent  # noqa: PLC0415

    g = ws.g
    bits = persistent.bitmap_bytes(g.n_vertices, ws.ell_width)
    defines = {**modules.persistent_defines(_layout(g), ws.ell_width, bits), **extra}
    grid = barrier.persistent_kernel(path or modules.PERSISTENT_FILE, "bfs_persistent",
                                     mode="cooperative", block=modules.PERSISTENT_BLOCK,
                                     defines=defines, shared_mem=bits)
    return grid, defines


@functools.cache
def _deep_before_source(before: Path) -> str:
    """The earlier persistent.cu as a temporary copy that includes its own expand.cuh."""
    source = (before / "persistent.cu").read_text()
    if EXPAND_INCLUDE not in source:
        raise ValueError(f"--before {before}: persistent.cu does not {EXPAND_INCLUDE}")
    out = Path(tempfile.mkdtemp()) / "persistent_before.cu"
    out.write_text(source.replace(EXPAND_INCLUDE,
                                  f'#include "{(before / "expand.cuh").resolve()}"'))
    return str(out)


def _deep_rows(ws: Any, args: Any) -> dict[str, Row]:
    from morphgpu.bfs.gpu import persistent  # noqa: PLC0415

    out = {"persistent runner": Row(
        lambda s: persistent.run_persistent(ws, s, True, relabel=False),
        "persistent.cu run_persistent, as given")}
    before = args.before_dirs.get("deep")
    if before is not None:
        grid, _ = _persistent_build(ws, {}, _deep_before_source(before))
        out[f"before: {before.name}"] = Row(PersistentRow(ws, grid),
                                            f"{before}'s persistent.cu, as given")
    if args.relabel_rows:
        out["persistent runner, relabelled"] = Row(
            lambda s: persistent.run_persistent(ws, s, True, relabel=True),
            "persistent.cu run_persistent, locality copy")
    for name, value in args.define_list["deep"]:
        grid, _ = _persistent_build(ws, {name: value})
        text = _define_text(name, value)
        out[f"persistent runner, {text}"] = Row(PersistentRow(ws, grid),
                                                f"persistent.cu with {text}, as given")
    if args.tiled_rows:
        from morphgpu.bfs.gpu import tiled  # noqa: PLC0415

        out["tiled runner, no horizon"] = Row(
            lambda s: tiled.run_tiled(ws, s, True, horizon=0),
            "tiled.cu run_tiled, horizon 0, tiled copy")
    return out


# ---- the tiled kernel's counters ------------------------------------------------------


def tiled_counters(g: Any) -> dict[str, int]:
    """The last tiled search of ``g``'s counters (tiled.last_stats on the workspace it ran
    on: the tiled copy's) and that graph's tile count. One small read (a sync): call it
    outside the timed calls."""
    from morphgpu.bfs.gpu import tiled  # noqa: PLC0415
    from morphgpu.bfs.gpu.workspace import workspace  # noqa: PLC0415

    inner = tiled.searched_workspace(workspace(g))
    stats = tiled.last_stats(inner)
    stats["n_tiles"] = -(-inner.g.n_vertices // max(stats.get("tile_vertices", 1), 1))
    return stats


def tiled_fields(counters: list[dict[str, int]]) -> dict[str, float]:
    """Row fields from the counters of a row's searches (means over them): visits after
    which their tile was visited again, visits of the copy's tiles, local levels per
    visit, remote labels lowered, tile size; us (at the device's rated clock) per visit in
    the load and the write-back, per local level, the blocks' waits for a tile summed over
    the blocks, and block 0's whole loop."""
    if not counters:
        return {}
    per = {k: float(np.mean([c.get(k, 0) for c in counters])) for k in counters[0]}
    mhz = clock_mhz()
    tiles = max(per["tiles"], 1.0)
    return {"tiled_again": per["again"], "tiled_tiles": per["tiles"],
            "tiled_n_tiles": per["n_tiles"], "tiled_levels_per_tile": per["levels"] / tiles,
            "tiled_remote_lowered": per["remote_lowered"],
            "tiled_global_rows": per["global_rows"], "tile_vertices": per["tile_vertices"],
            "tiled_load_us_per_tile": per["load_cycles"] / tiles / mhz,
            "tiled_us_per_local_level": per["level_cycles"] / max(per["levels"], 1.0) / mhz,
            "tiled_write_us_per_tile": per["write_cycles"] / tiles / mhz,
            "tiled_wait_us": per["wait_cycles"] / mhz,
            "tiled_loop_us": per["loop_cycles"] / mhz}


def _persistent_profile(ws: Any, source: int) -> dict[str, Any]:
    """One search by the MG_BFS_PROFILE build of persistent.cu (block 0's PROFILE_*
    counters)."""
    from morphgpu.bfs.gpu import launch, modules, persistent  # noqa: PLC0415

    cp, g = ws.cp, ws.g
    grid, defines = _persistent_build(ws, {"MG_BFS_PROFILE": 1})
    module = kernels.load_module(modules.PERSISTENT_FILE, cooperative=True, defines={
        **defines, **barrier.mode_defines("cooperative")})
    call = persistent.prepare(
        grid, (g.indptr, g.indices), queues=ws.queues, tails=ws.tails, ctrl=ws.ctrl,
        n=g.n_vertices, enter_local=persistent.ENTER_LOCAL, max_degree=ws.max_degree,
        ell=ws.ell() if ws.ell_width else None)
    widest = int(ws.ctrl[persistent.CTRL_WIDEST_FRONTIER].get())
    blocks = launch.grid_blocks(grid, g.n_vertices, widest=widest)
    dist = cp.empty(g.n_vertices, dtype=cp.int32)
    call(blocks, dist=dist, parent=launch.NULL, source=g.indices.dtype.type(source))
    cp.cuda.get_current_stream().synchronize()
    words = cp.ndarray((8,), dtype=cp.uint64,
                       memptr=module.get_global("mg_bfs_profile")).get().astype(np.int64)
    local_rounds, local_levels, grid_rounds, give_ups, local_c, grid_c, bar_c, total_c = words
    mhz = clock_mhz()
    per = max(int(grid_rounds), 1)
    return {"blocks": blocks, "levels": int(dist.max()) + 1,
            "local_rounds": int(local_rounds), "local_levels": int(local_levels),
            "grid_rounds": int(grid_rounds), "give_ups": int(give_ups), "clock_mhz": mhz,
            "us_per_local_level": float(local_c) / max(int(local_levels), 1) / mhz,
            "us_per_grid_round": float(grid_c) / per / mhz,
            "us_barrier_per_grid_round": float(bar_c) / per / mhz,
            "total_ms": float(total_c) / mhz / 1e3}


def _persistent_profiles(ws: Any, root: int) -> list[dict[str, Any]]:
    from morphgpu.bfs.gpu import relabel  # noqa: PLC0415
    from morphgpu.bfs.gpu.workspace import workspace  # noqa: PLC0415

    out = [{"root": root, "kernel": "persistent.cu, as given",
            **_persistent_profile(ws, root)}]
    copy = relabel.preparation(ws)
    if copy is not None and copy.graph is not None:
        out.append({"root": root, "kernel": "persistent.cu, locality copy",
                    **_persistent_profile(workspace(copy.graph),
                                          int(copy.inverse_host[root]))})
    return out
