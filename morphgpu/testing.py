"""Helpers shared by the tests and the benchmarks (not part of the public API).

``shared_path`` finds the project's shared data folder: ``$MORPHGPU_SHARED``, else a
``shared/`` folder inside the checkout (how the data travels to the GPU machine), else the
``../shared`` beside the checkout. Callers skip cleanly when it returns None.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def shared_root() -> Path | None:
    candidates = []
    if os.environ.get("MORPHGPU_SHARED"):
        candidates.append(Path(os.environ["MORPHGPU_SHARED"]))
    candidates += [REPO_ROOT / "shared", REPO_ROOT.parent / "shared"]
    for c in candidates:
        if (c / "data").is_dir():
            return c
    return None


def shared_path(*parts: str) -> Path | None:
    """``<shared>/<parts...>`` if it exists, else None."""
    root = shared_root()
    if root is None:
        return None
    p = root.joinpath(*parts)
    return p if p.exists() else None
