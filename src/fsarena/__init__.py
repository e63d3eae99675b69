"""fsarena: compare Linux filesystems with real-world tasks, measured honestly."""

__version__ = "0.1.0"
