"""Entry point for ``python -m fsarena``."""

from fsarena.cli.commands import main

main()
