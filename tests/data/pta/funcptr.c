/* Known answers (field-collapsed Andersen):
 *   main::p -> {a}; main::q -> {b}; main::r -> {a, b} (id returns its argument);
 *   main::h -> {heap at the malloc line}; main::fp -> {id, other};
 *   main::s -> {a, b}   (through the function pointer: id and other both bound);
 *   main::t -> {a, b}   (*pp where pp -> {p, q})
 *   g -> {b}            (stored through a pointer to the global)
 */
void *malloc(unsigned long n);

int a, b;
int *g;

int *id(int *x) { return x; }
int *other(int *y) { return y; }

void set(int **dst, int *val) { *dst = val; }

int main(void) {
    int *p = &a;
    int *q = &b;
    int *r;
    int **pp;
    int *(*fp)(int *);
    int *s, *t, *h;
    r = id(p);
    r = id(q);
    h = (int *)malloc(sizeof(int));
    fp = id;
    if (a) fp = &other;
    s = fp(p);
    s = (*fp)(q);
    pp = &p;
    if (b) pp = &q;
    t = *pp;
    set(&g, q);
    return 0;
}
