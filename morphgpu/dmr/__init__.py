"""dmr wing (see the package README)."""
