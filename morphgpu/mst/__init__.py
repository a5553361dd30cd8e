"""mst wing (see the package README)."""
