"""pta wing (see the package README)."""
