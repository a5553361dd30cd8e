"""Hypothesis strategies for small CNF formulas, shared by the SP tests: (n_vars, clause
lists) with literals drawn over 1..n_vars, either sign."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st


def literals(n: int) -> st.SearchStrategy[int]:
    """A literal over variables 1..n, either sign."""
    return st.integers(1, n).flatmap(lambda v: st.sampled_from([v, -v]))


def formulas(min_vars: int, max_vars: int, *, min_width: int, max_width: int,
             min_clauses: int = 0,
             max_clauses: int | Callable[[int], int]) -> st.SearchStrategy[tuple]:
    """(n, clauses): n in [min_vars, max_vars], clauses of min_width..max_width literals;
    ``max_clauses`` may depend on n."""
    def clauses(n: int) -> st.SearchStrategy[list[list[int]]]:
        most = max_clauses(n) if callable(max_clauses) else max_clauses
        return st.lists(st.lists(literals(n), min_size=min_width, max_size=max_width),
                        min_size=min_clauses, max_size=most)

    return st.integers(min_vars, max_vars).flatmap(
        lambda n: st.tuples(st.just(n), clauses(n)))
