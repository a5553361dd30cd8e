"""Loading the package's CUDA C++ files as CuPy RawModules.

Kernels live in ``.cu`` files inside the package (``morphgpu/<wing>/kernels/*.cu``) and
include the shared headers as ``#include <morphgpu/barrier.cuh>``; this module compiles
them with NVRTC through ``cupy.RawModule`` with the package include path.

Why a wrapper at all:
- CuPy's on-disk cache is keyed by the source text and options, not by the headers the
  source includes; we add a digest of every shared header to the options, so editing a
  header recompiles its users.
- NVRTC errors otherwise name a temporary file; a ``#line`` directive makes them name
  the package file, and the error is re-raised as :class:`KernelCompileError`.
- The same flags are used by ``nvcc -ptx`` in the CPU test that compiles every kernel in
  CI (:func:`nvcc_command`), so a kernel that does not compile never costs GPU time.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import backend, compiler_key_cache

PACKAGE_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = PACKAGE_DIR / "include"

# C++17 for if-constexpr and inline variables; no fast-math: several wings need exact
# IEEE behaviour (geometric predicates, survey products near zero).
BASE_OPTIONS: tuple[str, ...] = ("-std=c++17",)
# What CuPy adds to every NVRTC compile after the caller's options
# (cupy/cuda/compiler.py, _compile_with_cache_cuda: ``options += ('-ftz=true',)``): the
# nvcc mirror adds it too, so the CPU compile check sees the flags the GPU build uses.
CUPY_IMPLICIT_OPTIONS: tuple[str, ...] = ("-ftz=true",)


class KernelCompileError(RuntimeError):
    """NVRTC rejected a kernel file; the message starts with the file name."""


def kernel_files() -> list[Path]:
    """Every ``.cu`` file shipped in the package (what the compile test checks)."""
    return sorted(PACKAGE_DIR.rglob("*.cu"))


@functools.lru_cache(maxsize=1)
def _headers_digest() -> str:
    # os.walk rather than Path.rglob: this runs in every new process before its first
    # kernel, and pathlib's walk of the package cost 9 ms of a 63 ms first BFS call
    # (H100, cProfile, session 15).
    h = hashlib.sha1()
    found = []
    for root, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found += [os.path.join(root, f) for f in files if f.endswith(".cuh")]
    base = len(str(PACKAGE_DIR)) + 1
    for path in sorted(found, key=lambda q: q[base:].replace(os.sep, "/")):
        h.update(path[base:].replace(os.sep, "/").encode())
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def define_lines(defines: Mapping[str, Any] | None) -> str:
    """``#define`` lines equal to the ``-D`` options of _define_options (a bare name is 1)."""
    return "".join(f"#define {key} {1 if value is None else value}\n"
                   for key, value in sorted((defines or {}).items()))


def _define_options(defines: Mapping[str, Any] | None) -> list[str]:
    out = []
    for key, value in sorted((defines or {}).items()):
        out.append(f"-D{key}" if value is None else f"-D{key}={value}")
    return out


def compile_options(
    defines: Mapping[str, Any] | None = None, extra: Sequence[str] = ()
) -> tuple[str, ...]:
    return (
        *BASE_OPTIONS,
        f"-I{INCLUDE_DIR}",
        f"-I{PACKAGE_DIR}",
        *_define_options(defines),
        *extra,
    )


def file_options(path: str | Path) -> tuple[str, ...]:
    """Options a file needs whatever its defines: a file that launches kernels from device
    code (dynamic parallelism, ``<<<`` in its text) is compiled relocatable, which links
    the device runtime."""
    return ("-rdc=true",) if "<<<" in resolve(path).read_text() else ()


def resolve(path: str | Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else PACKAGE_DIR / p


_CONSTEXPR = re.compile(r"^constexpr\s+(?:int|i64|unsigned|long long)\s+([^;]*);", re.M)
_INTEGER_SETTING = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(-?\d+)\s*$")


@functools.cache
def source_constants(path: str | Path) -> dict[str, int]:
    """The integer ``constexpr`` constants a kernel file sets at file scope (a line that
    starts ``constexpr``) with a literal (``constexpr int A = 1, B = 2;``), by name: the
    host code that must agree with a kernel (buffer sizes, mode codes) reads them here
    instead of repeating them. Preprocessor conditions are not evaluated, so a name set
    to two different values in one file is an error."""
    out: dict[str, int] = {}
    for match in _CONSTEXPR.finditer(resolve(path).read_text()):
        for part in match.group(1).split(","):
            setting = _INTEGER_SETTING.match(part)
            if setting:
                name, value = setting.group(1), int(setting.group(2))
                if out.get(name, value) != value:
                    raise ValueError(f"{path}: constexpr {name} is set to {out[name]} and "
                                     f"to {value}")
                out[name] = value
    return out


def read_source(path: str | Path) -> str:
    """The file's text with a #line directive so compiler messages name the package file."""
    p = resolve(path)
    rel = p.relative_to(PACKAGE_DIR).as_posix() if p.is_relative_to(PACKAGE_DIR) else str(p)
    return f'#line 1 "morphgpu/{rel}"\n' + p.read_text()


@functools.cache
def _load(
    path: str,
    defines: tuple[tuple[str, Any], ...],
    name_expressions: tuple[str, ...] | None,
    cooperative: bool,
    extra: tuple[str, ...],
) -> Any:
    cp = backend.cupy_module()
    # Defines go into the source, not the options: CuPy compiles an empty program once per
    # distinct option set in each process (its compiler-version key), ~13 ms each on an
    # H100 host, so a first call touching five define sets paid ~65 ms for nothing. With
    # the defines in the text, every module of a kind shares one option set; the disk
    # cache is still keyed by the full source.
    options = compile_options(None, (*file_options(path), *extra))
    source = (define_lines(dict(defines)) + f"// headers {_headers_digest()}\n"
              + read_source(path))
    compiler_key_cache.seed(cp)
    try:
        module = cp.RawModule(
            code=source,
            options=options,
            name_expressions=name_expressions,
            enable_cooperative_groups=cooperative,
        )
        module.compile()
    except cp.cuda.compiler.CompileException as exc:
        raise KernelCompileError(f"{path}: NVRTC failed:\n{exc}") from exc
    compiler_key_cache.save(cp)
    return module


def load_module(
    path: str | Path,
    *,
    defines: Mapping[str, Any] | None = None,
    name_expressions: Sequence[str] | None = None,
    cooperative: bool = False,
    extra_options: Sequence[str] = (),
) -> Any:
    """Compile (or fetch from cache) a package ``.cu`` file as a ``cupy.RawModule``.

    ``path`` is relative to the package (``"bfs/kernels/bfs.cu"``). ``defines`` become
    ``#define KEY VALUE`` lines at the top of the source (as ``-DKEY=VALUE`` would) and
    select template-like variants such as the index types; each distinct set is compiled
    once per process and cached on disk by CuPy.
    ``cooperative=True`` compiles for, and launches with, cooperative launch (grid.sync()).
    """
    return _load(
        str(path),
        tuple(sorted((defines or {}).items())),
        tuple(name_expressions) if name_expressions is not None else None,
        bool(cooperative),
        tuple(extra_options),
    )


def get_kernel(path: str | Path, name: str, **kwargs: Any) -> Any:
    """One kernel of a package file (see :func:`load_module` for the keyword arguments)."""
    return load_module(path, **kwargs).get_function(name)


def index_defines(vid_dtype: Any, eid_dtype: Any) -> dict[str, str]:
    """The -D values that pick a kernel's vertex-id and edge-offset C types."""
    import numpy as np  # noqa: PLC0415

    ctype = {np.dtype(np.int32): "int", np.dtype(np.int64): "long long"}
    return {"MG_VID_T": ctype[np.dtype(vid_dtype)], "MG_EID_T": ctype[np.dtype(eid_dtype)]}


def nvcc_command(
    path: str | Path, out: str | Path, defines: Mapping[str, Any] | None = None
) -> list[str]:
    """The nvcc invocation that mirrors the NVRTC compile, for the no-GPU compile test."""
    return [
        "nvcc",
        "-ptx",
        "-arch=sm_90",
        *compile_options(defines, file_options(path)),
        *CUPY_IMPLICIT_OPTIONS,
        "-o",
        str(out),
        str(resolve(path)),
    ]


def launch_config(n_items: int, threads: int = 256, max_blocks: int | None = None) -> tuple:
    """(grid, block) for a flat launch over ``n_items`` (at least one block)."""
    blocks = max(1, -(-int(n_items) // threads))
    if max_blocks is not None:
        blocks = min(blocks, max_blocks)
    return (blocks,), (threads,)
