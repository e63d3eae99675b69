"""Entry point for ``python -m fsarena``."""

from fsarena.cli import main

main()
