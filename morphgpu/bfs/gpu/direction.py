"""``direction-optimizing`` (Enterprise), ``beamer`` and ``bottom-up``: the direction-
optimising BFS with its level loop in one persistent launch of kernels/direction.cu (two
grid barriers per level).

Top-down levels write labels only (status array) and expand the frontier's hubs over the
whole grid; the next queue comes from a scan of the labels, reserved per warp; bottom-up
levels take a thread's vertices two at a time (both rows' bounds, first in-neighbours
and their labels loaded before either is used) and stop at the last vertex with an
in-neighbour. The direction is picked per level from the new frontier's statistics:
Enterprise's gamma (hubs in the frontier / all hubs > 30 %: bottom-up for good),
Beamer's m_f > m_u / alpha and n_f < n / beta, or forced.

Graphs of at least RELABEL_MIN_VERTICES vertices whose hubs hold much of the graph are
searched as a copy relabelled by non-increasing degree (Workspace.degree_relabelled) and
the results written back in the caller's ids by the same launch's tail; other graphs of
that size on a copy of their rows sorted by the neighbours' degrees, in the caller's ids
(Workspace.search_order has the rule and its measurements).
Each option set's launch is prepared once per workspace (a call rewrites its few per-call
slots and launches), and the next call's result arrays are allocated while this call's
search runs.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..variants import ALPHA
from . import launch, modules
from .workspace import Workspace, workspace

RULES = {"gamma": 0, "beamer": 1, "bottom-up": 2, "top-down": 3}
GAMMA = 0.30  # Enterprise: switch to bottom-up when 30 % of the hubs are in the frontier
# Beamer's rule goes back to top-down once the shrinking frontier holds fewer than n / BETA
# vertices. Beamer's 24 (variants.BETA, the partitioned search's) measured lower here: H200,
# session 36, one process, 48 roots, the beamer runner with 96 against 24: Kronecker 21 /
# 22 1.005x / 1.022x, Kronecker 20 ef32 1.004x, Kronecker 21 a=0.35 / 0.45 1.008x / 0.997x,
# uniform 2^22 deg 16 1.033x, 2^21 deg 32 0.993x, 2^23 / 2^24 deg 8 1.007x / 1.004x, 2^20
# deg 16 0.997x (48 and 192 within 1 % of 96 on each).
BETA = 96.0
# Rules that relabel: Enterprise's gamma rule stays top-down while frontiers hold many hubs,
# which direction.cu deals out over the blocks entry by entry (queue_index); so dealt, the
# relabelled gamma search took 311 us against 351 as given (H200, Kronecker 21).
RELABEL_RULES = ("beamer", "bottom-up", "gamma")
PARAMS = ("dist", "parent", "queue", "hub_queue", "stats", "n", "source", "hub_degree",
          "total_hubs", "total_edges", "rule", "gamma", "alpha", "beta",
          "bottom_up_end", "out_perm", "out_inverse", "out_dist", "out_parent", "figures",
          "check", "check_seq")


def prepare(grid: Any, graph: tuple, reverse: tuple, *, queue: Any, hub_queue: Any,
            stats: Any, n: int, hub_degree: int, n_hubs: int, n_edges: int, rule: str,
            bottom_up_end: int, perm: Any = None,
            inverse: Any = None) -> launch.Prepared:
    """direction.cu's launch on one graph (``graph``/``reverse``: the kernel's adjacency
    arguments of the out- and in-edges), its labels, parents and source left to each call.
    ``perm``/``inverse``: the search runs on a relabelled copy and its tail writes the
    results to out_dist / out_parent in the original ids."""
    adjacency = tuple(f"graph{i}" for i in range(len(graph))) + tuple(
        f"reverse{i}" for i in range(len(reverse)))
    fixed: dict[str, Any] = {f"graph{i}": a for i, a in enumerate(graph)}
    fixed.update({f"reverse{i}": a for i, a in enumerate(reverse)})
    fixed.update(queue=queue, hub_queue=hub_queue, stats=stats, n=np.int64(n),
                 hub_degree=np.int64(hub_degree), total_hubs=np.int64(n_hubs),
                 total_edges=np.int64(n_edges), rule=np.int32(RULES[rule]),
                 gamma=np.float32(GAMMA),
                 alpha=np.float32(ALPHA), beta=np.float32(BETA),
                 bottom_up_end=np.int64(bottom_up_end),
                 out_perm=launch.ptr(perm), out_inverse=launch.ptr(inverse),
                 out_dist=launch.NULL, out_parent=launch.NULL, figures=launch.NULL,
                 check=launch.NULL, check_seq=np.uint64(0))
    return launch.Prepared(grid, adjacency + PARAMS, fixed)


class DirectionCall:
    """One rule on one graph, resolved once: the graph (as given, relabelled, or its rows
    sorted: ``order``) searched and the prepared launch. A call then costs the host a few
    slot writes and one launch; the next call's result arrays are allocated after it, while
    the search runs, so every call returns arrays of its own (results never alias between
    calls)."""

    def __init__(self, ws: Workspace, *, rule: str, relabel: bool | str) -> None:
        if rule not in RULES:
            raise ValueError(f"rule must be one of {sorted(RULES)}, not {rule!r}")
        g = ws.g
        self.cp = ws.cp
        self.n = g.n_vertices
        self.vid = g.indices.dtype
        if (relabel == "auto" and rule not in RELABEL_RULES) or (
                relabel == "rows" and rule == "top-down"):
            relabel = False  # (top-down levels read whole rows: their order does not matter)
        self.order = ws.search_order(relabel) if g.n_vertices else "as given"
        self.relabelled = self.order == "relabelled"
        search_ws = ws
        perm = inverse = None
        self.inverse_host: np.ndarray | None = None
        self.search_ws: Workspace | None = None
        if self.relabelled:
            relabelled, perm, inverse, self.inverse_host = ws.degree_relabelled()
            search_ws = workspace(relabelled)
            # Keeps the relabelled graph's workspace alive (the caller's own workspace is
            # not held: it holds this call, gpu.search's table).
            self.search_ws = search_ws
        sg = search_ws.g
        graph = rev = sg
        if rule != "top-down":
            rev = search_ws.reverse()
            if self.order == "sorted rows":
                # Top-down levels read the out-rows whole, so a directed graph's stay as
                # given; a graph that is its own reverse is read from the one sorted copy.
                graph, rev = (ws.rows_sorted() if rev is sg else sg), ws.rows_sorted()
        grid = modules.direction_grid(
            modules.layout_key(modules.csr_defines(sg.indices.dtype, sg.indptr.dtype)))
        self.call = prepare(grid, (graph.indptr, graph.indices), (rev.indptr, rev.indices),
                            queue=search_ws.queues[0], hub_queue=search_ws.hub_queue,
                            stats=search_ws.stats, n=sg.n_vertices,
                            hub_degree=search_ws.hub_degree, n_hubs=search_ws.n_hubs,
                            n_edges=search_ws.n_edges, rule=rule,
                            bottom_up_end=(sg.n_vertices if rule == "top-down"
                                           else search_ws.bottom_up_end()),
                            perm=perm, inverse=inverse)
        self.inner_dist = self.inner_parent = None
        if self.relabelled:
            # The search's own labels stay with the relabelled workspace, reused per call.
            self.inner_dist = search_ws.buffer("direction labels", (self.n,), np.int32)
            self.inner_parent = search_ws.buffer("direction parents", (self.n,), self.vid)
        self._bind()

    def _bind(self) -> None:
        """The packed launch and the cells a call rewrites; the first call's results."""
        self.packed = self.call.pack(dist=self.inner_dist, parent=None,
                                     source=self.vid.type(0))
        self.cells = self.packed.cells("dist", "parent", "source", "out_dist", "out_parent",
                                       "figures", "check", "check_seq")
        self.blocks, self.block = self.call.grid.grid, self.call.grid.block
        self.inner_parent_ptr = 0 if self.inner_parent is None else self.inner_parent.data.ptr
        self.spare: tuple[Any, Any, Any] | None = None  # the next call's results
        self.in_flight: tuple[Any, ...] = ()  # what the last launch writes

    def on_grid(self, grid: Any) -> DirectionCall:
        """This call with ``grid``'s kernel (another build of direction.cu: the probe's)."""
        other = copy.copy(self)
        other.call = self.call.on_grid(grid)
        other._bind()
        return other

    def __call__(self, source: int, want_parents: bool,
                 check: Any = None) -> tuple[Any, Any, Any]:
        """(labels, parents or None, figures): the kernel writes the search's figures
        (gpu.figures_on_device's three words) itself. ``source`` is a valid vertex id.
        ``check``: a cached CuPy matrix's fingerprint check (graph_cache.check_inside),
        which the kernel runs in its first phase and publishes to the host."""
        cp, n = self.cp, self.n
        spare = self.spare
        if spare is None:
            dist, figures, parent = (cp.empty(n, dtype=np.int32), cp.empty(3, dtype=np.uint64),
                                     None)
        else:
            dist, figures, parent = spare
        if want_parents and parent is None:
            parent = cp.empty(n, dtype=self.vid)
        (c_dist, c_parent, c_source, c_out_dist, c_out_parent, c_figures, c_check,
         c_check_seq) = self.cells
        if self.relabelled:
            assert self.inverse_host is not None
            c_source.value = int(self.inverse_host[source])
            c_parent.value = self.inner_parent_ptr if want_parents else 0
            c_out_dist.value = dist.data.ptr
            c_out_parent.value = parent.data.ptr if want_parents else 0
        else:
            c_source.value = int(source)
            c_dist.value = dist.data.ptr
            c_parent.value = parent.data.ptr if want_parents else 0
        c_figures.value = figures.data.ptr
        if check is None:
            c_check.value = 0
        else:
            c_check.value, c_check_seq.value = check.arguments()
        self.packed.launch(self.blocks, self.block)  # cooperative: no check after it
        out = (dist, parent if want_parents else None, figures)
        self.in_flight = out
        # The next call's results, allocated while this search runs (host time after the
        # launch). H200, Kronecker 21: with the prepared launch and the trimmed, batched
        # bottom-up levels, 269.3 -> 195.7 us per call against none of them.
        self.spare = (cp.empty(n, dtype=np.int32), cp.empty(3, dtype=np.uint64),
                      cp.empty(n, dtype=self.vid) if want_parents else None)
        return out


def direction_call(ws: Workspace, *, rule: str = "gamma",
                   relabel: bool | str = "auto") -> DirectionCall:
    """The search by ``rule`` on ``ws``'s graph, made once per option set."""
    key = ("direction", rule, relabel)
    call = ws._launches.get(key)
    if call is None:
        call = DirectionCall(ws, rule=rule, relabel=relabel)
        ws._launches[key] = call
    return call


def run_direction(ws: Workspace, source: int, want_parents: bool, *, rule: str = "gamma",
                  relabel: bool | str = "auto") -> tuple[Any, Any, Any]:
    """The direction-optimising search by ``rule`` ("gamma": Enterprise, "beamer", or a
    forced "bottom-up" / "top-down"). ``relabel``: search the degree-relabelled copy
    (True), the rows sorted by degree ("rows"), the graph as given (False), or "auto"
    (Workspace.search_order's rule). Returns (labels, parents or None, the search's
    figures as gpu.figures_on_device gives them, written by the kernel)."""
    return direction_call(ws, rule=rule, relabel=relabel)(
        source, want_parents)
