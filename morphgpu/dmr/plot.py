"""A picture of a mesh: triangles, segments in bold, holes marked (matplotlib, optional)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def plot_mesh(mesh: dict[str, Any], path: str | Path, *, title: str = "") -> Path:
    """Write a PNG (or any format matplotlib knows from the suffix) of the mesh."""
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError as exc:
        raise ValueError("--plot needs matplotlib (pip install matplotlib)") from exc
    v = np.asarray(mesh["vertices"], dtype=float)
    fig, ax = plt.subplots(figsize=(8, 8), dpi=120)
    if mesh.get("triangles") is not None and len(mesh["triangles"]):
        ax.triplot(v[:, 0], v[:, 1], np.asarray(mesh["triangles"]), lw=0.3, color="0.35")
    for a, b in np.asarray(mesh.get("segments", np.zeros((0, 2))), dtype=int).reshape(-1, 2):
        ax.plot(v[[a, b], 0], v[[a, b], 1], color="crimson", lw=1.0)
    holes = np.asarray(mesh.get("holes", np.zeros((0, 2))), dtype=float).reshape(-1, 2)
    if len(holes):
        ax.plot(holes[:, 0], holes[:, 1], "x", color="navy")
    ax.set_aspect("equal")
    ax.set_title(title)
    ax.axis("off")
    path = Path(path)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path
