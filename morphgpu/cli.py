"""The ``morphgpu`` command: ``info``, ``demo`` and one subcommand per algorithm.

Each wing ships ``morphgpu/<wing>/cli.py`` with two functions:

- ``register(subparsers)``: adds its subcommand (``bfs``, ``mst``, ``refine``, ``sat``,
  ``pta``) with ``set_defaults(run=...)``; ``run(args) -> int`` is the exit code.
- ``demo(device: str) -> dict``: runs the algorithm on a built-in generated input,
  validates the result with an independent check, and returns at least
  ``{"algorithm", "input", "valid" (bool), "seconds"}`` plus whatever else is useful.

A wing without that module is simply not offered yet.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import platform
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from typing import Any, NoReturn

from . import __version__, backend, report

WINGS = ("bfs", "mst", "dmr", "sp", "pta")
# The subcommands each wing's register() adds (tests/test_cli.py checks them against it).
# A command line that names one builds a parser with that wing alone: each wing's CLI
# imports its algorithms (and SciPy, the DIMACS/graph readers, ...), and the four a run
# does not use cost a `morphgpu sat` start about 0.1 s of imports.
COMMANDS = {"bfs": "bfs", "dyn": "bfs", "mst": "mst", "refine": "dmr", "sat": "sp", "pta": "pta"}
# Top-level options that may precede the command and change nothing about the parser; any
# other option there (-h lists every command, --version, abbreviations) takes every wing.
_PLAIN_OPTIONS = ("-v", "--verbose")


def _wing_cli(wing: str) -> Any | None:
    try:
        return importlib.import_module(f"morphgpu.{wing}.cli")
    except ModuleNotFoundError as exc:
        if exc.name == f"morphgpu.{wing}.cli":
            return None
        raise


def info() -> dict[str, Any]:
    import numpy  # noqa: PLC0415
    import scipy  # noqa: PLC0415

    out: dict[str, Any] = {
        "morphgpu": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
    }
    try:
        import triangle  # noqa: PLC0415, F401

        out["triangle"] = "installed"
    except ImportError:
        out["triangle"] = "missing"
    if backend.gpu_available():
        cp = backend.cupy_module()
        props = backend.gpu_properties()
        out["cupy"] = cp.__version__
        out["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
        out["gpu"] = {
            "name": props["name"],
            "multiprocessors": props["multiprocessors"],
            "memory_GiB": round(props["memory_bytes"] / 2**30, 1),
            "compute_capability": props["compute_capability"],
        }
    else:
        out["gpu"] = f"none ({backend.gpu_unavailable_reason()})"
    # What device="auto" runs here (device="cpu" always runs our NumPy paths).
    out["auto_runs"] = {
        "breadth_first_order": "SciPy's breadth_first_order",  # on a GPU machine too
        "other BFS, mst, refine, sat, pta": "the GPU",
    } if backend.gpu_available() else {
        "bfs": "SciPy's breadth_first_order",
        "mst": "SciPy's minimum_spanning_tree (Kruskal)",
        "refine": "Triangle",
        "sat, pta": "morphgpu's NumPy path",
    }
    out["algorithms"] = [w for w in WINGS if _wing_cli(w) is not None]
    return out


def _run_info(args: argparse.Namespace) -> int:
    report.emit(info(), as_json=args.json, title="morphgpu info")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    side = backend.resolve_device(args.device, who="morphgpu demo")
    results = []
    ok = True
    wings = args.only or [w for w in WINGS if _wing_cli(w) is not None]
    for wing in wings:
        mod = _wing_cli(wing)
        if mod is None:
            results.append({"algorithm": wing, "valid": False, "error": "not available"})
            ok = False
            continue
        t0 = time.perf_counter()
        try:
            res = mod.demo(side)
        except Exception as exc:  # a demo failure is reported, and fails the command
            res = {"algorithm": wing, "valid": False, "error": f"{type(exc).__name__}: {exc}"}
        res.setdefault("seconds", time.perf_counter() - t0)
        ok &= bool(res.get("valid"))
        results.append(res)
        if not args.json:
            status = "valid" if res.get("valid") else "INVALID"
            extra = res.get("error") or res.get("summary", "")
            print(
                f"{res.get('algorithm', wing):<6} {status:<8} {res['seconds']:8.3f} s  "
                f"{res.get('input', '')}  {extra}",
                flush=True,
            )
    if args.json:
        print(report.to_json({"device": backend.device_name(side), "results": results}))
    else:
        print(f"device: {backend.device_name(side)}; {'all valid' if ok else 'FAILURES'}")
    return 0 if ok else 1


def wings_needed(argv: Sequence[str]) -> tuple[str, ...]:
    """The wings whose subcommands parsing ``argv`` needs: the named command's wing alone,
    or every wing (no command, info, demo, help, an unknown command)."""
    for token in argv:
        if token in _PLAIN_OPTIONS:
            continue
        wing = COMMANDS.get(token)
        if wing is None or _wing_cli(wing) is None:
            return WINGS
        return (wing,)
    return WINGS


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``morphgpu`` parser; given the command line, only with the subcommands it needs
    (see :func:`wings_needed`), else with every wing's."""
    parser = argparse.ArgumentParser(
        prog="morphgpu", description="Morph graph algorithms and BFS on GPUs (CPU fallback)."
    )
    parser.add_argument("--version", action="version", version=f"morphgpu {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what is chosen")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("info", help="versions and the GPU, or its absence")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=_run_info)

    p = sub.add_parser("demo", help="every algorithm on a generated input, validated, timed")
    report.add_device_and_json(p)
    p.add_argument("--only", nargs="+", choices=WINGS, help="run only these algorithms")
    p.set_defaults(run=_run_demo)

    for wing in WINGS if argv is None else wings_needed(argv):
        mod = _wing_cli(wing)
        if mod is not None:
            mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; a closed stdout (``morphgpu ... | head``) ends it quietly."""
    if sys.stdout is None:
        # Started with stdout closed (`morphgpu info >&-`): Python sets sys.stdout to None,
        # print() dropped every line without a word, and the flush below ended the command
        # in an AttributeError traceback. Said once, as a shell tool says it.
        print("morphgpu: error: standard output is closed", file=sys.stderr)
        return 1
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # The reader went away: say nothing, and keep Python from reporting the failed
        # flush at exit (the recipe in Python's signal module documentation).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell tool killed by the pipe reports
    except KeyboardInterrupt:
        # Ctrl-C during a long run (a solve, a refinement) printed a traceback through our
        # modules; a shell tool stopped this way says so once and reports SIGINT.
        print("morphgpu: interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT


def console() -> NoReturn:
    """The ``morphgpu`` command's entry point: ``main``, then ``leave``."""
    leave(main())


def leave(code: int) -> NoReturn:
    """End the process with ``code``. Once CuPy is loaded, Python's own teardown releases
    the GPU memory pool block by block and each loaded module in turn, all of it after the
    answer was printed: on the H100 host a process that had made one 2 GB array ended 3.6 s
    later than one that skipped it, and after a 1M-variable SAT solve the process ended
    0.26-0.27 s after main returned against 0.15-0.16 s without it. The driver releases the
    same when the process ends, so with the output flushed the process ends there
    (``os._exit``). A thread that is not a daemon and still runs gets Python's normal exit,
    which waits for it."""
    if "cupy" not in sys.modules:
        sys.exit(code)
    if "morphgpu.transfer" in sys.modules:
        sys.modules["morphgpu.transfer"].close()  # its idle copy threads
    this = threading.current_thread()
    if this is not threading.main_thread() or any(
        t is not this and t.is_alive() and not t.daemon for t in threading.enumerate()
    ):
        sys.exit(code)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader went away: nothing to keep
            pass
    os._exit(code)


def _one_line_warning(command: str) -> Any:
    """A warning as one stderr line naming the command, as an error is: Python's format
    added the file and line and the source line of the call, e.g. "morphgpu/dmr/cli.py:48:
    UserWarning: min_angle=35.0 is above 33.8°: ..." then "  out, stats = api.refine_wi..."."""

    def show(message: Any, category: type, filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        print(f"morphgpu {command}: warning: {message}", file=sys.stderr if file is None
              else file)

    return show


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s"
    )
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        with warnings.catch_warnings():  # restores showwarning for in-process callers
            warnings.showwarning = _one_line_warning(args.command)
            return int(args.run(args) or 0)
    except BrokenPipeError:
        raise  # an OSError, but main's to handle: the reader left, nothing failed
    except (ValueError, OSError, backend.DeviceError, MemoryError, RuntimeError) as exc:
        # RuntimeError: what the algorithms raise when a run stops without an answer
        # (dmr.refine's "not converging" above 33.8 degrees or out of host memory, pta's "no
        # fixed point"); it ended `morphgpu refine x.poly --min-angle 45` in a traceback.
        # A MemoryError from NumPy or Python has no message: the line ended at "error: ".
        said = str(exc) or ("out of memory" if isinstance(exc, MemoryError)
                            else type(exc).__name__)
        print(f"morphgpu {args.command}: error: {said}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    console()
