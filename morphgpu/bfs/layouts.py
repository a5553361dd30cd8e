"""BFS over either adjacency layout: the kernels compiled for CSR or for a dynamic graph's
pages (include/morphgpu/adjacency.cuh), and the runners that take a :class:`DeviceGraph`
rather than a CSR workspace.

A :class:`DeviceGraph` is what a launch needs of a graph: its arrays in kernel-parameter
order (``indptr, indices`` or ``bounds, table, pages``), the defines that select the
layout and index widths, and its degree statistics. :func:`view` makes one for a
:class:`~morphgpu.dynamic_graph.DynamicGraph` (once per graph version) and
:func:`csr_view` for a CSR workspace, so each runner below serves both layouts:

- :func:`run_persistent`: persistent.cu's whole search in one launch, narrow levels in
  one block (deep graphs: roads, meshes);
- :func:`run_direction`: direction.cu's persistent direction-optimising search (Beamer's
  rule on undirected graphs; a directed dynamic graph keeps no in-edges, so top-down);
- :func:`run_classes`: frontier classes with immediate classification (the discoverer
  puts a vertex in the next level's queue of its class) or deferred (all discoveries in
  one queue, split by degree by a separate launch): the seed's two variants;
- :func:`run_dynamic_parallelism`: the same classes, the level loop driven from the
  device by a one-thread control kernel that launches the class kernels
  (kernels/dynamic_parallelism.cu);
- :func:`repair`: the incremental search after insertions (kernels/repair.cu).
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import backend, barrier, kernels
from ..dynamic_graph import DynamicGraph
from . import variants
from .gpu import direction, launch, modules, persistent
from .gpu.level import CHECK_EVERY
from .gpu.workspace import Workspace

CLASSES_FILE = "bfs/kernels/classes.cu"
DP_FILE = "bfs/kernels/dynamic_parallelism.cu"
REPAIR_FILE = "bfs/kernels/repair.cu"
FIGURES_FILE = "bfs/kernels/figures.cu"
CLASS_BLOCK = 256
REPAIR_BLOCK = 256
# A repair gives up (and the caller searches afresh) once it has queued this fraction of
# the vertices: past that it costs about what a search does (kernels/repair.cu).
REPAIR_BUDGET = 1 / 8
DP_LEVELS_PER_CHAIN = 16  # controls chained on the device between two host reads
NO_CLASSES = (1 << 62, 1 << 62, 1 << 62)  # bounds that put every degree in class 0
# The variants that run on a dynamic graph (the others read CSR arrays directly).
DYNAMIC_VARIANTS = ("persistent", "beamer", "direction-optimizing", "top-down",
                    "frontier-classes", "frontier-classes-deferred", "dynamic-parallelism")


@dataclass
class DeviceGraph:
    """A graph as kernels see it, in one layout; scratch arrays are kept with it."""

    args: tuple  # kernel parameters of MG_ADJ_PARAMS, in order
    defines: dict[str, Any]  # index widths and layout (MG_PAGED, MG_PAGE_SHIFT)
    n: int
    degrees: Any  # int64 out-degree per vertex (CuPy); None on a CSR view (see degree_of)
    n_entries: int
    vid: np.dtype
    symmetric: bool
    buffers: dict[str, Any] = field(default_factory=dict)
    # figures.cu's bfs_result_figures packed over this graph's arrays (a DynamicGraph's
    # next version shares ``buffers``, not this: its arrays may differ)
    figures_pack: Any = field(default=None, repr=False)

    def buffer(self, name: str, shape: tuple[int, ...], dtype: Any) -> Any:
        have = self.buffers.get(name)
        if have is None or have.shape != shape or have.dtype != np.dtype(dtype):
            backend.require_gpu_bytes(int(np.prod(shape)) * np.dtype(dtype).itemsize,
                                      f"bfs {name}")
            cp = backend.cupy_module()
            have = cp.empty(shape, dtype=dtype)
            self.buffers[name] = have
        return have

    def degree_of(self, v: int) -> int:
        """Vertex v's out-degree (a CSR view reads it off indptr: no per-vertex array)."""
        if self.degrees is not None:
            return int(self.degrees[v])
        ends = self.args[0][v:v + 2].get()  # a CSR view's args are (indptr, indices)
        return int(ends[1]) - int(ends[0])

    @functools.cached_property
    def hub_degree(self) -> int:
        return max(32, int(8 * self.n_entries / max(self.n, 1)))

    @functools.cached_property
    def _stats(self) -> tuple[int, int, int]:
        """(hubs, largest degree, one past the last vertex with an edge), in one read: a
        dynamic graph gets a new DeviceGraph per version, and three reads cost a search's
        worth of time on small changes."""
        if self.n == 0:
            return 0, 0, 0
        cp = backend.cupy_module()
        out = cp.zeros(3, dtype=cp.uint64)
        _figures_launch(self, "degree_figures", n=np.int64(self.n),
                        hub_degree=np.int64(self.hub_degree), out=out).launch(
            _figures_blocks(self.n), 256)
        hubs, top, end = (int(x) for x in out.get())
        return hubs, top, end

    def figures_on_device(self, dist: Any, flag: Any = None) -> Any:
        """[out-edges of the reached vertices, the largest label, flag or 0] as a uint64
        device array, filled by one launch (nothing is read back)."""
        cp = backend.cupy_module()
        out = cp.zeros(3, dtype=cp.uint64)
        if flag is not None:
            out[2:3] = flag.astype(cp.uint64)
        pack = self.figures_pack  # kept: this runs after every search
        if pack is None:
            pack = _figures_launch(self, "bfs_result_figures", dist=dist,
                                   n=np.int64(self.n), out=out)
            self.figures_pack = pack
        pack.launch(_figures_blocks(self.n), 256, dist=dist, out=out)
        return out

    def result_figures(self, dist: Any, flag: Any = None) -> tuple[int, int, int]:
        """(out-edges of the reached vertices, the largest label, flag or 0) in one read."""
        edges, top, flagged = (int(x) for x in self.figures_on_device(dist, flag).get())
        return edges, top, flagged

    @property
    def n_hubs(self) -> int:
        return self._stats[0]

    @property
    def max_degree(self) -> int:
        return self._stats[1]

    @property
    def bottom_up_end(self) -> int:
        """One past the last vertex with an edge (a symmetric graph's in-neighbours)."""
        return self._stats[2]


def _figures_launch(dev: DeviceGraph, name: str, **values: Any) -> Any:
    """figures.cu's ``name`` on ``dev``'s graph, packed (``values``: the parameters after
    the graph's), built as the workspace's degree figures are (gpu.modules.flat_launch)."""
    graph = {f"graph{i}": a for i, a in enumerate(dev.args)}
    return modules.flat_launch(FIGURES_FILE, name, dev.defines, {**graph, **values})


def _figures_blocks(n: int) -> int:
    return min(-(-max(n, 1) // 256), 1024)


_views: weakref.WeakKeyDictionary[DynamicGraph, tuple[int, DeviceGraph]] = \
    weakref.WeakKeyDictionary()


def view(dg: DynamicGraph) -> DeviceGraph:
    """The dynamic graph's DeviceGraph at its current version (scratch kept across
    versions while the vertex count stays)."""
    have = _views.get(dg)
    if have is not None and have[0] == dg.version:
        return have[1]
    if dg.side != "gpu":
        raise ValueError("the GPU search needs the graph on the GPU (DynamicGraph(device='gpu'))")
    # Positions run to the table's size in pages: while that fits 31 bits the searches read
    # a 32-bit copy of the row bounds (made per version, n entries), as a CSR search of
    # fewer than 2^31 edges reads 32-bit offsets: half the bytes per row, cheaper indexing.
    bounds = dg.bounds
    if (int(dg.table.size) << dg.page_shift) <= np.iinfo(np.int32).max:
        bounds = dg.bounds.astype(np.int32)
    defines = {**kernels.index_defines(dg.vid_dtype, bounds.dtype), "MG_PAGED": None,
               "MG_PAGE_SHIFT": dg.page_shift}
    dev = DeviceGraph((bounds, dg.table, dg.pool.data), defines, dg.n_vertices,
                      dg.degree(), dg.n_entries, np.dtype(dg.vid_dtype), not dg.directed)
    if have is not None and have[1].n == dev.n:
        dev.buffers = have[1].buffers
    _views[dg] = (dg.version, dev)
    return dev


def csr_view(ws: Workspace) -> DeviceGraph:
    """A CSR workspace's graph as a DeviceGraph (kept with the workspace)."""
    dev = ws._buffers.get("device graph")
    if dev is None:
        g = ws.g
        dev = DeviceGraph((g.indptr, g.indices),
                          kernels.index_defines(g.indices.dtype, g.indptr.dtype), g.n_vertices,
                          None, ws.n_edges, np.dtype(g.indices.dtype), not g.directed)
        ws._buffers["device graph"] = dev
    return dev


def _labels(dev: DeviceGraph, source: int, want_parents: bool) -> tuple[Any, Any]:
    cp = backend.cupy_module()
    dist = cp.full(dev.n, -1, dtype=cp.int32)
    dist[source] = 0
    parent = None
    if want_parents:
        parent = cp.full(dev.n, -1, dtype=dev.vid)
        parent[source] = source
    return dist, parent


# ----------------------------------------------------------------------- direction
def run_direction(dev: DeviceGraph, source: int, want_parents: bool, *,
                  rule: str = "beamer") -> tuple[Any, Any]:
    """direction.cu on ``dev`` (in-edges: the graph itself, so bottom-up levels need a
    symmetric graph; others run top-down); the launch is gpu.direction's, prepared per call
    (a dynamic graph's arrays change with its version)."""
    if not dev.symmetric:
        rule = "top-down"
    cp = backend.cupy_module()
    grid = modules.direction_grid(modules.layout_key(dev.defines))
    n = dev.n
    dist = cp.empty(n, dtype=cp.int32)
    parent = cp.empty(n, dtype=dev.vid) if want_parents else None
    call = direction.prepare(
        grid, dev.args, dev.args, queue=dev.buffer("queue", (max(n, 1),), dev.vid),
        hub_queue=dev.buffer("hub queue", (max(n, 1),), dev.vid),
        stats=dev.buffer("stats", (9,), np.uint64), n=n, hub_degree=dev.hub_degree,
        n_hubs=dev.n_hubs, n_edges=dev.n_entries, rule=rule,
        bottom_up_end=dev.bottom_up_end if rule != "top-down" else n)
    call(dist=dist, parent=launch.ptr(parent), source=dev.vid.type(source))
    return dist, parent


# ----------------------------------------------------------------------- persistent
def run_persistent(dev: DeviceGraph, source: int, want_parents: bool) -> tuple[Any, Any]:
    """persistent.cu on ``dev`` without the ELL rows (they are a copy of a CSR graph), as
    gpu.persistent launches it, on a grid of ceil(n / SMALL_GRID) blocks."""
    cp = backend.cupy_module()
    grid = modules.persistent_grid(modules.layout_key(dev.defines))
    n = dev.n
    dist = cp.empty(n, dtype=cp.int32)
    parent = cp.empty(n, dtype=dev.vid) if want_parents else None
    slots = max(n, modules.LOCAL_CAP)
    queues = dev.buffer("persistent queues", (2, slots), dev.vid)
    ctrl = dev.buffer("persistent ctrl", (8,), np.int32)
    ctrl.fill(0)
    call = persistent.prepare(grid, dev.args, queues=(queues[0], queues[1]),
                              tails=dev.buffer("persistent tails", (3,), np.uint64),
                              ctrl=ctrl, n=n, enter_local=persistent.ENTER_LOCAL,
                              max_degree=dev.max_degree, ell=None)
    call(launch.grid_blocks(grid, n), dist=dist, parent=launch.ptr(parent),
         source=dev.vid.type(source))
    return dist, parent


# ----------------------------------------------------------------------- classes
def _class_start(dev: DeviceGraph, source: int, want_parents: bool,
                 bounds: tuple[int, int, int]) -> tuple[Any, Any, Any, Any, int]:
    """Labels, two sets of class queues, a zeroed table of counts and the queue stride,
    with the source in its class of level 0."""
    dist, parent = _labels(dev, source, want_parents)
    stride = max(dev.n, 1)
    queues = dev.buffer("class queues", (2, variants.N_CLASSES * stride), dev.vid)
    counts = dev.buffer("class counts", (max(64, 2 * int(np.sqrt(dev.n)) + 8),
                                         variants.N_CLASSES), np.uint64)
    counts.fill(0)
    first = int(variants.frontier_class(dev.degree_of(source), bounds))
    queues[0, first * stride] = source
    counts[0, first] = 1
    return dist, parent, queues, counts, stride


def _grown(dev: DeviceGraph, counts: Any) -> Any:
    """The count table with twice the rows (the new ones zero)."""
    cp = backend.cupy_module()
    grown = cp.zeros((2 * counts.shape[0], counts.shape[1]), dtype=counts.dtype)
    grown[: counts.shape[0]] = counts
    dev.buffers["class counts"] = grown
    return grown


def run_classes(dev: DeviceGraph, source: int, want_parents: bool, *, deferred: bool = False,
                bounds: tuple[int, int, int] = variants.CLASS_BOUNDS,
                check_every: int = CHECK_EVERY) -> tuple[Any, Any]:
    """Frontier classes, one launch per level (classes.cu), with immediate or (deferred)
    separate classification; the host reads the counts every ``check_every`` levels."""
    bounds = variants.check_class_bounds(bounds)
    cp = backend.cupy_module()
    module = _classes_module(tuple(sorted(dev.defines.items())))
    level_kernel = module.get_function("bfs_frontier_classes")
    classify = module.get_function("bfs_classify") if deferred else None
    dist, parent, queues, counts, stride = _class_start(dev, source, want_parents, bounds)
    error = dev.buffer("class error", (1,), np.int32)
    error.fill(0)
    blocks = backend.gpu_properties()["multiprocessors"] * (2048 // CLASS_BLOCK)
    grid, block = (blocks,), (CLASS_BLOCK,)
    found = dev.buffer("deferred queue", (stride,), dev.vid) if deferred else None
    found_count = dev.buffer("deferred count", (variants.N_CLASSES,), np.uint64)
    level = 0
    while True:
        for _ in range(max(1, check_every)):
            if level + 2 > counts.shape[0]:
                counts = _grown(dev, counts)
            here, nxt = queues[level & 1], queues[(level + 1) & 1]
            if deferred:
                found_count.fill(0)
                level_kernel(grid, block, (*dev.args, dist, launch.ptr(parent), here,
                                           counts[level], found, found_count, np.int64(stride),
                                           np.int32(level + 1), *(np.int64(b) for b in
                                                                  NO_CLASSES), error))
                classify(grid, block, (*dev.args, found, found_count, nxt, counts[level + 1],
                                       np.int64(stride), *(np.int64(b) for b in bounds)))
            else:
                level_kernel(grid, block, (*dev.args, dist, launch.ptr(parent), here,
                                           counts[level], nxt, counts[level + 1],
                                           np.int64(stride), np.int32(level + 1),
                                           *(np.int64(b) for b in bounds), error))
            level += 1
        if int(cp.sum(counts[level])) == 0:
            break
    if int(error[0]):
        raise RuntimeError(f"frontier classes: a row longer than its class allows (bounds "
                           f"{bounds}); the result is incomplete")
    return dist, parent


def _classes_module(defines: tuple) -> Any:
    return kernels.load_module(CLASSES_FILE, defines={**dict(defines),
                                                      "MG_BFS_BLOCK": CLASS_BLOCK})


@functools.lru_cache(maxsize=8)
def _dp_module(defines: tuple) -> Any:
    return kernels.load_module(DP_FILE, defines={**dict(defines), "MG_BFS_BLOCK": CLASS_BLOCK})


def run_dynamic_parallelism(dev: DeviceGraph, source: int, want_parents: bool, *,
                            bounds: tuple[int, int, int] = variants.CLASS_BOUNDS,
                            levels_per_chain: int = DP_LEVELS_PER_CHAIN) -> tuple[Any, Any]:
    """Frontier classes with the level loop on the device: a one-thread control kernel
    launches each level's class kernels, sized to the queues, and its own successor
    (kernels/dynamic_parallelism.cu); the host reads one state word per chain of
    ``levels_per_chain`` levels."""
    bounds = variants.check_class_bounds(bounds)
    control = _dp_module(tuple(sorted(dev.defines.items()))).get_function("bfs_dp_control")
    dist, parent, queues, counts, stride = _class_start(dev, source, want_parents, bounds)
    error = dev.buffer("class error", (1,), np.int32)
    error.fill(0)
    state = dev.buffer("dp state", (2,), np.int32)
    huge_blocks = backend.gpu_properties()["multiprocessors"] * (2048 // CLASS_BLOCK)
    level = 0
    while True:
        state.fill(0)
        control((1,), (1,), (*dev.args, dist, launch.ptr(parent), queues, counts,
                             np.int64(counts.shape[0]), np.int64(stride), np.int32(level),
                             np.int32(levels_per_chain), *(np.int64(b) for b in bounds),
                             np.uint32(huge_blocks), error, state))
        code, level = (int(x) for x in state.get())
        if code == 1:
            break
        if code == 3:
            counts = _grown(dev, counts)
        elif code != 2:
            raise RuntimeError(f"dynamic-parallelism BFS: the control chain stopped at level "
                               f"{level} without a state (code {code}); were child launches "
                               "refused?")
    if int(error[0]):
        raise RuntimeError(f"dynamic-parallelism BFS: a row longer than its class allows "
                           f"(bounds {bounds}); the result is incomplete")
    return dist, parent


def run(dev: DeviceGraph, source: int, variant: str, want_parents: bool) -> tuple[Any, Any]:
    """One of DYNAMIC_VARIANTS on ``dev``."""
    if variant == "persistent":
        return run_persistent(dev, source, want_parents)
    if variant in ("beamer", "direction-optimizing", "top-down"):
        rule = {"beamer": "beamer", "direction-optimizing": "gamma"}.get(variant, "top-down")
        return run_direction(dev, source, want_parents, rule=rule)
    if variant == "frontier-classes":
        return run_classes(dev, source, want_parents)
    if variant == "frontier-classes-deferred":
        return run_classes(dev, source, want_parents, deferred=True)
    if variant == "dynamic-parallelism":
        return run_dynamic_parallelism(dev, source, want_parents)
    raise ValueError(f"variant {variant!r} does not run on this layout; choose one of "
                     f"{DYNAMIC_VARIANTS}")


# ----------------------------------------------------------------------- repair
@functools.lru_cache(maxsize=8)
def _repair_grid(defines: tuple, device: int) -> barrier.PersistentGrid:
    del device
    return barrier.persistent_kernel(REPAIR_FILE, "bfs_repair", mode="cooperative",
                                     block=REPAIR_BLOCK,
                                     defines={**dict(defines), "MG_BFS_BLOCK": REPAIR_BLOCK})


def repair(dev: DeviceGraph, dist: Any, parent: Any, new_keys: Any) -> tuple[Any, Any, Any]:
    """New labels (and parents) after the insertions of the edges whose keys (source * n +
    destination, DynamicGraph.inserted_since) are ``new_keys``, from the labels of
    a search before them, and a device flag that is 1 where the repair gave up (its labels
    are then to be discarded: see REPAIR_BUDGET); the inputs are not modified."""
    cp = backend.cupy_module()
    n = dev.n
    dist = dist.copy()
    parent = parent.copy() if parent is not None else None
    packed = dev.buffer("repair packed", (max(n, 1),), np.uint64) if parent is not None \
        else None
    # The stamps and the number of the call they were last stamped by go together.
    stamps, call = dev.buffers.get("repair stamps", (None, 0))
    if stamps is None or stamps.size < max(n, 1):
        stamps = cp.zeros(max(n, 1), dtype=np.int64)
    call += 1
    dev.buffers["repair stamps"] = (stamps, call)
    queues = dev.buffer("repair queues", (4 * max(n, 1),), dev.vid)
    tails = dev.buffer("repair tails", (6,), np.uint64)
    status = cp.zeros(1, dtype=np.int32)
    grid = _repair_grid(tuple(sorted(dev.defines.items())), cp.cuda.Device().id)
    # A repair's rounds are narrow: one block per multiprocessor keeps their barriers cheap.
    blocks = min(grid.grid, backend.gpu_properties()["multiprocessors"])
    launch.launch(grid, *dev.args, dist, launch.ptr(parent), launch.ptr(packed), stamps,
                  np.int64(call), cp.asarray(new_keys, dtype=cp.int64),
                  np.int64(new_keys.size), queues, tails, np.int64(n),
                  np.int64(max(1, int(n * REPAIR_BUDGET))), status, blocks=blocks)
    return dist, parent, status
