"""Reading a file that may be compressed: gzip, xz or bzip2, told by its first bytes.

One place for every reader (graph files, DIMACS CNF), so that a damaged stream is reported
the same way everywhere: as the caller's own format error, naming the file.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import zlib
from pathlib import Path


def decompressed(raw: bytes, path: str | Path, error: type[Exception]) -> bytes:
    """``raw`` decompressed when it starts with a gzip, xz or bzip2 magic number, else as it
    is; a truncated or corrupt stream raises ``error`` naming ``path``."""
    try:
        if raw[:2] == b"\x1f\x8b":
            return gzip.decompress(raw)
        if raw[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(raw)
        if raw[:3] == b"BZh":
            return bz2.decompress(raw)
    except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError) as exc:
        raise error(f"{path}: compressed stream is truncated or corrupt ({exc})") from exc
    return raw
