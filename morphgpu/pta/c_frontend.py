"""C sources to points-to constraints, on pycparser.

Model (documented choices, all sound for a may-analysis except where said):
- every global, local and parameter is a variable; locals are named ``func::name``;
- an array ``a`` is a variable that points to its element object ``a[]``; ``a[i]`` and
  ``*a`` are loads/stores through ``a``; all elements (and all dimensions) share one element;
- struct fields are kept apart (field-sensitive), following the constraint format's
  object sizes and gep offsets:

  * a struct (or union) is flattened field by field, nested structs included: a variable,
    array element object or heap object of struct type is an object of one id per field,
    ``s`` owning ``s .. s+n-1`` (named ``s``, ``s.f``, ``s.in.x``...); ``s.f`` names the id
    ``s + offset(f)``. An array inside a struct is one element's worth of fields (all its
    elements share them). A union puts every member at offset 0, so members alias (sound);
    its size is its largest member's;
  * ``&s.f`` is an address-of of the field's id; ``s.f = x`` and ``x = s.f`` are copies;
  * ``p->f`` (and ``(*p).f``, ``p[i].f``) is ``t = gep(p, offset(f))`` then a load ``*t``
    as an rvalue, a store ``*t = x`` as an lvalue; ``&p->f`` is the gep itself (offset 0
    needs no gep: the object's own id is its first field);
  * struct assignment ``s1 = s2`` (and ``*p = *q``, initialisers, compound literals) copies
    field by field. Structs passed or returned by value are collapsed conservatively: the
    parameter or return slot of the function object gets the union of all fields, and every
    field of the receiving struct gets the whole slot;
  * a heap object's struct type comes from ``sizeof(struct T)`` in the allocator's
    arguments, else a cast ``(struct T *)malloc(...)``, else the type of the pointer it is
    assigned, initialised or returned to. When no struct type is found it gets as many
    fields as the program's largest struct (not a single field: a gep past an object's size
    adds nothing, so a one-field object seen later as ``struct T *`` would lose every field
    but the first), so every struct view of it keeps its fields;
  * fallbacks: where the pointed-to struct type of an access is unknown, or the access goes
    through a cast between pointer types (``((struct B *)p)->f`` with ``p`` not a
    ``struct B *``), the access is collapsed over the object: it reads, writes or takes the
    address of every field ``0 .. M-1`` (M: the largest struct) of whatever ``p`` points to,
    a superset of what the collapsed model did there;
  * not sound (as in most field-sensitive analyses): type punning without a cast at the
    access, i.e. an object reached through a pointer to a struct type larger than the
    object or with another layout after an implicit ``void *`` conversion loses the fields
    the object does not have, and pointer arithmetic from a field back to its enclosing
    struct (``container_of``) still points at the field;
- each call of a malloc-like function (malloc, calloc, realloc, strdup, alloca...) is a
  heap object ``heap@file:line:col``;
- a function ``f`` is an object of size ``2 + #params``: ``f`` itself, ``f+1`` its return
  value, ``f+2+i`` its i-th parameter (the LSG convention). A direct call copies
  arguments and the return value; a call through a pointer ``fp`` is a store
  ``*(fp + 2 + i) = arg`` and a load ``x = *(fp + 1)`` with offsets, so it binds whatever
  functions the analysis finds in ``pts(fp)``. Function objects and struct objects are
  different objects, so their offsets never meet (a function pointer that pointed at a
  struct, only through type confusion, would write its fields ``2 + i``);
- arithmetic on pointers keeps the target (``p + 1`` may point where ``p`` does); casts are
  otherwise transparent; integer constants and string literals point nowhere.

Plain ``.c`` files go through the system ``cpp`` first; ``.i`` files are taken as already
preprocessed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .constraints import ADDRESS_OF, COPY, GEP, LOAD, STORE, ConstraintSet, from_lists

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
        # Fields of the largest struct of the program (set before lowering): the size of a
        # heap object of unknown type and the reach of a collapsed access.
        self.max_fields = 1
        # As in the LSG files: id 0 is unused, id 1 the null/unknown object.
        self.var("<none>")
        self.var("<null>")

    def var(self, name: str, size: int = 1, labels: Sequence[str] | None = None) -> int:
        """The variable ``name`` (created with ``size`` field ids, the k-th named
        ``name + labels[k]``, on first use)."""
        if name in self.index:
            return self.index[name]
        base = len(self.names)
        self.index[name] = base
        self.names.append(name)
        self.size.append(size)
        for k in range(1, size):
            label = labels[k] if labels is not None and k < len(labels) else f"#{k}"
            self.names.append(f"{name}{label}")
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


SCALAR = ("scalar",)


def _pointee(t):
    """The type a value of type ``t`` points to (arrays decay; a function designator is its
    own pointee), or None."""
    if t is None:
        return None
    if t[0] in ("ptr", "array"):
        return t[1]
    if t[0] == "func":
        return t
    return None


def _element(t):
    """The innermost element type of a (multi-dimensional) array type."""
    while t is not None and t[0] == "array":
        t = t[1]
    return t


@dataclass
class _StructLayout:
    size: int  # flattened fields
    labels: list[str]  # the name suffix of each field id (".f", ".in.x")
    fields: dict[str, tuple[int, object]]  # member name -> (offset, C type)
    members: list[tuple[int, object]]  # (offset, C type) of the members, in order


class _Types:
    """The C types the front end needs, as tuples: ``("scalar",)``, ``("ptr", T)``,
    ``("array", T)``, ``("func", ret)``, ``("struct", key)`` (unions too); None where
    unknown. Struct layouts are flattened field by field."""

    def __init__(self, c_ast, asts) -> None:
        self.c = c_ast
        self.typedefs: dict[str, object] = {}
        self.defs: dict[str, object] = {}
        self.anon: dict[int, str] = {}
        self.layouts: dict[str, _StructLayout | None] = {}
        self._busy: set[str] = set()
        for ast in asts:
            stack = [ast]
            while stack:
                n = stack.pop()
                if isinstance(n, c_ast.Typedef):
                    self.typedefs[n.name] = n.type
                elif isinstance(n, (c_ast.Struct, c_ast.Union)) and n.decls is not None:
                    self.defs.setdefault(self.key(n), n)
                stack.extend(ch for _, ch in n.children())

    def key(self, node) -> str:
        kind = "union" if isinstance(node, self.c.Union) else "struct"
        if node.name:
            return f"{kind} {node.name}"
        return self.anon.setdefault(id(node), f"{kind} <anon{len(self.anon)}>")

    def ctype(self, node, depth: int = 0):
        c = self.c
        if node is None or depth > 64:
            return None
        if isinstance(node, (c.TypeDecl, c.Typename, c.Decl)):
            return self.ctype(node.type, depth)
        if isinstance(node, c.PtrDecl):
            return ("ptr", self.ctype(node.type, depth))
        if isinstance(node, c.ArrayDecl):
            return ("array", self.ctype(node.type, depth))
        if isinstance(node, c.FuncDecl):
            return ("func", self.ctype(node.type, depth))
        if isinstance(node, (c.Struct, c.Union)):
            key = self.key(node)
            if node.decls is not None:
                self.defs.setdefault(key, node)
            return ("struct", key)
        if isinstance(node, c.IdentifierType):
            if len(node.names) == 1 and node.names[0] in self.typedefs:
                return self.ctype(self.typedefs[node.names[0]], depth + 1)
            return SCALAR
        if isinstance(node, c.Enum):
            return SCALAR
        return None

    def layout(self, t) -> _StructLayout | None:
        """The flattened layout of struct/union type ``t`` (None: not a struct, or one whose
        definition is unknown)."""
        if t is None or t[0] != "struct":
            return None
        key = t[1]
        if key in self.layouts:
            return self.layouts[key]
        node = self.defs.get(key)
        if node is None or key in self._busy:
            return None
        self._busy.add(key)
        is_union = isinstance(node, self.c.Union)
        fields: dict[str, tuple[int, object]] = {}
        members: list[tuple[int, object]] = []
        labels: list[str] = []
        size = 0
        for d in node.decls:
            mt = self.ctype(d.type)
            sub = self.labels(mt)
            off = 0 if is_union else size
            members.append((off, mt))
            if d.name:
                fields[d.name] = (off, mt)
                names = [f".{d.name}{s}" for s in sub]
            else:  # an anonymous struct/union member: its members are the parent's
                inner = self.layout(mt)
                for fname, (o, ft) in (inner.fields.items() if inner else ()):
                    fields.setdefault(fname, (off + o, ft))
                names = sub
            if is_union:  # every member at offset 0: a field id is named by its first member
                labels.extend(names[len(labels):])
                size = max(size, len(sub))
            else:
                labels.extend(names)
                size += len(sub)
        self._busy.discard(key)
        lay = _StructLayout(max(size, 1), labels or [""], fields, members)
        self.layouts[key] = lay
        return lay

    def labels(self, t) -> list[str]:
        """Name suffixes of the field ids an object of type ``t`` spans (one per id)."""
        lay = self.layout(_element(t))
        return list(lay.labels) if lay is not None else [""]

    def size(self, t) -> int:
        """Field ids an object of type ``t`` spans (arrays: one element's)."""
        lay = self.layout(_element(t))
        return lay.size if lay is not None else 1

    def field(self, t, name: str) -> tuple[int, object] | None:
        lay = self.layout(t)
        return None if lay is None else lay.fields.get(name)

    def max_size(self) -> int:
        return max([1] + [self.size(("struct", k)) for k in list(self.defs)])


class _Lowering:
    """Walks one translation unit and emits constraints into a shared _Builder.

    A *place* is what an lvalue names: ``("var", v)`` the id ``v``; ``("deref", p)`` the ids
    ``p`` points to; ``("any", p)`` every field ``0 .. M-1`` of whatever ``p`` points to (a
    collapsed access); ``("blob", t)`` a struct value held collapsed in one id ``t`` (a call's
    result, a by-value parameter or return slot).
    """

    def __init__(self, b: _Builder, where: str, types: _Types) -> None:
        from pycparser import c_ast  # noqa: PLC0415

        self.c = c_ast
        self.b = b
        self.where = where
        self.types = types
        self.func: str | None = None
        self.arrays: set[str] = set()
        self.locals: set[str] = set()
        self.vtype: dict[str, object] = {}  # variable (full name) -> C type
        self.ftype: dict[str, object] = {}  # function -> its return type

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

    def new_var(self, name: str, t) -> int:
        """The variable ``name`` of C type ``t`` (a struct spans one id per field)."""
        return self.b.var(name, self.types.size(t), self.types.labels(t))

    # -------------------------------------------------------------- types
    def is_struct(self, t) -> bool:
        return t is not None and t[0] == "struct"

    def n_fields(self, t) -> int:
        """Fields of struct type ``t``; every field a collapsed access reaches if unknown."""
        lay = self.types.layout(t)
        return lay.size if lay is not None else self.b.max_fields

    def type_of(self, e):
        """The static C type of expression ``e`` (None where unknown)."""
        c, types = self.c, self.types
        if e is None:
            return None
        if isinstance(e, c.ID):
            name = self.name_of(e.name)
            if name in self.vtype:
                return self.vtype[name]
            if e.name in self.ftype:
                return ("func", self.ftype[e.name])
            return None
        if isinstance(e, c.Constant):
            return ("ptr", SCALAR) if e.type == "string" else SCALAR
        if isinstance(e, c.Cast):
            return types.ctype(e.to_type)
        if isinstance(e, c.CompoundLiteral):
            return types.ctype(e.type)
        if isinstance(e, c.UnaryOp):
            if e.op == "&":
                return ("ptr", self.type_of(e.expr))
            if e.op == "*":
                return _pointee(self.type_of(e.expr))
            if e.op in ("sizeof", "!", "_Alignof"):
                return SCALAR
            return self.type_of(e.expr)
        if isinstance(e, c.ArrayRef):
            t = _pointee(self.type_of(e.name))
            return t if t is not None else _pointee(self.type_of(e.subscript))
        if isinstance(e, c.StructRef):
            base = self.type_of(e.name)
            if e.type == "->":
                base = _pointee(base)
            f = types.field(base, e.field.name)
            return None if f is None else f[1]
        if isinstance(e, c.BinaryOp):
            if e.op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
                return SCALAR
            lt, rt = self.type_of(e.left), self.type_of(e.right)
            ptrs = [t for t in (lt, rt) if t is not None and t[0] in ("ptr", "array")]
            if e.op in ("+", "-") and ptrs:
                return SCALAR if len(ptrs) == 2 else ("ptr", ptrs[0][1])
            return lt
        if isinstance(e, c.TernaryOp):
            t = self.type_of(e.iftrue)
            return t if t is not None else self.type_of(e.iffalse)
        if isinstance(e, c.Assignment):
            return self.type_of(e.lvalue)
        if isinstance(e, c.ExprList):
            return self.type_of(e.exprs[-1]) if e.exprs else None
        if isinstance(e, c.FuncCall):
            t = self.type_of(e.name)
            if t is not None and t[0] == "ptr":
                t = t[1]
            return t[1] if t is not None and t[0] == "func" else None
        return None

    def punned(self, ptr_expr, struct_t) -> bool:
        """``ptr_expr`` is a cast to ``struct_t *`` from a pointer to something else."""
        if not isinstance(ptr_expr, self.c.Cast):
            return False
        src = _pointee(self.type_of(ptr_expr.expr))
        return src is None or src != struct_t

    # -------------------------------------------------------------- places
    def field(self, place, k: int):
        """The place of field ``k`` of the struct at ``place``."""
        kind, v = place
        if k == 0 or kind in ("any", "blob"):
            return place
        if kind == "var":
            if k < self.b.size[v]:
                return ("var", v + k)
            return ("any", self.address(place))  # not the struct we took it for
        t = self.b.temp()
        self.b.add(GEP, v, t, k)
        return ("deref", t)

    def collapse(self, place):
        """An access to an unknown field of ``place``: every field of it."""
        kind, v = place
        if kind in ("any", "blob"):
            return place
        if kind == "var":
            return ("any", self.address(place))
        return ("any", v)

    def read(self, place) -> int:
        kind, v = place
        if kind in ("var", "blob"):
            return v
        t = self.b.temp()
        for k in range(1 if kind == "deref" else self.b.max_fields):
            self.b.add(LOAD, v, t, k)
        return t

    def write(self, place, value: int | None) -> None:
        if value is None or place is None:
            return
        kind, v = place
        if kind in ("var", "blob"):
            if value != v:
                self.b.add(COPY, value, v)
            return
        for k in range(1 if kind == "deref" else self.b.max_fields):
            self.b.add(STORE, value, v, k)

    def address(self, place) -> int:
        kind, v = place
        if kind == "deref":
            return v
        t = self.b.temp()
        if kind == "any":
            self.b.add(COPY, v, t)
            for k in range(1, self.b.max_fields):
                self.b.add(GEP, v, t, k)
        else:
            self.b.add(ADDRESS_OF, v, t)
        return t

    def read_all(self, place, n: int) -> int | None:
        """The union of fields ``0 .. n-1`` of ``place`` (a struct value, collapsed)."""
        if place is None:
            return None
        kind, v = place
        if kind in ("any", "blob"):
            return self.read(place)
        if kind == "var":
            n = min(n, self.b.size[v])
        return self.union([self.read(self.field(place, k)) for k in range(n)])

    def write_all(self, place, n: int, value: int | None) -> None:
        """Every field ``0 .. n-1`` of ``place`` may hold ``value``."""
        if value is None or place is None:
            return
        kind, v = place
        if kind in ("any", "blob"):
            self.write(place, value)
            return
        if kind == "var":
            n = min(n, self.b.size[v])
        for k in range(n):
            self.write(self.field(place, k), value)

    def copy_struct(self, dst, src, dst_t, src_t) -> None:
        """``dst = src`` for struct places: field by field when both are of the same known
        struct type, else every field of ``dst`` gets the union of ``src``'s fields."""
        if dst is None or src is None:
            return
        n = self.n_fields(dst_t)
        fits = all(p[0] == "deref" or (p[0] == "var" and self.b.size[p[1]] >= n)
                   for p in (dst, src))
        if dst_t == src_t and self.types.layout(dst_t) is not None and fits:
            for k in range(n):
                self.write(self.field(dst, k), self.read(self.field(src, k)))
            return
        self.write_all(dst, n, self.read_all(src, self.n_fields(src_t)))

    def member(self, e):
        """The place of ``s.f`` / ``p->f``."""
        c = self.c
        if e.type == "->":
            st = _pointee(self.type_of(e.name))
            p = self.rvalue(e.name)
            if p is None:
                return None
            base, punned = ("deref", p), self.punned(e.name, st)
        else:
            st = self.type_of(e.name)
            base = self.place(e.name)
            if base is None:
                return None
            inner = e.name
            punned = (isinstance(inner, c.UnaryOp) and inner.op == "*"
                      and self.punned(inner.expr, st)) or (
                isinstance(inner, c.ArrayRef) and self.punned(inner.name, st))
        f = self.types.field(st, e.field.name)
        if f is None or punned:
            return self.collapse(base)
        return self.field(base, f[0])

    def place(self, e):
        """The place lvalue ``e`` names (struct-typed rvalues: a blob), or None."""
        c, b = self.c, self.b
        if isinstance(e, c.ID):
            name = self.name_of(e.name)
            if name in b.func_params:
                return ("var", b.index[name])
            return ("var", b.var(name))
        if isinstance(e, c.UnaryOp) and e.op == "*":
            p = self.rvalue(e.expr)
            return None if p is None else ("deref", p)
        if isinstance(e, c.ArrayRef):
            p = self.rvalue(e.name)
            self.rvalue(e.subscript)
            return None if p is None else ("deref", p)
        if isinstance(e, c.StructRef):
            return self.member(e)
        if isinstance(e, c.Cast):
            return self.place(e.expr)
        if isinstance(e, c.CompoundLiteral):
            t = self.types.ctype(e.type)
            b.n_temps += 1
            v = self.new_var(f"<tmp{b.n_temps}>", _element(t))
            self.init_into(("var", v), e.init, t)
            return ("var", v)
        if isinstance(e, c.Assignment) and self.is_struct(self.type_of(e.lvalue)):
            dst_t = self.type_of(e.lvalue)
            src = self.place(e.rvalue)
            dst = self.place(e.lvalue)
            self.copy_struct(dst, src, dst_t, self.type_of(e.rvalue))
            return dst
        if isinstance(e, c.ExprList) and e.exprs:
            for x in e.exprs[:-1]:
                self.rvalue(x)
            return self.place(e.exprs[-1])
        v = self.rvalue(e)
        if v is not None and self.is_struct(self.type_of(e)):
            return ("blob", v)
        return None

    # -------------------------------------------------------------- declarations
    def declare(self, decl, is_global: bool) -> None:
        c = self.c
        if decl.name is None or isinstance(decl.type, c.FuncDecl):
            if isinstance(decl.type, c.FuncDecl) and decl.name:
                self.b.function(decl.name, self._n_params(decl.type))
                self.ftype.setdefault(decl.name, self.types.ctype(decl.type.type))
            return
        if not is_global:
            self.locals.add(decl.name)
        name = self.name_of(decl.name)
        t = self.types.ctype(decl.type)
        self.vtype[name] = t
        if isinstance(decl.type, c.ArrayDecl):
            v = self.b.var(name)
            self.arrays.add(name)
            self.b.add(ADDRESS_OF, self.new_var(f"{name}[]", _element(t)), v)
            if decl.init is not None:
                self.init_into(("deref", v), decl.init, t)
            return
        v = self.new_var(name, t)
        if decl.init is not None:
            self.init_into(("var", v), decl.init, t)

    def init_into(self, place, init, t) -> None:
        """Initialise the object of C type ``t`` at ``place`` (for an array: the place of its
        element) with ``init``."""
        c = self.c
        if isinstance(init, c.InitList):
            if t is not None and t[0] == "array":
                for e in init.exprs:  # every element shares the element object
                    self.init_into(place, e.expr if isinstance(e, c.NamedInitializer) else e,
                                   t[1])
                return
            lay = self.types.layout(t)
            members = lay.members if lay is not None else []
            pos, collapsed = 0, lay is None
            for e in init.exprs:
                if isinstance(e, c.NamedInitializer) and not collapsed:
                    target = self.designated(place, t, e.name)
                    if target is not None:
                        self.init_into(target[0], e.expr, target[1])
                        if len(e.name) == 1 and isinstance(e.name[0], c.ID):
                            off = self.types.field(t, e.name[0].name)[0]
                            pos = 1 + next(i for i, m in enumerate(members) if m[0] >= off)
                        continue
                    collapsed = True
                if isinstance(e, c.NamedInitializer):
                    e = e.expr
                if not collapsed and pos < len(members):
                    off, mt = members[pos]
                    aggregate = mt is not None and mt[0] in ("struct", "array")
                    if not aggregate or isinstance(e, c.InitList) or (
                            self.is_struct(mt) and self.type_of(e) == mt):
                        pos += 1
                        self.init_into(self.field(place, off), e, mt)
                        continue
                # Brace elision, excess elements or an unknown type: collapse the rest.
                collapsed = True
                if isinstance(e, c.InitList):
                    self.init_into(place, e, None)
                else:
                    self.write_all(place, self.n_fields(t), self.rvalue(e))
            return
        if self.is_struct(t):
            src_t = self.type_of(init)
            if self.is_struct(src_t) or isinstance(init, (c.FuncCall, c.CompoundLiteral)):
                self.copy_struct(place, self.place(init), t, src_t)
            else:  # an elided brace: a scalar into a struct
                self.write_all(place, self.n_fields(t), self.rvalue(init))
            return
        self.write(place, self.rvalue(init, want=t))

    def designated(self, place, t, designators):
        """(place, type) a designator chain ``.f.g[3]`` names, or None if unknown."""
        c = self.c
        for d in designators:
            if isinstance(d, c.ID) and self.is_struct(t):
                f = self.types.field(t, d.name)
                if f is None:
                    return None
                place, t = self.field(place, f[0]), f[1]
            elif t is not None and t[0] == "array" and not isinstance(d, c.ID):
                t = t[1]  # every element shares the element object's fields
            else:
                return None
        return place, t

    def _n_params(self, fdecl) -> int:
        return len(self._params(fdecl))

    def _params(self, fdecl) -> list:
        params = fdecl.args.params if fdecl.args is not None else []
        out = []
        for p in params:
            if isinstance(p, self.c.EllipsisParam):
                continue
            if isinstance(p, self.c.Typename) and isinstance(p.type, self.c.TypeDecl) and \
                    getattr(p.type.type, "names", None) == ["void"]:
                continue
            out.append(p)
        return out

    # -------------------------------------------------------------- expressions
    def rvalue(self, e, want=None) -> int | None:
        """The variable holding the value of ``e`` (None: no pointer in it). ``want``: the
        C type the value is converted to (it types heap objects)."""
        c = self.c
        if e is None:
            return None
        if isinstance(e, c.ID):
            t = self.type_of(e)
            if self.is_struct(t):
                return self.read_all(self.place(e), self.n_fields(t))
            return self.ident_value(e.name)
        if isinstance(e, c.Constant):
            return None
        if isinstance(e, c.Cast):
            return self.rvalue(e.expr, want=self.types.ctype(e.to_type))
        if isinstance(e, c.UnaryOp):
            if e.op == "&":
                pl = self.place(e.expr)
                return None if pl is None else self.address(pl)
            if e.op == "sizeof":
                return None
            if e.op != "*":
                return self.rvalue(e.expr)  # ++, --, -, !, ~: keep the operand's targets
        if isinstance(e, (c.ArrayRef, c.StructRef, c.UnaryOp, c.CompoundLiteral)):
            t = self.type_of(e)
            pl = self.place(e)
            if pl is None:
                return None
            if t is not None and t[0] == "array":
                return self.address(pl)  # an array decays to a pointer to its element
            if self.is_struct(t):
                return self.read_all(pl, self.n_fields(t))
            return self.read(pl)
        if isinstance(e, c.BinaryOp):
            return self.union([self.rvalue(e.left), self.rvalue(e.right)])
        if isinstance(e, c.TernaryOp):
            self.rvalue(e.cond)
            return self.union([self.rvalue(e.iftrue, want), self.rvalue(e.iffalse, want)])
        if isinstance(e, c.Assignment):
            lt = self.type_of(e.lvalue)
            if self.is_struct(lt):
                pl = self.place(e)
                return None if pl is None else self.read_all(pl, self.n_fields(lt))
            value = self.rvalue(e.rvalue, want=lt)
            lv = self.place(e.lvalue)
            if lv is not None:
                if e.op != "=" and value is not None:  # p += q keeps p's old targets too
                    old = self.rvalue(e.lvalue)
                    value = self.union([old, value])
                self.write(lv, value)
            return value
        if isinstance(e, c.ExprList):
            out = None
            for i, x in enumerate(e.exprs):
                out = self.rvalue(x, want if i == len(e.exprs) - 1 else None)
            return out
        if isinstance(e, c.FuncCall):
            return self.call(e, want)
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

    def arg_value(self, a) -> int | None:
        """An argument's value; a struct passed by value is collapsed to one id."""
        t = self.type_of(a)
        if self.is_struct(t):
            return self.read_all(self.place(a), self.n_fields(t))
        return self.rvalue(a)

    def heap_type(self, args, want):
        """The struct type of a heap object: ``sizeof(struct T)`` in the allocator's
        arguments, else the struct ``want`` points to; None if neither."""
        c = self.c
        stack = list(args)
        while stack:
            n = stack.pop()
            if isinstance(n, c.UnaryOp) and n.op == "sizeof":
                t = _element(self.types.ctype(n.expr) if isinstance(n.expr, c.Typename)
                             else self.type_of(n.expr))
                if self.types.layout(t) is not None:
                    return t
            stack.extend(ch for _, ch in n.children())
        t = _element(_pointee(want))
        return t if self.types.layout(t) is not None else None

    def call(self, e, want=None) -> int | None:
        c, b = self.c, self.b
        args = e.args.exprs if e.args is not None else []
        values = [self.arg_value(a) for a in args]
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
                ht = self.heap_type(args, want)
                if ht is None:  # unknown type: room for any struct's fields
                    obj = b.var(site, b.max_fields)
                else:
                    obj = self.new_var(site, ht)
                t = b.temp()
                b.add(ADDRESS_OF, obj, t)
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
                self.ftype[ext.decl.name] = self.types.ctype(ext.decl.type.type)
            elif isinstance(ext, c.Decl) and isinstance(ext.type, c.FuncDecl) and ext.name:
                self.b.function(ext.name, self._n_params(ext.type))
                self.ftype.setdefault(ext.name, self.types.ctype(ext.type.type))
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
        for i, p in enumerate(self._params(fdef.decl.type)):
            if not (isinstance(p, c.Decl) and p.name):
                continue
            self.locals.add(p.name)
            t = self.types.ctype(p.type)
            if t is not None and t[0] in ("array", "func"):  # parameters are pointers
                t = ("ptr", t[1] if t[0] == "array" else t)
            pname = self.name_of(p.name)
            self.vtype[pname] = t
            v = self.new_var(pname, t)
            if self.is_struct(t):  # by value: every field may hold the collapsed slot
                self.write_all(("var", v), self.n_fields(t), f + 2 + i)
            else:
                self.b.add(COPY, f + 2 + i, v)
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
            rt = self.ftype.get(self.func)
            if self.is_struct(rt) or self.is_struct(self.type_of(s.expr)):
                v = self.arg_value(s.expr)  # returned by value: collapsed
            else:
                v = self.rvalue(s.expr, want=rt)
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
    from pycparser import c_ast  # noqa: PLC0415

    paths = [Path(files)] if isinstance(files, (str, Path)) else [Path(f) for f in files]
    if not paths:
        raise CFrontendError("from_c: no files given")
    asts = []
    for path in paths:
        if not path.is_file():
            raise CFrontendError(f"{path}: " + ("is a directory, not a C file" if path.is_dir()
                                                 else "no such file"))
        asts.append(_parse(preprocess(path), str(path)))
    b = _Builder()
    types = [_Types(c_ast, [ast]) for ast in asts]
    b.max_fields = max(t.max_size() for t in types)  # before any heap object is made
    for path, ast, ty in zip(paths, asts, types):
        _Lowering(b, str(path), ty).unit(ast)
    n = len(b.names)
    cs = from_lists(n, b.rows, obj_size=b.size, name=",".join(p.name for p in paths))
    cs.var_names = b.names
    return cs
