"""bfs wing (see the package README)."""
