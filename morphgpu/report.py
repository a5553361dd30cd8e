"""What the command line prints: a human summary or one JSON document, and progress lines.

Wings' command-line modules build a plain dict of results and hand it to :func:`emit`;
long runs call a :class:`Progress` once per round. Progress goes to stderr so ``--json``
output on stdout stays parseable.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def add_device_and_json(parser: Any) -> None:
    """The two options every algorithm's subcommand takes."""
    parser.add_argument("--device", default="auto", choices=["auto", "gpu", "cpu"],
                        help="where to run (default: the GPU if one is usable)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(_plain(result), indent=2, sort_keys=False)


def emit(result: dict[str, Any], *, as_json: bool, title: str = "") -> None:
    if as_json:
        print(to_json(result))
        return
    if title:
        print(title)
    width = max((len(str(k)) for k in result), default=0)
    for key, value in result.items():
        if isinstance(value, float):
            value = f"{value:.6g}"
        elif isinstance(value, dict):
            value = ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
        print(f"  {str(key).ljust(width)}  {value}")


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


class Progress:
    """Prints at most one line every ``interval`` seconds, and only after ``delay``."""

    def __init__(self, label: str, *, enabled: bool = True, delay: float = 1.0,
                 interval: float = 1.0) -> None:
        self.label = label
        self.enabled = enabled
        self.start = time.perf_counter()
        self.delay = delay
        self.interval = interval
        self.last = 0.0

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.start < self.delay or now - self.last < self.interval:
            return
        self.last = now
        print(f"[{self.label} {now - self.start:7.1f}s] {message}", file=sys.stderr, flush=True)
