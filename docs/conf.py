"""Sphinx configuration: the API reference, built from the docstrings.

Build (CI runs this with warnings as errors):
    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "morphgpu"
author = "the morphgpu developers"
copyright = "2026, the morphgpu developers"
from morphgpu import __version__ as release  # noqa: E402

version = release

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# Importing the package never imports CuPy; the GPU halves do, and are not documented here.
autodoc_mock_imports = ["cupy", "cupyx"]
napoleon_google_docstring = True
napoleon_numpy_docstring = True
default_role = "code"
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path: list[str] = []
