"""What the command line prints: a human summary or one JSON document, and progress lines.

Wings' command-line modules build a plain dict of results and hand it to :func:`emit`;
long runs call a :class:`Progress` (tqdm, on stderr, only when stderr is a terminal) once
per round or phase, so ``--json`` output on stdout stays parseable and logs stay clean.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import numpy as np


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no inf or NaN: Python's json writes the bare words Infinity and NaN,
        # which strict readers (jq, JSON.parse) reject. They go out as strings.
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def add_device_and_json(parser: Any) -> None:
    """The two options every algorithm's subcommand takes."""
    parser.add_argument("--device", default="auto", choices=["auto", "gpu", "cpu"],
                        help="where to run (default: the GPU if one is usable)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def output_path(text: str) -> str:
    """argparse type of an output file option: an empty path is refused (``--output ''``
    was taken as no option, and the run wrote nothing without a word)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path: give a file name")
    return text


def to_json(result: dict[str, Any]) -> str:
    """One strict JSON document: NumPy values as Python ones, non-finite floats as the
    strings "inf", "-inf" and "nan" (``mst --json`` printed ``Infinity`` for an infinite
    total)."""
    return json.dumps(_plain(result), indent=2, sort_keys=False, allow_nan=False)


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


def progress_wanted(requested: bool = True) -> bool:
    """Progress is drawn on stderr when it is a terminal (and not for ``--json``).

    ``MORPHGPU_PROGRESS=1`` forces it on (tests, logs that want it), ``=0`` off.
    """
    forced = os.environ.get("MORPHGPU_PROGRESS", "")
    if forced in ("0", "1"):
        return requested and forced == "1"
    return requested and sys.stderr.isatty()


class Progress:
    """One tqdm status line on stderr for a command: ``progress("round 3: ...")`` or
    ``progress.stage("reading the graph")`` update it; nothing is drawn when stderr is not
    a terminal, and the line appears only after ``delay`` seconds (short runs stay quiet).
    """

    def __init__(self, label: str, *, enabled: bool = True, delay: float = 1.0,
                 interval: float = 0.5) -> None:
        self.label = label
        self.enabled = progress_wanted(enabled)
        self.delay = 0.0 if os.environ.get("MORPHGPU_PROGRESS") == "1" else delay
        self.interval = interval
        self.bar: Any = None

    def _bar(self) -> Any:
        if self.bar is None:
            from tqdm import tqdm  # noqa: PLC0415

            self.bar = tqdm(desc=self.label, total=None, file=sys.stderr, delay=self.delay,
                            mininterval=self.interval, leave=False, dynamic_ncols=True,
                            bar_format="{desc} [{elapsed}]{postfix}")
        return self.bar

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        bar = self._bar()
        bar.set_postfix_str(message, refresh=False)
        bar.update(1)

    def stage(self, name: str) -> None:
        """A new phase of a command (reading, solving, checking): shown at once."""
        if not self.enabled:
            return
        bar = self._bar()
        bar.set_postfix_str(name, refresh=True)

    def close(self) -> None:
        """Erase the line (so the command's output starts on a clean one) and stop."""
        if self.bar is not None:
            self.bar.clear()  # close() alone skips erasing a line drawn only by refresh()
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
