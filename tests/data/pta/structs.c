/* Known answers (fields kept apart: node_a spans node_a (v) and node_a.next):
 *   main::n1 -> {main::node_a}; main::n2 -> {main::node_b}
 *   main::x -> {main::node_b} (n1->next = n2 stores into node_a.next; x = n1->next)
 *   main::arr holds its element object; main::e -> {main::node_a} (arr[1] = &node_a)
 */
struct node { int v; struct node *next; };

int main(void) {
    struct node node_a, node_b;
    struct node *n1 = &node_a;
    struct node *n2 = &node_b;
    struct node *x;
    struct node *arr[4];
    struct node *e;
    n1->next = n2;
    x = n1->next;
    arr[1] = &node_a;
    e = arr[2];
    return 0;
}
