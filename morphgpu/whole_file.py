"""Output files written whole or not at all.

A writer opened in place truncates the old file first: a write that fails half-way (a full
disk, an error while formatting, Ctrl-C) left the user with neither the old file nor a new
one. :func:`written_whole` writes to a temporary name beside the target and moves it into
place only once the writer has finished without an error; on any error the temporary file
is removed and the target is as it was.

- A symbolic link's target is replaced, not the link (the link still points at the file).
- An existing file's permission bits are kept; a new file gets the umask's, as ``open``
  gives.
- Targets that are not regular files (``/dev/stdout``, a named pipe) and directories where
  no file can be created beside the target are written in place, as before.

:func:`refuse_input_as_output` stops a command whose output path names one of its inputs
before it runs.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def written_whole(path: str | os.PathLike[str], mode: str = "w",
                  **open_kwargs: Any) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing ("w" or "wb"), but the file at ``path`` changes only
    when the ``with`` block ends without an exception (see the module docstring)."""
    if not mode.startswith("w"):
        raise ValueError(f"written_whole: mode must be 'w' or 'wb', got {mode!r}")
    target = os.path.realpath(os.fspath(path))
    if os.path.exists(target) and not os.path.isfile(target):
        # A device, a pipe, or a directory (open raises IsADirectoryError, as before).
        with open(target, mode, **open_kwargs) as fh:
            yield fh
        return
    tmp = f"{target}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        # "x": never another process's file; the umask's bits, as open(target, "w") gives.
        handle = open(tmp, "x" + mode[1:], **open_kwargs)  # noqa: SIM115  (closed below)
    except (PermissionError, FileNotFoundError):
        # No file can be made beside the target (a read-only directory holding a writable
        # file; a missing directory, where open(target) gives the user its own error).
        with open(target, mode, **open_kwargs) as fh:
            yield fh
        return
    try:
        with handle:
            yield handle
        if os.path.isfile(target):
            shutil.copymode(target, tmp)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # gone once moved; left only by a failure


def npy_path(path: str) -> str:
    """The .npy file a command writes for ``path``: ".npy" added unless the name has it in
    any case. Settled before writing and reported, since ``np.save(name)`` appends its own
    (``--output d`` wrote d.npy and was reported as "d"; "d.NPY" became d.NPY.npy)."""
    return path if Path(path).suffix.lower() == ".npy" else path + ".npy"


def refuse_input_as_output(outputs: Iterable[str | os.PathLike[str]],
                           inputs: Iterable[str | os.PathLike[str]], option: str) -> None:
    """Raise ValueError, before any work, when an output path names an existing input file
    (``sat f.cnf --output f.cnf`` replaced the formula with its model once solved)."""
    inputs = [i for i in inputs if i is not None]
    for out in outputs:
        for src in inputs:
            with contextlib.suppress(OSError):  # either one missing: not the same file
                if os.path.samefile(out, src):
                    raise ValueError(f"{option} {os.fspath(out)}: is the input file "
                                     f"{os.fspath(src)}; the run would replace what it "
                                     "reads, so nothing was run (write elsewhere)")
