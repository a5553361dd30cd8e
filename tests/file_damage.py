"""Hypothesis helpers shared by the readers' reliability tests (tests/test_reliability_files_*)."""

from __future__ import annotations

from hypothesis import strategies as st


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
