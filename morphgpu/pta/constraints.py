"""Points-to constraint sets: the LSG files, the Galois text form, and their checks.

The exact meaning of every field is in ``shared/specs/pta-constraints.md``: variables
``0 .. n_vars-1``; variables ``0 .. last_object`` are also abstract objects, object ``o``
of size ``s`` owning the field ids ``o .. o+s-1``; five constraint kinds (address-of,
copy, load, store, gep) with an offset; an offline merge map ``rep`` (hcd) whose merged
variables share their representative's points-to set.

Address-of a variable above ``lastObjectVar`` (some public programs have it) is accepted
with a :class:`ConstraintFormatWarning` and solved by the reference implementation's rule:
only ids ``0 .. lastObjectVar`` have a size, every other variable has size 0, so such a
variable is a points-to target like any object, loads and stores through a pointer to it
act on it (offset 0 names the object itself), and a gep through it adds nothing
(``size(o) > offset`` fails). Every solver (CPU, GPU rounds, dense) reads sizes from the
same ``Layout`` (layout.py), so they all apply this rule.

Parsing is vectorised (the files hold up to a million lines); only when the fast path
fails is the file read again line by line, so the error can name the file and the line.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import arguments
from ..compressed import decompressed, read_bounded, without_bom
from ..csr import check_declared_size

ADDRESS_OF, COPY, LOAD, STORE, GEP = 0, 1, 2, 3, 4
KIND_NAMES = ("address-of", "copy", "load", "store", "gep")

# Object 1 is the unknown/null target: stores into it are dropped.
NULL_OBJECT = 1


class ConstraintFormatError(ValueError):
    """A constraint file is malformed; the message names the file and the line."""


class ConstraintFormatWarning(UserWarning):
    """A constraint set departs from the format in a way the reference implementation
    accepts (an address-of a variable above ``lastObjectVar``); it is solved by that
    implementation's rule."""


@dataclass
class ConstraintSet:
    """One program's constraints, in variable ids of the original numbering.

    ``rep[v]`` is the final offline representative of ``v`` (``v`` itself when unmerged);
    ``obj_size[o]`` the number of fields of object ``o`` (0 for a non-object variable).
    """

    n_vars: int
    last_object: int
    obj_size: np.ndarray
    kind: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    offset: np.ndarray
    rep: np.ndarray
    last_function: int = -1
    name: str = "constraints"
    var_names: list[str] | None = field(default=None, repr=False)
    # Online HCD facts (y, x): every object x points to has y's points-to set. Solvers may
    # merge them early (an optimisation; the solution is the same without).
    hcd_pairs: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for attr in ("obj_size", "kind", "src", "dst", "offset", "rep"):
            setattr(self, attr, _int_array(getattr(self, attr), f"{self.name}: {attr}"))
        if self.hcd_pairs is not None:
            self.hcd_pairs = _int_array(self.hcd_pairs, f"{self.name}: hcd_pairs")
        validate(self)

    @property
    def n_constraints(self) -> int:
        return int(self.kind.size)

    def counts(self) -> dict[str, int]:
        binc = np.bincount(self.kind, minlength=5)
        return {name: int(binc[i]) for i, name in enumerate(KIND_NAMES)}



def _int_array(values, where: str) -> np.ndarray:
    """int64 ids, refusing floats and out-of-range values instead of truncating them."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:  # ragged rows
        raise ConstraintFormatError(f"{where}: not an array of integer ids ({exc})") from None
    if arr.size and arr.dtype.kind not in "iub":
        raise ConstraintFormatError(f"{where}: ids must be integers, got dtype {arr.dtype}")
    if arr.size and arr.dtype.kind == "u" and int(arr.max()) > _ID_LIMIT:
        raise ConstraintFormatError(f"{where}: an id is past 2**63 - 1")
    return arr.astype(np.int64, copy=False)


def validate(cs: ConstraintSet) -> None:
    """Every id in range and every kind known; a clear ValueError otherwise."""
    n = cs.n_vars
    if n < 1:
        raise ConstraintFormatError(f"{cs.name}: numVars must be positive, got {n}")
    if not (-1 <= cs.last_object < n):
        raise ConstraintFormatError(
            f"{cs.name}: lastObjectVar {cs.last_object} is outside 0..{n - 1}"
        )
    if cs.obj_size.shape != (n,):
        raise ConstraintFormatError(f"{cs.name}: obj_size must have numVars={n} entries")
    bad = np.flatnonzero(cs.obj_size[cs.last_object + 1:] != 0)
    if bad.size:
        v = cs.last_object + 1 + bad[0]
        raise ConstraintFormatError(
            f"{cs.name}: variable {v} above lastObjectVar={cs.last_object} has size "
            f"{cs.obj_size[v]}; a variable that is not an object has size 0"
        )
    if np.any(cs.obj_size < 0):
        raise ConstraintFormatError(f"{cs.name}: an object size is negative")
    if cs.rep.shape != (n,):
        raise ConstraintFormatError(f"{cs.name}: rep must have numVars={n} entries")
    m = cs.kind.size
    if not (cs.src.size == cs.dst.size == cs.offset.size == m):
        raise ConstraintFormatError(f"{cs.name}: constraint arrays differ in length")
    if m:
        bad = np.flatnonzero((cs.kind < 0) | (cs.kind > 4))
        if bad.size:
            raise ConstraintFormatError(
                f"{cs.name}: constraint {bad[0]} has unknown type {cs.kind[bad[0]]}"
            )
        for what, arr in (("src", cs.src), ("dst", cs.dst)):
            bad = np.flatnonzero((arr < 0) | (arr >= n))
            if bad.size:
                raise ConstraintFormatError(
                    f"{cs.name}: constraint {bad[0]} has {what}={arr[bad[0]]} outside 0..{n - 1}"
                )
        bad = np.flatnonzero(cs.offset < 0)
        if bad.size:
            raise ConstraintFormatError(f"{cs.name}: constraint {bad[0]} has a negative offset")
        bad = np.flatnonzero((cs.kind == COPY) & (cs.offset != 0))
        if bad.size:
            raise ConstraintFormatError(
                f"{cs.name}: copy constraint {bad[0]} carries an offset, which has no meaning"
            )
        addr = cs.kind == ADDRESS_OF
        bad = np.flatnonzero(addr & (cs.src > cs.last_object))
        if bad.size:
            # The spec's rule (LonestarGPU's readNodes): such a variable is a points-to
            # target like any object, of size 0, so a gep through it adds nothing.
            warnings.warn(
                f"{cs.name}: {bad.size} address-of constraint(s) take the address of a "
                f"variable above lastObjectVar={cs.last_object} (the first: constraint "
                f"{bad[0]}, variable {cs.src[bad[0]]}); each is taken as an object of size "
                "0 (a gep through it adds nothing)",
                ConstraintFormatWarning, stacklevel=4)
    if np.any((cs.rep < 0) | (cs.rep >= n)):
        raise ConstraintFormatError(f"{cs.name}: a merge target is outside 0..{n - 1}")
    if cs.hcd_pairs is not None and cs.hcd_pairs.size and (
        cs.hcd_pairs.min() < 0 or cs.hcd_pairs.max() >= n
    ):
        raise ConstraintFormatError(f"{cs.name}: an HCD pair names a variable outside 0..{n - 1}")
    if np.any(cs.rep[cs.rep] != cs.rep):
        raise ConstraintFormatError(f"{cs.name}: rep is not resolved to final representatives")


# ----------------------------------------------------------------------------- text input
def _open_text(path: Path) -> str:
    try:
        raw = read_bounded(path, ConstraintFormatError)
        if path.suffix == ".gz":
            raw = decompressed(raw, path, ConstraintFormatError)
    except OSError as exc:
        raise ConstraintFormatError(f"{path}: cannot be read ({exc})") from exc
    raw = without_bom(raw)  # kept, it made the first line's number unreadable
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConstraintFormatError(
            f"{path}:{line}: not a text file (byte {exc.start} is not UTF-8 text)"
        ) from None


def _data_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, stripped line) of every non-blank, non-comment line.

    Lines end at LF, CRLF or CR only: str.splitlines would also end them at form feeds,
    vertical tabs, \\x1c-\\x1e and \\x85, splitting a comment so that its tail reads as data
    and shifting every later line number.
    """
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if s and not s.startswith("#"):
            out.append((i, s))
    return out


def _ints(where: str, lineno: int, line: str, n_fields: int | None) -> list[int]:
    parts = [p.strip() for p in line.split(",")]
    if n_fields is not None and len(parts) != n_fields:
        raise ConstraintFormatError(
            f"{where}:{lineno}: expected {n_fields} comma-separated fields, got {len(parts)}: "
            f"{line[:80]!r}"
        )
    try:
        if not all(_UNSIGNED.fullmatch(p) for p in parts):
            raise ValueError
        values = [int(p) for p in parts]
    except ValueError:
        raise ConstraintFormatError(
            f"{where}:{lineno}: fields must be unsigned integers: {line[:80]!r}"
        ) from None
    if any(v < 0 for v in values):
        raise ConstraintFormatError(f"{where}:{lineno}: negative value in {line[:80]!r}")
    if any(v > _ID_LIMIT for v in values):
        raise ConstraintFormatError(
            f"{where}:{lineno}: value past 2**63 - 1 (ids and counts are int64) in {line[:80]!r}"
        )
    return values


_ID_LIMIT = 2**63 - 1


_UNSIGNED = re.compile(r"[+]?[0-9]+")


def _table(where: str, lines: Sequence[tuple[int, str]], n_fields: int) -> np.ndarray:
    """The lines as an int64 (len, n_fields) table; slow exact diagnosis if the fast path fails."""
    if not lines:
        return np.zeros((0, n_fields), dtype=np.int64)
    joined = ",".join(s for _, s in lines)
    try:
        # int() and NumPy read non-ASCII digits and '1_0'; the format has neither
        if not joined.isascii() or "_" in joined:
            raise ValueError
        # Every line must have its own n_fields fields: a total that adds up is not enough
        # (a line of 4 and one of 6 would be read as two rows of 5, shifted).
        if any(s.count(",") != n_fields - 1 for _, s in lines):
            raise ValueError
        # Split at commas only: a field holding two numbers ("1 2") or none fails the
        # conversion instead of moving the numbers after it.
        flat = np.array(joined.split(","), dtype=np.int64)
        if flat.size == len(lines) * n_fields and flat.min() >= 0:
            return flat.reshape(len(lines), n_fields)
    except (ValueError, OverflowError):
        pass
    rows = [_ints(where, lineno, s, n_fields) for lineno, s in lines]
    # The exact parse took what NumPy's did not (a field such as "+3"): keep its answer.
    return np.array(rows, dtype=np.int64).reshape(len(lines), n_fields)


# Bytes per variable any solver needs at least: size, representative, row of the variable,
# points-to row pointer (int64 each).
_BYTES_PER_VAR = 32


def _check_n_vars(where: str, n_vars: int) -> None:
    """``where``: the file and line (or the argument) that declares numVars."""
    if n_vars < 1:
        raise ConstraintFormatError(f"{where}: numVars must be positive, got {n_vars}")
    check_declared_size(where, f"numVars={n_vars}", _BYTES_PER_VAR * n_vars,
                        ConstraintFormatError)


def read_nodes(path: Path) -> tuple[int, int, int, np.ndarray]:
    """(numVars, lastObjectVar, lastFunctionNode, size per variable) of a _nodes file."""
    where = str(path)
    lines = _data_lines(_open_text(path))
    if len(lines) < 3:
        raise ConstraintFormatError(f"{where}: needs numVars, lastObjectVar and lastFunctionNode")
    (n_vars,) = _ints(where, *lines[0], 1)
    (last_obj,) = _ints(where, *lines[1], 1)
    (last_fn,) = _ints(where, *lines[2], 1)
    _check_n_vars(f"{where}:{lines[0][0]}", n_vars)
    table = _table(where, lines[3:], 3)
    sizes = np.zeros(n_vars, dtype=np.int64)
    if table.size:
        ids = table[:, 0]
        bad = np.flatnonzero(ids >= n_vars)
        if bad.size:
            ln, s = lines[3 + bad[0]]
            raise ConstraintFormatError(f"{where}:{ln}: id {ids[bad[0]]} >= numVars={n_vars}")
        order = np.argsort(ids, kind="stable")
        repeated = order[1:][ids[order][1:] == ids[order][:-1]]
        if repeated.size:
            # a second size for the same object: which one holds is not for us to pick
            ln, s = lines[3 + int(repeated.min())]
            raise ConstraintFormatError(f"{where}:{ln}: object {ids[repeated.min()]} is listed "
                                        f"a second time: {s!r}")
        sizes[ids] = table[:, 1]
        # size > numVars - id, not id + size > numVars: that sum wraps past int64
        bad = np.flatnonzero(table[:, 1] > n_vars - ids)
        if bad.size:
            ln, s = lines[3 + bad[0]]
            raise ConstraintFormatError(f"{where}:{ln}: object's fields run past numVars: {s!r}")
    return n_vars, last_obj, last_fn, sizes


def read_constraints(path: Path, n_vars: int | None = None) -> np.ndarray:
    """The (m, 5) table id,src,dst,type,offset of a _constraints file."""
    where = str(path)
    lines = _data_lines(_open_text(path))
    if not lines:
        raise ConstraintFormatError(f"{where}: empty constraint file")
    counts = _ints(where, *lines[0], 5)
    body = lines[1:]
    if len(body) != sum(counts):
        raise ConstraintFormatError(
            f"{where}:{lines[0][0]}: the header counts {sum(counts)} constraints but the "
            f"file holds {len(body)}"
        )
    table = _table(where, body, 5)
    _check_rows(where, body, table, n_vars)
    _check_kind_counts(f"{where}:{lines[0][0]}", counts, table)
    return table


def _check_kind_counts(where: str, header_counts: list[int], table: np.ndarray) -> None:
    """The header counts each kind's constraints: the body must hold that many of each.

    Only their sum was checked, so a header that disagreed with the body's types (a
    damaged header, or the type column of another field) was read without a word.
    """
    held = np.bincount(table[:, 3], minlength=5).tolist() if table.size else [0] * 5
    if held != header_counts:
        announced = ", ".join(f"{c} {k}" for c, k in zip(header_counts, KIND_NAMES[:4]))
        raise ConstraintFormatError(
            f"{where}: the header counts {announced} and {header_counts[4]} gep constraints, "
            f"but the file holds {', '.join(map(str, held[:4]))} and {held[4]}"
        )


def _check_rows(where: str, body, table: np.ndarray, n_vars: int | None) -> None:
    if not table.size:
        return
    bad = np.flatnonzero(table[:, 3] > 4)
    if bad.size:
        ln, s = body[bad[0]]
        raise ConstraintFormatError(f"{where}:{ln}: unknown constraint type in {s!r}")
    bad = np.flatnonzero((table[:, 3] == COPY) & (table[:, 4] != 0))
    if bad.size:
        ln, s = body[bad[0]]
        raise ConstraintFormatError(
            f"{where}:{ln}: a copy constraint carries an offset, which has no meaning: {s!r}"
        )
    if n_vars is not None:
        bad = np.flatnonzero((table[:, 1] >= n_vars) | (table[:, 2] >= n_vars))
        if bad.size:
            ln, s = body[bad[0]]
            raise ConstraintFormatError(
                f"{where}:{ln}: variable id outside 0..{n_vars - 1} in {s!r}"
            )


def read_hcd(path: Path, n_vars: int) -> tuple[np.ndarray, np.ndarray]:
    """(final representative of every variable, online HCD pairs (y, x)) of an _hcd file.

    The second part, pairs ``y,x`` ("every object x points to is pointer-equivalent to
    y"), is optional; its header line ``#keys,#pairs`` gives the pair count.
    """
    where = str(path)
    lines = _data_lines(_open_text(path))
    rep = np.arange(n_vars, dtype=np.int64)
    no_pairs = np.zeros((0, 2), dtype=np.int64)
    if not lines:
        return rep, no_pairs
    (k,) = _ints(where, *lines[0], 1)
    if len(lines) < 1 + k:
        raise ConstraintFormatError(f"{where}: announces {k} merges but holds {len(lines) - 1}")
    pairs = _table(where, lines[1 : 1 + k], 2)
    if pairs.size:
        bad = np.flatnonzero(pairs.max(axis=1) >= n_vars)
        if bad.size:
            ln, s = lines[1 + bad[0]]
            raise ConstraintFormatError(f"{where}:{ln}: variable id >= numVars={n_vars}: {s!r}")
        order = np.argsort(pairs[:, 0], kind="stable")
        repeated = order[1:][pairs[order[1:], 0] == pairs[order[:-1], 0]]
        if repeated.size:
            # merged into two representatives: which one holds is not for us to pick
            ln, s = lines[1 + int(repeated.min())]
            raise ConstraintFormatError(
                f"{where}:{ln}: variable {pairs[repeated.min(), 0]} is merged a second time: "
                f"{s!r}")
        rep[pairs[:, 0]] = pairs[:, 1]
    rep = resolve_chains(rep, where)
    rest = lines[1 + k:]
    if not rest:
        return rep, no_pairs
    _, n_pairs = _ints(where, *rest[0], 2)
    if len(rest) - 1 != n_pairs:
        raise ConstraintFormatError(
            f"{where}:{rest[0][0]}: announces {n_pairs} HCD pairs but holds {len(rest) - 1}"
        )
    hcd = _table(where, rest[1:], 2)
    if hcd.size:
        bad = np.flatnonzero(hcd.max(axis=1) >= n_vars)
        if bad.size:
            ln, s = rest[1 + bad[0]]
            raise ConstraintFormatError(f"{where}:{ln}: variable id >= numVars={n_vars}: {s!r}")
    return rep, hcd


def resolve_chains(rep: np.ndarray, where: str = "merge map") -> np.ndarray:
    """Follow rep to the final representative (pointer jumping); a cycle is an error."""
    original = rep
    rep = rep.copy()
    for _ in range(64):
        nxt = rep[rep]
        if np.array_equal(nxt, rep):
            # Pointer jumping collapses a cycle of power-of-two length to the identity;
            # a true representative is a fixed point of the original map.
            bad = np.flatnonzero(original[rep] != rep)
            if bad.size:
                raise ConstraintFormatError(
                    f"{where}: the merge map has a cycle through variable {int(bad[0])}"
                )
            return rep
        rep = nxt
    raise ConstraintFormatError(f"{where}: the merge map has a cycle")


@contextlib.contextmanager
def _naming(files: str) -> Iterator[None]:
    """Array-level checks of a set read from files name the files they came from."""
    try:
        yield
    except ConstraintFormatError as exc:
        raise ConstraintFormatError(f"{files}: {exc}") from None


def lsg_paths(prefix: str | Path) -> dict[str, Path]:
    """The files of an LSG prefix (``.../perl``), gzipped or plain; KeyError-free."""
    prefix = Path(prefix)
    out: dict[str, Path] = {}
    for key, stem in (
        ("nodes", "_nodes.txt"),
        ("constraints", "_constraints_after_hcd.txt"),
        ("raw", "_constraints.txt"),
        ("hcd", "_hcd.txt"),
        ("solution", "_correct_soln_001.txt"),
    ):
        for suffix in (".gz", ""):
            p = prefix.with_name(prefix.name + stem + suffix)
            if p.exists():
                out[key] = p
                break
    return out


def load_lsg(prefix: str | Path, *, raw: bool = False) -> ConstraintSet:
    """One LSG program: nodes, after-HCD constraints (or raw with ``raw=True``), hcd map."""
    files = lsg_paths(prefix)
    if "nodes" not in files:
        raise ConstraintFormatError(f"{prefix}: no {Path(prefix).name}_nodes.txt[.gz] found")
    key = "raw" if raw or "constraints" not in files else "constraints"
    if key not in files:
        name = Path(prefix).name
        wanted = "" if raw else f"{name}_constraints_after_hcd.txt[.gz] or "
        raise ConstraintFormatError(f"{prefix}: no {wanted}{name}_constraints.txt[.gz] found")
    n_vars, last_obj, last_fn, sizes = read_nodes(files["nodes"])
    if not last_obj < n_vars:
        raise ConstraintFormatError(
            f"{files['nodes']}: lastObjectVar {last_obj} is outside 0..{n_vars - 1}")
    sized = np.flatnonzero(sizes[last_obj + 1:])
    if sized.size:
        # The reference sizes only ids 0..lastObjectVar; every other id has size 0.
        warnings.warn(
            f"{files['nodes']}: {sized.size} variable(s) above lastObjectVar={last_obj} "
            f"are given a size (the first: {last_obj + 1 + sized[0]}); variables that are "
            "not objects have size 0, as in the reference implementation",
            ConstraintFormatWarning, stacklevel=2)
        sizes[last_obj + 1:] = 0
    table = read_constraints(files[key], n_vars)
    read_from = f"{files['nodes']} with {files[key]}"
    if key == "constraints" and "hcd" in files:
        rep, hcd_pairs = read_hcd(files["hcd"], n_vars)
        read_from += f" and {files['hcd']}"
    else:
        rep, hcd_pairs = np.arange(n_vars, dtype=np.int64), None
    with _naming(read_from):
        return ConstraintSet(
            n_vars=n_vars,
            last_object=last_obj,
            last_function=last_fn,
            obj_size=sizes,
            kind=table[:, 3],
            src=table[:, 1],
            dst=table[:, 2],
            offset=table[:, 4],
            rep=rep,
            name=Path(prefix).name,
            hcd_pairs=hcd_pairs,
        )


def load_galois(path: str | Path) -> ConstraintSet:
    """The Galois CPU text form: ``numVars``, ``numConstraints``, then id,src,dst,type,offset.

    It carries no object table, so every variable is taken as an object of size
    ``1 + the largest gep offset applied`` (enough for every gep to land in range).
    """
    path = Path(path)
    where = str(path)
    lines = _data_lines(_open_text(path))
    if len(lines) < 2:
        raise ConstraintFormatError(f"{where}: needs numVars and numConstraints lines")
    (n_vars,) = _ints(where, *lines[0], 1)
    (m,) = _ints(where, *lines[1], 1)
    _check_n_vars(f"{where}:{lines[0][0]}", n_vars)
    body = lines[2:]
    if len(body) != m:
        raise ConstraintFormatError(
            f"{where}:{lines[1][0]}: announces {m} constraints but the file holds {len(body)}"
        )
    table = _table(where, body, 5)
    _check_rows(where, body, table, n_vars)
    # An object never spans past the last variable, so offsets beyond n_vars size nothing
    # further (and an offset near 2**63 would overflow ``max_off + 1``).
    max_off = min(int(table[:, 4].max()), n_vars) if table.size else 0
    sizes = np.minimum(max_off + 1, n_vars - np.arange(n_vars))
    with _naming(where):
        return ConstraintSet(
            n_vars=n_vars,
            last_object=n_vars - 1,
            obj_size=sizes,
            kind=table[:, 3],
            src=table[:, 1],
            dst=table[:, 2],
            offset=table[:, 4],
            rep=np.arange(n_vars),
            name=path.name,
        )


def from_lists(
    n_vars: int,
    constraints: Iterable[tuple[int, int, int] | tuple[int, int, int, int]],
    *,
    obj_size: Sequence[int] | np.ndarray | None = None,
    last_object: int | None = None,
    rep: Sequence[int] | np.ndarray | None = None,
    hcd_pairs: Sequence[tuple[int, int]] | np.ndarray | None = None,
    name: str = "constraints",
) -> ConstraintSet:
    """A set from ``(kind, src, dst[, offset])`` tuples (hand-written sets, the C front end).

    Without ``obj_size`` every object (``0 .. last_object``, all variables by default) has
    one field and every other variable size 0.
    """
    n_vars = arguments.integer(n_vars, f"{name}: n_vars", error=ConstraintFormatError)
    where = f"from_lists({name!r})"
    _check_n_vars(f"{where}: n_vars", n_vars)
    arr = _constraint_rows(where, constraints)
    if last_object is None:
        last_object = n_vars - 1
    elif not arguments.is_integer(last_object):
        # 1.5 reached np.arange's comparison and a slice ("slice indices must be integers")
        raise ConstraintFormatError(
            f"{where}: last_object must be an integer, got {last_object!r}")
    elif not -1 <= last_object < n_vars:
        raise ConstraintFormatError(
            f"{where}: last_object {last_object} is outside -1..{n_vars - 1}")
    if obj_size is None:  # objects of one field; the other variables have size 0
        sizes = (np.arange(n_vars) <= last_object).astype(np.int64)
    else:
        sizes = np.asarray(obj_size)
    return ConstraintSet(
        n_vars=n_vars,
        last_object=int(last_object),
        obj_size=sizes,
        kind=arr[:, 0],
        src=arr[:, 1],
        dst=arr[:, 2],
        offset=arr[:, 3],
        rep=np.arange(n_vars) if rep is None else _rep_argument(where, rep, n_vars),
        name=name,
        hcd_pairs=None if hcd_pairs is None else _hcd_argument(where, hcd_pairs, n_vars),
    )


def _constraint_rows(where: str, constraints: Any) -> np.ndarray:
    """from_lists' rows as an int64 (m, 4) table, offset 0 where a row gives three fields.

    Before, None and [5] were bare "not iterable" TypeErrors and a 2-tuple (0, 0) was
    padded to (0, 0, 0, 0): an address-of with a dst nobody gave.
    """
    try:
        if isinstance(constraints, (str, bytes)):
            raise TypeError
        items = iter(constraints)
    except TypeError:
        raise ConstraintFormatError(
            f"{where}: constraints must be an iterable of (kind, src, dst[, offset]) "
            f"tuples, got {type(constraints).__name__}") from None
    rows = []
    for k, c in enumerate(items):
        try:
            row = None if isinstance(c, (str, bytes)) else tuple(c)
        except TypeError:  # 5, None, a 0-d array
            row = None
        if row is None or len(row) not in (3, 4) or not all(
            isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
            and -(2**63) <= x <= _ID_LIMIT for x in row
        ):
            raise ConstraintFormatError(
                f"{where}: constraints: constraint {k} must be (kind, src, dst[, offset]) "
                f"integers, got {c!r}"
            )
        rows.append(row + (0,) * (4 - len(row)))
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def _ids_in_range(where: str, arr: np.ndarray, n_vars: int) -> None:
    """Every id of ``arr`` in 0..n_vars-1; the first one outside is named by its index."""
    bad = np.argwhere((arr < 0) | (arr >= n_vars))
    if bad.size:
        at = tuple(int(i) for i in bad[0])
        index = "".join(f"[{i}]" for i in at)
        raise ConstraintFormatError(
            f"{where}{index} is {int(arr[at])}, outside 0..{n_vars - 1}")


def _id_argument(where: str, values: Any) -> np.ndarray:
    """Integer ids from an argument; floats (truncated by np.asarray(..., int64)) and
    bools refused. The caller's array is only read."""
    arr = _int_array(values, where)
    if arr.size and np.asarray(values).dtype.kind == "b":
        raise ConstraintFormatError(f"{where}: ids must be integers, got booleans")
    return arr


def _rep_argument(where: str, rep: Any, n_vars: int) -> np.ndarray:
    """from_lists' merge map, resolved; an id past n_vars was an IndexError in the
    pointer jumping."""
    arr = _id_argument(f"{where}: rep", rep)
    if arr.shape != (n_vars,):
        raise ConstraintFormatError(
            f"{where}: rep must have n_vars={n_vars} entries, got shape {arr.shape}")
    _ids_in_range(f"{where}: rep", arr, n_vars)
    return resolve_chains(arr, f"{where}: rep")


def _hcd_argument(where: str, pairs: Any, n_vars: int) -> np.ndarray:
    """from_lists' (y, x) pairs as an (m, 2) table; a flat [1, 2] was read as one pair."""
    arr = _id_argument(f"{where}: hcd_pairs", pairs)
    if arr.size == 0:
        return arr.reshape(0, 2)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ConstraintFormatError(
            f"{where}: hcd_pairs must be a sequence of (y, x) pairs, got shape {arr.shape}")
    _ids_in_range(f"{where}: hcd_pairs", arr, n_vars)
    return arr


def load(source: str | Path | Sequence[str | Path]) -> ConstraintSet:
    """An LSG prefix, a single LSG/Galois constraint file, or a list of C files."""
    if isinstance(source, (list, tuple)):
        paths = [Path(p) for p in source]
        if paths and all(p.suffix in (".c", ".i", ".h") for p in paths):
            from .c_frontend import from_c  # noqa: PLC0415

            return from_c(paths)
        if len(paths) == 1:
            return load(paths[0])
        raise ValueError(f"load: cannot combine {len(paths)} constraint files")
    path = Path(source)
    if path.is_dir() and not (path.name and lsg_paths(path).get("nodes")):
        # (An LSG prefix may share its name with a directory beside its files.) Checked
        # first: "." and "/" have no name, and the prefix lookup raised "has an empty name".
        raise ConstraintFormatError(f"{source}: is a directory, not a constraint file or "
                                    "an LSG prefix")
    if path.suffix in (".c", ".i"):
        from .c_frontend import from_c  # noqa: PLC0415

        return from_c([path])
    companions = lsg_paths(path)
    if companions.get("nodes"):
        return load_lsg(path)
    if path.is_file():
        name = path.name
        for stem in ("_constraints_after_hcd.txt", "_constraints.txt", "_nodes.txt"):
            if stem in name:
                return load_lsg(path.with_name(name[: name.index(stem)]))
        return load_galois(path)
    if companions:
        # An LSG prefix with some of its files: load_lsg names the one that is missing
        # (this said "neither an LSG prefix nor a constraint file").
        return load_lsg(path)
    raise ConstraintFormatError(f"{source}: neither an LSG prefix nor a constraint file")
