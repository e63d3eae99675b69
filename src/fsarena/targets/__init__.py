"""Where filesystems are made and where datasets come from: one module per kind of target."""

from fsarena.targets.loop import LoopTarget
from fsarena.targets.source import Source, choose_source

__all__ = ["LoopTarget", "Source", "choose_source"]
