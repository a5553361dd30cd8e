"""sp wing (see the package README)."""
