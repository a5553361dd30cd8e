"""C sources to points-to constraints, on pycparser.

Model (documented choices, all sound for a may-analysis):
- every global, local and parameter is a variable; locals are named ``func::name``;
- an array ``a`` is a variable that points to its element object ``a[]``; ``a[i]``, ``*a``
  and ``a->f`` are loads/stores through ``a``;
- struct fields are collapsed: ``s.f`` is ``s``, ``p->f`` is ``*p``, ``&p->f`` is ``p``;
- each call of a malloc-like function (malloc, calloc, realloc, strdup, alloca...) is a
  heap object ``heap@file:line:col``;
- a function ``f`` is an object of size ``2 + #params``: ``f`` itself, ``f+1`` its return
  value, ``f+2+i`` its i-th parameter (the LSG convention). A direct call copies
  arguments and the return value; a call through a pointer ``fp`` is a store
  ``*(fp + 2 + i) = arg`` and a load ``x = *(fp + 1)`` with offsets, so it binds whatever
  functions the analysis finds in ``pts(fp)``;
- arithmetic on pointers keeps the target (``p + 1`` may point where ``p`` does); casts are
  transparent; integer constants and string literals point nowhere.

Plain ``.c`` files go through the system ``cpp`` first; ``.i`` files are taken as already
preprocessed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from .constraints import ADDRESS_OF, COPY, LOAD, STORE, ConstraintSet, from_lists

HEAP_FUNCTIONS = frozenset(
    {"malloc", "calloc", "realloc", "strdup", "strndup", "alloca", "xmalloc", "xcalloc",
     "valloc", "aligned_alloc", "memalign"}
)
# realloc and friends keep pointing where their first argument did.
COPYING_ALLOCATORS = frozenset({"realloc"})

# GNU extensions pycparser does not parse, removed by the preprocessor.
CPP_DEFINES = (
    "-D__attribute__(x)=", "-D__extension__=", "-D__restrict=", "-D__restrict__=",
    "-D__inline=inline", "-D__inline__=inline", "-D__asm__(x)=", "-D__asm(x)=",
    "-D__builtin_va_list=void*", "-D__volatile__=", "-D__const=const",
)


class CFrontendError(ValueError):
    """The C input could not be preprocessed or parsed; the message names the file and line."""


def preprocess(path: Path) -> str:
    if path.suffix == ".i":
        return path.read_text()
    cpp = shutil.which("cpp")
    if cpp is None:
        raise CFrontendError(f"{path}: needs the C preprocessor 'cpp' (or pass a .i file)")
    proc = subprocess.run([cpp, "-E", *CPP_DEFINES, str(path)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise CFrontendError(f"{path}: cpp failed:\n{proc.stderr.strip()[:2000]}")
    return proc.stdout


class _Builder:
    def __init__(self) -> None:
        self.names: list[str] = []
        self.size: list[int] = []
        self.index: dict[str, int] = {}
        self.rows: list[tuple[int, int, int, int]] = []
        self.func_params: dict[str, int] = {}
        self.n_temps = 0
        # As in the LSG files: id 0 is unused, id 1 the null/unknown object.
        self.var("<none>")
        self.var("<null>")

    def var(self, name: str, size: int = 1) -> int:
        if name in self.index:
            return self.index[name]
        base = len(self.names)
        self.index[name] = base
        self.names.append(name)
        self.size.append(size)
        for k in range(1, size):
            self.names.append(f"{name}#{k}")
            self.size.append(size - k)
        return base

    def temp(self) -> int:
        self.n_temps += 1
        return self.var(f"<tmp{self.n_temps}>")

    def add(self, kind: int, src: int, dst: int, off: int = 0) -> None:
        self.rows.append((kind, src, dst, off))

    def function(self, name: str, n_params: int) -> int:
        if name in self.index:
            return self.index[name]
        self.func_params[name] = n_params
        return self.var(name, 2 + n_params)


def _parse(text: str, where: str):
    from pycparser import c_parser  # noqa: PLC0415

    parser = c_parser.CParser()
    try:
        return parser.parse(text, filename=where)
    except Exception as exc:
        message = str(exc)
        # Some pycparser errors name only the file; the next token knows the line.
        if not re.match(r"^[^:]*:\d+", message):
            tok = None
            try:
                tok = parser._peek()
            except Exception:  # the token stream itself may be what failed
                pass
            if tok is not None and getattr(tok, "lineno", None):
                fname = getattr(tok, "filename", None) or where
                detail = message.split(": ", 1)[-1]
                message = f"{fname}:{tok.lineno}:{getattr(tok, 'column', 0)}: {detail}"
        raise CFrontendError(f"{where}: {message}") from exc


class _Lowering:
    """Walks one translation unit and emits constraints into a shared _Builder."""

    def __init__(self, b: _Builder, where: str) -> None:
        from pycparser import c_ast  # noqa: PLC0415

        self.c = c_ast
        self.b = b
        self.where = where
        self.func: str | None = None
        self.arrays: set[str] = set()
        self.locals: set[str] = set()

    # -------------------------------------------------------------- names
    def name_of(self, ident: str) -> str:
        if self.func is not None and ident in self.locals:
            return f"{self.func}::{ident}"
        return ident

    def ident_value(self, ident: str) -> int | None:
        """The variable holding the value of identifier ``ident`` (functions: their address)."""
        name = self.name_of(ident)
        if name in self.b.func_params:
            t = self.b.temp()
            self.b.add(ADDRESS_OF, self.b.index[name], t)
            return t
        return self.b.var(name)

    # -------------------------------------------------------------- declarations
    def declare(self, decl, is_global: bool) -> None:
        c = self.c
        if decl.name is None or isinstance(decl.type, c.FuncDecl):
            if isinstance(decl.type, c.FuncDecl) and decl.name:
                self.b.function(decl.name, self._n_params(decl.type))
            return
        if not is_global:
            self.locals.add(decl.name)
        name = self.name_of(decl.name)
        v = self.b.var(name)
        if isinstance(decl.type, c.ArrayDecl):
            self.arrays.add(name)
            self.b.add(ADDRESS_OF, self.b.var(f"{name}[]"), v)
            if decl.init is not None:
                self.init_into(("deref", v), decl.init)
            return
        if decl.init is not None:
            self.init_into(("var", v), decl.init)

    def init_into(self, lv: tuple[str, int], init) -> None:
        if isinstance(init, self.c.InitList):
            for e in init.exprs:  # fields and elements collapse onto the aggregate
                self.init_into(lv, e)
            return
        self.assign(lv, self.rvalue(init))

    def _n_params(self, fdecl) -> int:
        params = fdecl.args.params if fdecl.args is not None else []
        n = 0
        for p in params:
            if isinstance(p, self.c.EllipsisParam):
                continue
            if isinstance(p, self.c.Typename) and isinstance(p.type, self.c.TypeDecl) and \
                    getattr(p.type.type, "names", None) == ["void"]:
                continue
            n += 1
        return n

    # -------------------------------------------------------------- expressions
    def assign(self, lv: tuple[str, int], value: int | None) -> None:
        if value is None:
            return
        kind, v = lv
        if kind == "var":
            if value != v:
                self.b.add(COPY, value, v)
        else:
            self.b.add(STORE, value, v)

    def lvalue(self, e) -> tuple[str, int] | None:
        c = self.c
        if isinstance(e, c.ID):
            name = self.name_of(e.name)
            if name in self.b.func_params:
                return ("var", self.b.index[name])
            return ("var", self.b.var(name))
        if isinstance(e, c.UnaryOp) and e.op == "*":
            p = self.rvalue(e.expr)
            return None if p is None else ("deref", p)
        if isinstance(e, c.ArrayRef):
            p = self.rvalue(e.name)
            self.rvalue(e.subscript)
            return None if p is None else ("deref", p)
        if isinstance(e, c.StructRef):
            if e.type == "->":
                p = self.rvalue(e.name)
                return None if p is None else ("deref", p)
            return self.lvalue(e.name)
        if isinstance(e, c.Cast):
            return self.lvalue(e.expr)
        self.rvalue(e)
        return None

    def rvalue(self, e) -> int | None:
        c, b = self.c, self.b
        if e is None:
            return None
        if isinstance(e, c.ID):
            return self.ident_value(e.name)
        if isinstance(e, c.Constant):
            return None
        if isinstance(e, c.Cast):
            return self.rvalue(e.expr)
        if isinstance(e, c.UnaryOp):
            if e.op == "&":
                lv = self.lvalue(e.expr)
                if lv is None:
                    return None
                kind, v = lv
                if kind == "deref":
                    return v
                t = b.temp()
                b.add(ADDRESS_OF, v, t)
                return t
            if e.op == "*":
                p = self.rvalue(e.expr)
                if p is None:
                    return None
                t = b.temp()
                b.add(LOAD, p, t)
                return t
            if e.op == "sizeof":
                return None
            return self.rvalue(e.expr)  # ++, --, -, !, ~: keep the operand's targets
        if isinstance(e, (c.ArrayRef, c.StructRef)):
            lv = self.lvalue(e)
            if lv is None:
                return None
            kind, v = lv
            if kind == "var":
                return v
            t = b.temp()
            b.add(LOAD, v, t)
            return t
        if isinstance(e, c.BinaryOp):
            return self.union([self.rvalue(e.left), self.rvalue(e.right)])
        if isinstance(e, c.TernaryOp):
            self.rvalue(e.cond)
            return self.union([self.rvalue(e.iftrue), self.rvalue(e.iffalse)])
        if isinstance(e, c.Assignment):
            value = self.rvalue(e.rvalue)
            lv = self.lvalue(e.lvalue)
            if lv is not None:
                if e.op != "=" and value is not None:  # p += q keeps p's old targets too
                    old = self.rvalue(e.lvalue)
                    value = self.union([old, value])
                self.assign(lv, value)
            return value
        if isinstance(e, c.ExprList):
            out = None
            for x in e.exprs:
                out = self.rvalue(x)
            return out
        if isinstance(e, c.FuncCall):
            return self.call(e)
        if isinstance(e, c.CompoundLiteral):
            t = b.temp()
            self.init_into(("var", t), e.init)
            return t
        return None

    def union(self, values: list[int | None]) -> int | None:
        vals = [v for v in values if v is not None]
        if not vals:
            return None
        if len(vals) == 1:
            return vals[0]
        t = self.b.temp()
        for v in vals:
            self.b.add(COPY, v, t)
        return t

    def call(self, e) -> int | None:
        c, b = self.c, self.b
        args = e.args.exprs if e.args is not None else []
        values = [self.rvalue(a) for a in args]
        callee = e.name
        while isinstance(callee, c.UnaryOp) and callee.op == "*":
            callee = callee.expr  # (*fp)(x) is fp(x)
        is_local = isinstance(callee, c.ID) and callee.name in self.locals
        if isinstance(callee, c.ID) and not is_local and (
            callee.name in HEAP_FUNCTIONS or callee.name in b.func_params
            or callee.name not in b.index
        ):
            fname = callee.name
            if fname in HEAP_FUNCTIONS:
                coord = e.coord
                site = f"heap@{Path(str(coord.file)).name}:{coord.line}:{coord.column}"
                t = b.temp()
                b.add(ADDRESS_OF, b.var(site), t)
                if fname in COPYING_ALLOCATORS and values and values[0] is not None:
                    b.add(COPY, values[0], t)
                return t
            if fname not in b.func_params:
                return None  # an undeclared external function: no effect on pointers
            f = b.index[fname]
            for i, v in enumerate(values[: b.func_params[fname]]):
                if v is not None:
                    b.add(COPY, v, f + 2 + i)
            t = b.temp()
            b.add(COPY, f + 1, t)
            return t
        fp = self.rvalue(callee)
        if fp is None:
            return None
        for i, v in enumerate(values):
            if v is not None:
                b.add(STORE, v, fp, 2 + i)
        t = b.temp()
        b.add(LOAD, fp, t, 1)
        return t

    # -------------------------------------------------------------- statements
    def unit(self, ast) -> None:
        c = self.c
        for ext in ast.ext:  # declare every function first: calls may precede definitions
            if isinstance(ext, c.FuncDef):
                self.b.function(ext.decl.name, self._n_params(ext.decl.type))
            elif isinstance(ext, c.Decl) and isinstance(ext.type, c.FuncDecl) and ext.name:
                self.b.function(ext.name, self._n_params(ext.type))
        for ext in ast.ext:
            if isinstance(ext, c.FuncDef):
                self.function_body(ext)
            elif isinstance(ext, c.Decl):
                self.declare(ext, is_global=True)

    def function_body(self, fdef) -> None:
        c = self.c
        name = fdef.decl.name
        self.func, self.locals = name, set()
        f = self.b.index[name]
        fdecl = fdef.decl.type
        params = fdecl.args.params if fdecl.args is not None else []
        i = 0
        for p in params:
            if isinstance(p, c.Decl) and p.name:
                self.locals.add(p.name)
                self.b.add(COPY, f + 2 + i, self.b.var(self.name_of(p.name)))
                i += 1
        self.statement(fdef.body)
        self.func = None

    def statement(self, s) -> None:
        c = self.c
        if s is None:
            return
        if isinstance(s, c.Compound):
            for item in s.block_items or []:
                self.statement(item)
        elif isinstance(s, c.Decl):
            self.declare(s, is_global=False)
        elif isinstance(s, c.DeclList):
            for d in s.decls:
                self.declare(d, is_global=False)
        elif isinstance(s, c.Return):
            v = self.rvalue(s.expr)
            if v is not None:
                self.b.add(COPY, v, self.b.index[self.func] + 1)
        elif isinstance(s, c.If):
            self.rvalue(s.cond)
            self.statement(s.iftrue)
            self.statement(s.iffalse)
        elif isinstance(s, (c.While, c.DoWhile)):
            self.rvalue(s.cond)
            self.statement(s.stmt)
        elif isinstance(s, c.For):
            if isinstance(s.init, c.DeclList):
                self.statement(s.init)
            else:
                self.rvalue(s.init)
            self.rvalue(s.cond)
            self.rvalue(s.next)
            self.statement(s.stmt)
        elif isinstance(s, c.Switch):
            self.rvalue(s.cond)
            self.statement(s.stmt)
        elif isinstance(s, (c.Case, c.Default)):
            for item in s.stmts or []:
                self.statement(item)
        elif isinstance(s, c.Label):
            self.statement(s.stmt)
        elif isinstance(s, (c.Typedef, c.Goto, c.Break, c.Continue, c.EmptyStatement,
                            c.Pragma)):
            return
        else:
            self.rvalue(s)


def from_c(files: str | Path | Sequence[str | Path]) -> ConstraintSet:
    """Constraints of one program made of the C files ``files`` (linked by global names)."""
    paths = [Path(files)] if isinstance(files, (str, Path)) else [Path(f) for f in files]
    if not paths:
        raise CFrontendError("from_c: no files given")
    b = _Builder()
    for path in paths:
        if not path.is_file():
            raise CFrontendError(f"{path}: no such file")
        ast = _parse(preprocess(path), str(path))
        _Lowering(b, str(path)).unit(ast)
    n = len(b.names)
    cs = from_lists(n, b.rows, obj_size=b.size, name=",".join(p.name for p in paths))
    cs.var_names = b.names
    return cs
