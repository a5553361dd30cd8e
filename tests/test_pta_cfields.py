"""The C front end keeps struct fields apart: small programs whose points-to sets are
worked out by hand (the reasoning is in the comments), and a concrete check of soundness:
each program that can run is compiled with gcc and run, and every pointer's final target
must be in the analysis's set (the facts the collapsed model had that can really happen
are all still there).

Layouts: a struct object ``s`` owns one id per flattened field, named ``s`` (first field),
``s.g``, ``s.in.y``...; ``p->f`` is ``gep(p, offset(f))`` then a load or store."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from morphgpu import pta

CHECK_HEADER = """
#ifdef CHECK
#include <stdio.h>
#define P(e) printf("ptr %s %p\\n", #e, (void *)(e))
#define O(e, name) printf("obj %s %p\\n", name, (void *)&(e))
#endif
"""


def points_to(tmp_path: Path, source: str, device: str = "cpu") -> dict[str, set[str]]:
    path = tmp_path / "prog.c"
    path.write_text(CHECK_HEADER + source)
    cs = pta.from_c(path)
    sol = pta.solve(cs, device=device)
    names = cs.var_names
    return {names[v]: {names[o] for o in sol.points_to(v)} for v in range(cs.n_vars)}


def concrete_facts(tmp_path: Path, source: str) -> set[tuple[str, str]]:
    """(pointer, object) pairs true when the program ends, by running it (gcc -DCHECK):
    P(x) prints a pointer's value, O(e, name) the address of the object or field ``name``
    names in the analysis."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc to run the program")
    src = tmp_path / "run.c"
    src.write_text(CHECK_HEADER + source)
    exe = tmp_path / "run"
    subprocess.run([gcc, "-DCHECK", "-w", "-O0", "-o", str(exe), str(src)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    objs: dict[str, set[str]] = {}
    ptrs: dict[str, str] = {}
    for line in out.splitlines():
        kind, name, addr = line.split()
        if kind == "obj":
            objs.setdefault(addr, set()).add(name)
        else:
            ptrs[name] = addr
    facts = {(p, o) for p, a in ptrs.items() for o in objs.get(a, ())}
    assert facts, "the check printed no fact"
    return facts


def check_sound(tmp_path: Path, source: str, pts: dict[str, set[str]]) -> None:
    for p, o in concrete_facts(tmp_path, source):
        assert o in pts[p], f"{p} points to {o} when the program runs; the analysis says {pts[p]}"


def check_exact(pts: dict[str, set[str]], want: dict[str, set[str]]) -> None:
    got = {v: pts[v] for v in want}
    assert got == want


# ------------------------------------------------------------------ two fields, two globals
TWO_FIELDS = """
int a, b;
struct pair { int *f; int *g; };
struct pair s;          /* ids: s (field f), s.g */
int *x, *y;
int main(void) {
    s.f = &a;           /* copy into s:   pts(s)   = {a} */
    s.g = &b;           /* copy into s.g: pts(s.g) = {b} */
    x = s.f;            /* x = {a}: the collapsed model said {a, b} */
    y = s.g;            /* y = {b} */
#ifdef CHECK
    P(x); P(y); O(a, "a"); O(b, "b");
#endif
    return 0;
}
"""


def test_two_fields_point_to_different_globals(tmp_path, device):
    pts = points_to(tmp_path, TWO_FIELDS, device)
    check_exact(pts, {"x": {"a"}, "y": {"b"}, "s": {"a"}, "s.g": {"b"}})
    check_sound(tmp_path, TWO_FIELDS, pts)


# ------------------------------------------------------------------ through a struct pointer
THROUGH_POINTER = """
int a, b;
struct pair { int *f; int *g; };
struct pair s;
struct pair *p;
int *x, *y;
int **q;
int main(void) {
    p = &s;             /* p = {s} */
    p->f = &a;          /* offset 0: store into s:            pts(s)   = {a} */
    p->g = &b;          /* t = gep(p, 1) = {s.g}; store:      pts(s.g) = {b} */
    x = p->f;           /* load through p:  x = pts(s)   = {a} */
    y = p->g;           /* load through t': y = pts(s.g) = {b} */
    q = &p->g;          /* the gep itself:  q = {s.g} (collapsed: {s}) */
#ifdef CHECK
    P(x); P(y); P(q); P(p); O(a, "a"); O(b, "b"); O(s, "s"); O(s.g, "s.g");
#endif
    return 0;
}
"""


def test_fields_through_a_pointer_to_a_struct(tmp_path, device):
    pts = points_to(tmp_path, THROUGH_POINTER, device)
    check_exact(pts, {"p": {"s"}, "x": {"a"}, "y": {"b"}, "q": {"s.g"},
                      "s": {"a"}, "s.g": {"b"}})
    check_sound(tmp_path, THROUGH_POINTER, pts)


# ------------------------------------------------------------------ nested structs
NESTED = """
int a, b, c;
struct inner { int *x; int *y; };
struct outer { int *h; struct inner in; int *t; };
struct outer o;         /* flattened: o (h) @0, o.in.x @1, o.in.y @2, o.t @3 */
struct inner *pi;
int *r1, *r2, *r3, *r4, *r5;
int main(void) {
    o.h = &a;           /* pts(o)      = {a} */
    o.in.y = &b;        /* pts(o.in.y) = {b} */
    o.t = &c;           /* pts(o.t)    = {c} */
    pi = &o.in;         /* address of id o+1: pi = {o.in.x} */
    r1 = pi->x;         /* offset 0 of o.in.x: pts(o.in.x), which the store below fills */
    r2 = pi->y;         /* gep(pi, 1): o+1 has size 3 > 1, so o+2 = o.in.y; r2 = {b} */
    r3 = o.h;           /* {a} */
    pi->x = &c;         /* store into o.in.x: pts(o.in.x) = {c} */
    r4 = o.in.x;        /* {c}; and r1 = {c} too (flow-insensitive) */
    r5 = o.t;           /* {c} */
#ifdef CHECK
    P(pi); P(r1); P(r2); P(r3); P(r4); P(r5);
    O(a, "a"); O(b, "b"); O(c, "c"); O(o.in.x, "o.in.x");
#endif
    return 0;
}
"""


def test_nested_structs_are_flattened(tmp_path, device):
    pts = points_to(tmp_path, NESTED, device)
    check_exact(pts, {"pi": {"o.in.x"}, "r1": {"c"}, "r2": {"b"}, "r3": {"a"},
                      "r4": {"c"}, "r5": {"c"}, "o": {"a"}, "o.in.x": {"c"},
                      "o.in.y": {"b"}, "o.t": {"c"}})
    check_sound(tmp_path, NESTED, pts)


# ------------------------------------------------------------------ an array of structs
ARRAY_ELEMENT = """
int a, b;
struct pair { int *f; int *g; };
struct pair arr[4];     /* arr points to its element object arr[] (ids arr[], arr[].g) */
struct pair *p;
int *x, *y, *z;
int main(void) {
    arr[1].f = &a;      /* the place *arr, field 0: store into arr[]:    {a} */
    arr[2].g = &b;      /* gep(arr, 1) = {arr[].g}; store:               {b} */
    x = arr[3].f;       /* every element shares arr[]: x = {a} */
    y = arr[0].g;       /* y = {b} */
    p = &arr[1];        /* the address of *arr is arr's value: p = {arr[]} */
    z = p[1].g;         /* gep(p, 1) = {arr[].g}: z = {b} */
#ifdef CHECK
    P(x); P(y); P(z); P(p); O(a, "a"); O(b, "b");
    O(arr[0], "arr[]"); O(arr[1], "arr[]"); O(arr[2], "arr[]"); O(arr[3], "arr[]");
#endif
    return 0;
}
"""


def test_struct_array_elements(tmp_path, device):
    pts = points_to(tmp_path, ARRAY_ELEMENT, device)
    check_exact(pts, {"arr": {"arr[]"}, "arr[]": {"a"}, "arr[].g": {"b"}, "x": {"a"},
                      "y": {"b"}, "p": {"arr[]"}, "z": {"b"}})
    check_sound(tmp_path, ARRAY_ELEMENT, pts)


# ------------------------------------------------------------------ a linked list node
LINKED_LIST = """
struct node { int *val; struct node *next; };
struct node n1, other;  /* ids n1 (val), n1.next; other, other.next */
int v1, v2;
struct node *n, *m;
struct node **pn;
int *w, *u;
int main(void) {
    n = &n1;            /* n = {n1} */
    n1.val = &v1;       /* pts(n1) = {v1} */
    other.val = &v2;    /* pts(other) = {v2} */
    n->next = &other;   /* gep(n, 1) = {n1.next}; store: pts(n1.next) = {other} */
    m = n->next;        /* m = {other} (collapsed: {v1, other}) */
    w = m->val;         /* w = pts(other) = {v2} */
    u = n->val;         /* u = pts(n1) = {v1} (collapsed: {v1, other}) */
    pn = &n->next;      /* pn = {n1.next} */
#ifdef CHECK
    P(n); P(m); P(w); P(u); P(pn);
    O(n1, "n1"); O(n1.next, "n1.next"); O(other, "other"); O(v1, "v1"); O(v2, "v2");
#endif
    return 0;
}
"""


def test_linked_list_next_field(tmp_path, device):
    pts = points_to(tmp_path, LINKED_LIST, device)
    check_exact(pts, {"n": {"n1"}, "n1.next": {"other"}, "m": {"other"}, "w": {"v2"},
                      "u": {"v1"}, "pn": {"n1.next"}, "other.next": set()})
    check_sound(tmp_path, LINKED_LIST, pts)


# ------------------------------------------------------------------ malloc'd structs
MALLOC = """
void *malloc(unsigned long);
struct T { int *a; int *b; };
int x, y;
struct T *p, *q, *h, *w;
void *v;
int *r, *r2, *r3;
int main(void) {
    p = (struct T *)malloc(sizeof(struct T));  /* H1 = heap@prog.c:L:C, typed: ids H1, H1.b */
    p->a = &x;          /* pts(H1) = {x} */
    p->b = &y;          /* gep(p, 1) = {H1.b}: pts(H1.b) = {y} */
    r = p->b;           /* r = {y} (collapsed: {x, y}) */
    q = malloc(sizeof *q);   /* H2, typed by sizeof(*q): ids H2, H2.b */
    h = malloc(8);      /* H3, typed by the assigned pointer h: ids H3, H3.b */
    v = malloc(16);     /* H4: no struct type known: as many ids as the largest struct (2) */
    w = v;
    w->b = &x;          /* gep(w, 1) = {H4#1}: pts(H4#1) = {x} */
    r2 = ((struct T *)v)->b;   /* a cast from void *: collapsed over fields 0..1 of H4: {x} */
    r3 = ((struct T *)v)->a;   /* also collapsed: {x} (sound, not precise) */
    return 0;
}
"""


def test_malloced_structs(tmp_path, device):
    pts = points_to(tmp_path, MALLOC, device)
    heaps = {name[:-2]: name for name in pts if name.startswith("heap@") and name.endswith(".b")}
    assert len(heaps) == 3  # the three typed sites have a field .b
    (h1,) = pts["p"]
    (h2,) = pts["q"]
    (h3,) = pts["h"]
    (h4,) = pts["v"]
    assert {h1, h2, h3} == set(heaps) and h4 not in heaps
    check_exact(pts, {h1: {"x"}, h1 + ".b": {"y"}, "r": {"y"}, "w": {h4},
                      h4: set(), h4 + "#1": {"x"}, "r2": {"x"}, "r3": {"x"}})


# ------------------------------------------------------------------ unions
UNIONS = """
int a, b;
struct pair { int *f; int *g; };
union U { int *p; int *q; };
union V { struct pair s; int *r; };
union U u;              /* one id: every member at offset 0 */
union V w;              /* ids w (s.f and r), w.s.g */
int *x, *y, *z, *t;
int main(void) {
    u.p = &a;
    u.q = &b;           /* the same id: pts(u) = {a, b} */
    x = u.p;            /* {a, b}: members alias (sound) */
    y = u.q;            /* {a, b} */
    w.r = &a;           /* offset 0 = w.s.f: pts(w) = {a} */
    z = w.s.f;          /* {a} */
    t = w.s.g;          /* the second field of s: nothing stored, {} */
#ifdef CHECK
    P(x); P(y); P(z); O(a, "a"); O(b, "b");
#endif
    return 0;
}
"""


def test_union_members_alias(tmp_path, device):
    pts = points_to(tmp_path, UNIONS, device)
    check_exact(pts, {"u": {"a", "b"}, "x": {"a", "b"}, "y": {"a", "b"}, "w": {"a"},
                      "z": {"a"}, "t": set(), "w.s.g": set()})
    check_sound(tmp_path, UNIONS, pts)


# ------------------------------------------------------------------ a function writing one field
SETTER = """
int a, b;
struct pair { int *f; int *g; };
struct pair s1, s2;
int *x, *y, *z;
void set_g(struct pair *p, int *v) { p->g = v; }
int main(void) {
    s1.f = &a;          /* pts(s1) = {a} */
    set_g(&s1, &b);     /* set_g::p gets s1, set_g::v gets b */
    set_g(&s2, &a);     /* set_g::p gets s2, set_g::v gets a */
    /* in set_g: gep(p, 1) = {s1.g, s2.g}; each gets pts(v) = {a, b} (context-insensitive) */
    x = s1.f;           /* {a}: set_g never writes field f */
    y = s1.g;           /* {a, b} */
    z = s2.f;           /* {} */
#ifdef CHECK
    P(x); P(y); O(a, "a"); O(b, "b");
#endif
    return 0;
}
"""


def test_function_writes_one_field_through_a_struct_pointer(tmp_path, device):
    pts = points_to(tmp_path, SETTER, device)
    check_exact(pts, {"set_g::p": {"s1", "s2"}, "set_g::v": {"a", "b"}, "x": {"a"},
                      "y": {"a", "b"}, "z": set(), "s1.g": {"a", "b"}, "s2.g": {"a", "b"}})
    check_sound(tmp_path, SETTER, pts)


# ------------------------------------------------------------------ copies, by value, initialisers
COPIES = """
int a, b;
struct pair { int *f; int *g; };
struct pair s1, s2, s3, s4, s5;
struct pair *p;
struct pair init = { &a, &b };        /* positional: pts(init) = {a}, pts(init.g) = {b} */
struct pair named = { .g = &a };      /* designated: pts(named.g) = {a} */
int *x, *y, *z, *i1, *i2, *n1, *n2;
struct pair id(struct pair v) { return v; }   /* by value: collapsed slots */
int main(void) {
    s1.f = &a;
    s1.g = &b;
    s2 = s1;            /* field by field: pts(s2) = {a}, pts(s2.g) = {b} */
    x = s2.f;           /* {a} */
    y = s2.g;           /* {b} */
    p = &s4;
    *p = s1;            /* through p: s4 = {a}, s4.g = {b} (gep(p, 1) for field g) */
    s5 = *p;            /* s5 = {a}, s5.g = {b} */
    s3 = id(s1);        /* id's parameter slot = {a, b}; its return slot = {a, b};
                           every field of s3 gets it */
    z = s3.f;           /* {a, b}: by value is collapsed */
    i1 = init.f; i2 = init.g; n1 = named.f; n2 = named.g;
#ifdef CHECK
    P(x); P(y); P(z); P(i1); P(i2); P(n2); O(a, "a"); O(b, "b");
#endif
    return 0;
}
"""


def test_struct_copies_by_value_and_initialisers(tmp_path, device):
    pts = points_to(tmp_path, COPIES, device)
    check_exact(pts, {"s2": {"a"}, "s2.g": {"b"}, "x": {"a"}, "y": {"b"},
                      "s4": {"a"}, "s4.g": {"b"}, "s5": {"a"}, "s5.g": {"b"},
                      "s3": {"a", "b"}, "s3.g": {"a", "b"}, "z": {"a", "b"},
                      "i1": {"a"}, "i2": {"b"}, "n1": set(), "n2": {"a"}})
    check_sound(tmp_path, COPIES, pts)


# ------------------------------------------------------------------ function objects beside fields
FUNC_FIELDS = """
int a, b;
int *ret_a(void) { return &a; }           /* ret_a + 1 (return slot) = {a} */
int *ret_b(void) { return &b; }
struct ops { int *(*get)(void); int *(*put)(void); };
struct ops o = { ret_a, ret_b };          /* pts(o) = {ret_a}, pts(o.put) = {ret_b} */
struct ops *po = &o;
int *r, *t;
int main(void) {
    r = o.get();        /* load o (field 0) = {ret_a}; call: load offset 1 of ret_a: {a} */
    t = po->put();      /* gep(po, 1) = {o.put}; its function ret_b returns {b} */
#ifdef CHECK
    P(r); P(t); O(a, "a"); O(b, "b");
#endif
    return 0;
}
"""


def test_function_pointers_in_fields_keep_the_function_convention(tmp_path, device):
    pts = points_to(tmp_path, FUNC_FIELDS, device)
    check_exact(pts, {"o": {"ret_a"}, "o.put": {"ret_b"}, "r": {"a"}, "t": {"b"}})
    check_sound(tmp_path, FUNC_FIELDS, pts)


# ------------------------------------------------------------------ a cast between struct types
PUNNED = """
int a, b;
struct A { int *x; int *y; };
struct B { int *u; int *v; };
struct A sa;
struct B *pb;
int *r, *r0;
int main(void) {
    sa.x = &a;
    sa.y = &b;
    pb = (struct B *)&sa;
    r = ((struct A *)pb)->y;  /* a cast from struct B *: collapsed over sa's fields: {a, b} */
    r0 = pb->u;               /* typed as struct B: offset 0 of sa: {a} */
#ifdef CHECK
    P(r); P(r0); O(a, "a"); O(b, "b");
#endif
    return 0;
}
"""


def test_access_through_a_cast_between_struct_types_is_collapsed(tmp_path, device):
    pts = points_to(tmp_path, PUNNED, device)
    check_exact(pts, {"pb": {"sa"}, "r": {"a", "b"}, "r0": {"a"}})
    check_sound(tmp_path, PUNNED, pts)


def test_old_structs_program_keeps_its_answers(device):
    """tests/data/pta/structs.c (written for the collapsed model): n1->next is now the
    field node_a.next, and the answers that matter are unchanged."""
    cs = pta.from_c(Path(__file__).parent / "data" / "pta" / "structs.c")
    sol = pta.solve(cs, device=device)
    names = cs.var_names
    pts = {names[v]: {names[o] for o in sol.points_to(v)} for v in range(cs.n_vars)}
    assert pts["main::x"] == {"main::node_b"}
    assert pts["main::node_a.next"] == {"main::node_b"}
    assert pts["main::node_a"] == set()  # v, an int field, holds no pointer
