"""The GPU BFS: variants as policies over the shared traversal operators, one module per
family over one per-graph workspace.

=================  ============================================================
module             holds
=================  ============================================================
``workspace``      the per-graph buffers and derived graphs (reverse, ELL rows,
                   degree-relabelled copy, rows sorted by degree), kept per
                   CSRGraph object
``modules``        kernel files, compile-time settings, cached modules and
                   persistent grids (per GPU)
``launch``         cooperative launches, grid sizes, prepared calls with named
                   argument slots
``persistent``     ``persistent``: one launch of persistent.cu
``level``          expand-contract, two-phase, contract-expand, hybrid,
                   merge-path: a host loop over level.cu
``coupled``        merge-path-separate / -ib / -bi / -hybrid, frontier-classes:
                   fixed grids launched back to back
``direction``      direction-optimizing, beamer, bottom-up: one launch of
                   direction.cu
``asynchronous``   async: one launch of asynchronous.cu, label-correcting
                   with no level barrier
``tiled``          tiled: one launch of tiled.cu (a ring of active tiles),
                   label-correcting over tiles of the locality-relabelled copy,
                   BFS levels inside a tile in shared memory
``overlay``        overlay: label-correcting rounds over the tiled copy's tile
                   boundaries with in-tile distances prepared per graph
``relabel``        the locality-relabelled copy deep searches run on
``deep_choice``    auto on deep graphs: persistent, tiled (and tiled's
                   horizon) or overlay (and its delta), timed once per graph
                   once its searches cost as much as timing
=================  ============================================================

The variants over a dynamic graph's pages (and frontier-classes-deferred,
dynamic-parallelism on CSR) live in ``morphgpu.bfs.layouts``.
"""

from __future__ import annotations

import importlib
from functools import partial
from typing import Any

from .. import variants
from .direction import direction_call
from .launch import NULL, grid_blocks
from .persistent import bitmap_bytes, run_persistent
from .workspace import Workspace, workspace

# The module of that name (the package's attribute ``workspace`` is its function).
workspace_module = importlib.import_module(__name__ + ".workspace")

__all__ = ["NULL", "Workspace", "bitmap_bytes", "choose", "figures_on_device", "grid_blocks",
           "prepared_search", "run", "run_persistent", "search", "workspace"]


def choose(ws: Workspace, variant: str) -> str:
    """``variant``, or auto's choice from the graph's degree statistics (variants.py)."""
    if variant != "auto":
        return variant
    mean = ws.n_edges / max(ws.g.n_vertices, 1)
    name = variants.auto_gpu_from_stats(mean, ws.max_degree)
    # Low degrees, but the first search found few, wide levels (deep_choice.note_shape).
    return "beamer" if name == "persistent" and ws.shallow else name


def _run_layouts(ws: Workspace, source: int, want_parents: bool, *, name: str) -> Any:
    from .. import layouts  # noqa: PLC0415  (it builds on this package)

    return layouts.run(layouts.csr_view(ws), source, name, want_parents)


# Variant -> (module of this package, its runner, fixed keyword arguments). A runner's
# module is imported on its first search: a new process then imports only the family it
# runs (the runners' imports were 16 ms of a 63 ms first call, H100 cProfile, session 15).
RUNNERS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "persistent": ("persistent", "run_persistent", {}),
    "expand-contract": ("level", "run_expand_contract", {}),
    "top-down": ("level", "run_expand_contract", {}),
    "two-phase": ("level", "run_expand_contract", {"two_phase": True}),
    "contract-expand": ("level", "run_contract_expand", {}),
    "hybrid": ("level", "run_contract_expand", {"hybrid": True}),
    "merge-path": ("level", "run_merge_path", {}),
    **{name: ("coupled", "run_merge_path_coupled", {"coupling": name})
       for name in variants.COUPLINGS},
    "frontier-classes": ("coupled", "run_frontier_classes", {}),
    "direction-optimizing": ("direction", "run_direction", {}),
    "beamer": ("direction", "run_direction", {"rule": "beamer"}),
    "bottom-up": ("direction", "run_direction", {"rule": "bottom-up"}),
    "async": ("asynchronous", "run_async", {}),
    "tiled": ("tiled", "run_tiled", {}),
    "overlay": ("overlay", "run_overlay", {}),
}
# Variants over morphgpu.bfs.layouts' CSR view (that package builds on this one).
LAYOUT_RUNNERS = ("frontier-classes-deferred", "dynamic-parallelism")


def runner(name: str) -> Any:
    """The runner (ws, source, want_parents, **options) of GPU variant ``name``, or None."""
    if name in LAYOUT_RUNNERS:
        return partial(_run_layouts, name=name)
    entry = RUNNERS.get(name)
    if entry is None:
        return None
    module, function, fixed = entry
    found = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    return partial(found, **fixed) if fixed else found


# Variants whose search is one prepared call per workspace (direction.DirectionCall): bfs()
# keeps it in the workspace (Workspace.searches) and its later calls go straight to it
# (prepared_search), without this module's dispatch.
PREPARED: dict[str, Any] = {
    "direction-optimizing": direction_call,
    "beamer": partial(direction_call, rule="beamer"),
    "bottom-up": partial(direction_call, rule="bottom-up"),
}


def prepared_search(g: Any, variant: str) -> tuple[str, Any] | None:
    """(the variant that runs, its call (source, want_parents) -> (labels, parents or None,
    figures)) that :func:`search` resolved for ``variant`` on ``g`` before, or None."""
    ws = workspace_module.workspaces.get(g)
    return None if ws is None else ws.searches.get(variant)


def _runner_output(g: Any, source: int, variant: str, want_parents: bool,
                   options: dict[str, Any]) -> tuple[tuple, str]:
    ws = workspace(g)
    name = choose(ws, variant)
    if variant == "auto" and name == "persistent" and not options:
        # persistent, tiled or overlay, measured once the graph's searches cost as much
        # (deep_choice.py)
        from . import deep_choice  # noqa: PLC0415  (imported by deep graphs' first search)

        return deep_choice.run_auto(ws, source, want_parents)
    found = runner(name)
    if found is None:
        raise ValueError(f"variant {name!r} has no GPU implementation")
    return found(ws, source, want_parents, **options), name


def search(g: Any, source: int, *, variant: str, want_parents: bool,
           **options: Any) -> tuple[Any, Any, str, Any]:
    """:func:`run` plus the search's figures (see figures_on_device). A runner returns
    (labels, parents) or, when its kernel counted them itself (direction.cu), (labels,
    parents, figures); for the others one more launch counts them."""
    if not options:
        ws = workspace(g)
        done = ws.searches.get(variant)
        if done is not None:  # searched before: its prepared call (a cached matrix's graph)
            name, call = done
            dist, parent, figures = call(source, want_parents)
            return dist, parent, name, figures
        name = choose(ws, variant)
        prepared = PREPARED.get(name)
        if prepared is not None:
            call = prepared(ws)
            ws.searches[variant] = (name, call)
            dist, parent, figures = call(source, want_parents)
            return dist, parent, name, figures
    out, name = _runner_output(g, source, variant, want_parents, options)
    figures = out[2] if len(out) == 3 else figures_on_device(g, out[0])
    return out[0], out[1], name, figures


def run(g: Any, source: int, *, variant: str, want_parents: bool,
        **options: Any) -> tuple[Any, Any, str]:
    """Distances (int32 CuPy), parents or None, and the variant that ran; ``options`` go to
    the variant's runner (the keyword arguments of run_<family> in its module)."""
    out, name = _runner_output(g, source, variant, want_parents, options)
    return out[0], out[1], name


def figures_on_device(g: Any, dist: Any) -> Any:
    """[CSR entries out of reached vertices, largest label, 0] as a uint64 device array,
    counted by one launch queued after the search (kernels/figures.cu); nothing waits."""
    from .. import layouts  # noqa: PLC0415  (it builds on this package)

    return layouts.csr_view(workspace(g)).figures_on_device(dist)
