"""Reading a text file's bytes as every reader here takes them: decompressed when it is
compressed (gzip, xz or bzip2, told by its first bytes), and without a leading UTF-8 byte
order mark.

One place for every reader (graph files, DIMACS CNF, points-to constraints, Triangle's
files), so that a damaged stream is reported the same way everywhere, as the caller's own
format error naming the file, and a byte order mark is read past everywhere.
"""

from __future__ import annotations

import bz2
import lzma
import os
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Bytes read or decompressed at a time: the bound is checked between pieces.
_PIECE = 1 << 24
_FEED = 1 << 20  # compressed bytes given to a decompressor at a time
_GZIP, _XZ, _BZIP2 = b"\x1f\x8b", b"\xfd7zXZ\x00", b"BZh"


def available_memory() -> int | None:
    """Bytes of memory this machine can still give (Linux: MemAvailable), or None where it
    cannot tell."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


# Where the bound comes from when the machine's own figure is wrong: some virtual machines
# report a fraction of their memory until it is used (MemAvailable ~31 GiB of 256).
LIMIT_VARIABLE = "MORPHGPU_MAX_INPUT_BYTES"
# A compressed stream is refused only past both the bound and this ratio of output to
# input: text compresses 3-20x, a stream built to exhaust memory ~1000x and more, so a large
# genuine file is never refused on a machine whose free-memory figure is too low.
BOMB_RATIO = 100


def _input_limit() -> int | None:
    """The most bytes a stream without an end in sight, or an inflating one, may take:
    ``MORPHGPU_MAX_INPUT_BYTES`` where set, else half the memory available (a reader's parse
    needs at least as much again for the arrays it makes of the bytes), or None."""
    given = os.environ.get(LIMIT_VARIABLE, "").strip()
    if given:
        try:
            return max(0, int(given))
        except ValueError:
            pass  # a bad setting is no setting
    free = available_memory()
    return None if free is None else free // 2


def _too_big(path: str | Path, what: str, limit: int) -> str:
    return (f"{path}: {what} more than {limit / 2**30:.2f} GiB, the bound on an input "
            f"(half the memory available, as the parse needs as much again, unless "
            f"{LIMIT_VARIABLE} sets it in bytes)")


def read_bounded(path: str | Path, error: type[Exception]) -> bytes:
    """The file's bytes. A regular file is read whole (its size is its bound); anything
    else (a device such as /dev/zero, a pipe) streams, and is refused (``error`` naming
    ``path``) once past the bound (_input_limit) rather than read until the machine runs
    out. OSError is left to the caller."""
    with open(path, "rb") as f:
        if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return f.read()
        limit = _input_limit()
        pieces, total = [], 0
        while piece := f.read(_PIECE):
            total += len(piece)
            if limit is not None and total > limit:
                raise error(_too_big(path, "not a regular file, and still going after", limit))
            pieces.append(piece)
        return b"".join(pieces)


def decompressed(raw: bytes, path: str | Path, error: type[Exception]) -> bytes:
    """``raw`` decompressed when it starts with a gzip, xz or bzip2 magic number, else as it
    is; a truncated or corrupt stream raises ``error`` naming ``path``, and so does one
    whose output passes both the bound (_input_limit) and BOMB_RATIO times its own size
    (checked as it inflates, so a small file that expands without end is refused, not
    followed until the machine runs out)."""
    if raw[:2] == _GZIP:
        return _inflate(raw, _GZIP, lambda: zlib.decompressobj(wbits=31), path, error)
    if raw[:6] == _XZ:
        return _inflate(raw, _XZ, lzma.LZMADecompressor, path, error)
    if raw[:3] == _BZIP2:
        return _inflate(raw, _BZIP2, bz2.BZ2Decompressor, path, error)
    return raw


def _inflate(raw: bytes, magic: bytes, fresh: Callable[[], Any], path: str | Path,
             error: type[Exception]) -> bytes:
    """Every stream of ``raw`` (members written one after another, as ``cat a.gz b.gz``
    makes), fed in pieces of _FEED bytes and taken out in pieces of at most _PIECE, so
    neither a copy of the input's rest per step nor an unbounded output happens; zero bytes
    after the last stream are padding."""
    limit = _input_limit()
    out: list[bytes] = []
    total, pos = 0, 0
    view = memoryview(raw)
    try:
        while pos < len(raw):
            d = fresh()
            while not d.eof:
                feed = b""
                if _starved(d):
                    if pos >= len(raw):
                        raise EOFError("the stream ends before its end marker")
                    feed = view[pos:pos + _FEED]
                    pos += len(feed)
                piece = _step(d, feed)
                total += len(piece)
                if limit is not None and total > limit and total > BOMB_RATIO * len(raw):
                    raise error(_too_big(path, f"decompressed, it comes to over {BOMB_RATIO} "
                                               "times its size and", limit))
                out.append(piece)
            pos -= len(d.unused_data)  # back to where this stream ended
            if raw[pos:pos + len(magic)] != magic:
                if raw[pos:].strip(b"\x00"):
                    raise ValueError("data after the end of the compressed stream")
                break
    except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError) as exc:
        raise error(f"{path}: compressed stream is truncated or corrupt ({exc})") from exc
    return b"".join(out)


def _step(d: Any, feed: Any) -> bytes:
    """At most _PIECE bytes more of ``d``'s output, given ``feed`` (empty while it still
    holds input: zlib in ``unconsumed_tail``, lzma and bz2 inside)."""
    if hasattr(d, "unconsumed_tail"):
        return d.decompress(feed or d.unconsumed_tail, _PIECE)
    return d.decompress(feed, max_length=_PIECE)


def _starved(d: Any) -> bool:
    """Whether ``d`` has used all the input it was given."""
    if hasattr(d, "unconsumed_tail"):
        return not d.unconsumed_tail
    return d.needs_input


UTF8_BOM = b"\xef\xbb\xbf"


def without_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark. Editors on Windows save text with
    one; every format read here is ASCII, so kept, it only ever hid the first line's header
    or number."""
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data
