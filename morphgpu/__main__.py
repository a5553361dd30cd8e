"""``python -m morphgpu``: the ``morphgpu`` command."""

from .cli import console

console()
