"""The BFS wing's kernel files, their compile-time settings, and the cached modules and
persistent grids (one per GPU, as CuPy caches its modules per device)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ... import backend, barrier, direct_launch, kernels

LEVEL_FILE = "bfs/kernels/level.cu"
PERSISTENT_FILE = "bfs/kernels/persistent.cu"
DIRECTION_FILE = "bfs/kernels/direction.cu"
MERGE_PATH_FILE = "bfs/kernels/merge_path.cu"
CLASSES_FILE = "bfs/kernels/classes.cu"

LEVEL_BLOCK = 256
PERSISTENT_BLOCK = 1024
DIRECTION_BLOCK = 512
LOCAL_CAP = 3072  # edges a persistent level may have and still run inside one block


def current_device() -> int:
    return int(backend.cupy_module().cuda.runtime.getDevice())


def layout_key(defines: dict[str, Any]) -> tuple:
    """Defines as a hashable cache key."""
    return tuple(sorted(defines.items()))


def csr_defines(vid: Any, eid: Any) -> dict[str, Any]:
    return kernels.index_defines(np.dtype(vid), np.dtype(eid))


@functools.lru_cache(maxsize=16)
def module(path: str, vid: str, eid: str) -> Any:
    """A host-loop kernel file (level.cu, merge_path.cu) for one pair of index widths."""
    return kernels.load_module(path, defines={**csr_defines(vid, eid),
                                              "MG_BFS_BLOCK": LEVEL_BLOCK})


def level_module(vid: str, eid: str) -> Any:
    return module(LEVEL_FILE, vid, eid)


def persistent_grid(layout: tuple, ell_width: int = 0,
                    bitmap_bytes: int = 0) -> barrier.PersistentGrid:
    """persistent.cu for one adjacency layout (``layout``: layout_key of its defines) on
    the current GPU. ``ell_width``: the ELL row width (0: none); ``bitmap_bytes``: block 0's
    visited bitmap in dynamic shared memory (0: none)."""
    return _persistent_grid_on(current_device(), layout, ell_width, bitmap_bytes)


@functools.lru_cache(maxsize=16)
def _persistent_grid_on(device_id: int, layout: tuple, ell_width: int,
                        bitmap_bytes: int) -> barrier.PersistentGrid:
    del device_id  # a cache key: the grid is built on the current device
    return barrier.persistent_kernel(PERSISTENT_FILE, "bfs_persistent", mode="cooperative",
                                     block=PERSISTENT_BLOCK,
                                     defines=persistent_defines(layout, ell_width, bitmap_bytes),
                                     shared_mem=bitmap_bytes)


def persistent_defines(layout: tuple, ell_width: int = 0,
                       bitmap_bytes: int = 0) -> dict[str, Any]:
    """persistent.cu's compile-time settings (benchmarks/bfs_ab.py builds its define rows,
    its profile build and an earlier persistent.cu over these)."""
    defines = {**dict(layout), "MG_BFS_BLOCK": PERSISTENT_BLOCK,
               "MG_BFS_LOCAL_CAP": LOCAL_CAP, "MG_BFS_ELL_K": ell_width}
    if bitmap_bytes:
        defines["MG_BFS_LOCAL_BITMAP"] = 1
    return defines


def flat_launch(path: str, name: str, defines: dict[str, Any],
                values: dict[str, Any]) -> direct_launch.PackedLaunch:
    """One kernel without grid barriers (``values``: its parameters by name, in order),
    packed for an ordinary launch, from a file built with the persistent kernels' NVRTC
    options (cooperative: ``--device-c``). CuPy compiles an empty program once per distinct
    option set in a process (~13 ms on an H100 host) before it looks a module up in its disk
    cache; a first search's persistent kernel (direction.cu, persistent.cu) is cooperative,
    so its workspace's degree figures and ELL rows built the same way pay that once, not
    twice. The launch goes through the driver (CuPy would launch a kernel of a cooperative
    build cooperatively)."""
    kernel = kernels.get_kernel(path, name, defines=defines, cooperative=True)
    return direct_launch.PackedLaunch(kernel, tuple(values), values, cooperative=False)


def direction_grid(layout: tuple) -> barrier.PersistentGrid:
    """direction.cu for one adjacency layout on the current GPU."""
    return _direction_grid_on(current_device(), layout)


def direction_defines(layout: tuple) -> dict[str, Any]:
    """direction.cu's compile-time settings for one adjacency layout (benchmarks/bfs_ab.py
    builds its define rows and its profile build over these)."""
    return {**dict(layout), "MG_BFS_BLOCK": DIRECTION_BLOCK}


@functools.lru_cache(maxsize=16)
def _direction_grid_on(device_id: int, layout: tuple) -> barrier.PersistentGrid:
    del device_id  # a cache key: the grid is built on the current device
    return barrier.persistent_kernel(DIRECTION_FILE, "bfs_direction_persistent",
                                     mode="cooperative", block=DIRECTION_BLOCK,
                                     defines=direction_defines(layout))
