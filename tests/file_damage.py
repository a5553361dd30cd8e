"""Helpers shared by the readers' reliability tests (tests/test_reliability_files_*,
tests/test_reliability_cases.py): a file written from bytes or text, and a hypothesis
strategy of damaged files."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    """``tmp_path / name`` holding ``data`` exactly (text as UTF-8, no newline translation)."""
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def damaged(data: st.DataObject, valid: bytes, alphabet: bytes, max_edits: int = 3) -> bytes:
    """``valid`` after 1..max_edits random edits, each setting, inserting or deleting one
    byte drawn from ``alphabet`` (the bytes a reader's grammar turns on, plus a few it must
    refuse): files a reader meets when they are truncated, mistyped or mis-encoded."""
    raw = bytearray(valid)
    for _ in range(data.draw(st.integers(1, max_edits))):
        at = data.draw(st.integers(0, len(raw) - 1))
        byte = data.draw(st.sampled_from(list(alphabet)))
        kind = data.draw(st.sampled_from(["set", "insert", "delete"]))
        if kind == "set":
            raw[at] = byte
        elif kind == "insert":
            raw.insert(at, byte)
        elif len(raw) > 1:
            del raw[at]
    return bytes(raw)
