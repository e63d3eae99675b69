"""Which filesystems reports rank together: analysis.scope (the decisive loop reads the same)."""

from fsarena.analysis.scope import KERNEL, group_of, ranked_group, scope_words, verdict_scope

__all__ = ["KERNEL", "group_of", "ranked_group", "scope_words", "verdict_scope"]
