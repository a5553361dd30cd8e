"""Reading a text file's bytes as every reader here takes them: decompressed when it is
compressed (gzip, xz or bzip2, told by its first bytes), and without a leading UTF-8 byte
order mark.

One place for every reader (graph files, DIMACS CNF, points-to constraints, Triangle's
files), so that a damaged stream is reported the same way everywhere, as the caller's own
format error naming the file, and a byte order mark is read past everywhere.
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


UTF8_BOM = b"\xef\xbb\xbf"


def without_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark. Editors on Windows save text with
    one; every format read here is ASCII, so kept, it only ever hid the first line's header
    or number."""
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data
