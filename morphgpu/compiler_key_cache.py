"""Keeping CuPy's compiler-version key on disk, so a new process skips one NVRTC compile.

Before CuPy looks a module up in its disk cache, it compiles an *empty* program once per
NVRTC option set in each process and puts the output (the compiler's version banner) into
the cache key (``cupy/cuda/compiler.py``, ``_empty_file_preprocess_cache``). That compile
cost 22 ms of a 63 ms first BFS call in a new process (H100 host, cProfile, session 15),
with every kernel already on disk.

Here the dictionary CuPy fills is written next to CuPy's cache after a compile and read
back into it before the first compile of the next process. CuPy's keys hold the NVRTC
version and the file's name the CuPy, CUDA runtime and driver versions, so a changed
toolkit finds no stale entry; a missing, unreadable or foreign file only means CuPy
compiles its empty program as before. Nothing here decides which cubin is loaded: CuPy's
key is unchanged, and CuPy's own dictionary keys (which hold the architecture and the
options) are kept as CuPy wrote them.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

_state: dict[str, Any] = {"path": None, "known": None}


def _cache_dict(cp: Any) -> dict | None:
    table = getattr(cp.cuda.compiler, "_empty_file_preprocess_cache", None)
    return table if isinstance(table, dict) else None


def _file(cp: Any) -> Path:
    # CuPy's keys hold NVRTC's version themselves; the name adds what they do not.
    rt = cp.cuda.runtime
    versions = (cp.__version__, rt.runtimeGetVersion(), rt.driverGetVersion())
    digest = hashlib.sha1(repr(versions).encode()).hexdigest()[:16]
    # CuPy's documented cache location (CuPy 14 has no public function that returns it).
    cache_dir = os.environ.get("CUPY_CACHE_DIR") or os.path.expanduser("~/.cupy/kernel_cache")
    return Path(cache_dir) / f"morphgpu-nvrtc-banner-{digest}.json"


def _plain(value: Any) -> bool:
    """Only keys JSON gives back equal once lists are tuples again (str, int, tuples)."""
    if isinstance(value, tuple):
        return all(_plain(v) for v in value)
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _tuples(value: Any) -> Any:
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def seed(cp: Any) -> None:
    """Fill CuPy's in-process table from the file (once per process; never raises)."""
    if _state["known"] is not None:
        return
    _state["known"] = {}
    try:
        table = _cache_dict(cp)
        if table is None:
            return
        path = _file(cp)
        _state["path"] = path
        if not path.exists():
            return
        stored = json.loads(path.read_text())
        if not isinstance(stored, list):
            return
        for pair in stored:
            if not (isinstance(pair, list) and len(pair) == 2):
                continue
            key, banner = _tuples(pair[0]), pair[1]
            if _plain(key) and isinstance(banner, str):
                table.setdefault(key, banner)
                _state["known"][key] = banner
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return


def save(cp: Any) -> None:
    """Write CuPy's table back when a compile added an entry (never raises)."""
    path = _state["path"]
    table = _cache_dict(cp)
    if path is None or table is None:
        return
    entries = {k: v for k, v in table.items() if _plain(k) and isinstance(v, str)}
    if entries == _state["known"]:
        return
    import tempfile  # noqa: PLC0415  (only a process that compiled pays its import)

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written whole and renamed, so a concurrent reader sees an old or a new file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump([[k, v] for k, v in entries.items()], f)
        os.replace(tmp, path)
        _state["known"] = entries
    except OSError:
        return
