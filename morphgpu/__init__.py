"""morphgpu: morph graph algorithms and graph traversal on NVIDIA GPUs, with a NumPy path.

Wings (import them by name): ``morphgpu.bfs``, ``morphgpu.mst``, ``morphgpu.dmr``,
``morphgpu.sp``, ``morphgpu.pta``. Importing this package never imports CuPy.
"""

from .backend import DeviceError, GPUOutOfMemoryError, gpu_available, resolve_device
from .csr import CSRGraph, GraphFormatError

__version__ = "0.1.0"

__all__ = [
    "CSRGraph",
    "DeviceError",
    "GPUOutOfMemoryError",
    "GraphFormatError",
    "gpu_available",
    "resolve_device",
    "__version__",
]
