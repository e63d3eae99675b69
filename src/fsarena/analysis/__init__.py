"""Analysis: statistics over raw samples, evidence, verdicts per kind of work, adaptive stopping.

Reads session records and the metric registry only; never runs anything.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "adaptive": (
        "SessionProgress",
        "headline_columns",
        "next_round_fits",
        "round_forecast",
    ),
    "answer": (
        "Answer",
        "EQUAL",
        "FACT_KINDS",
        "Judged",
        "KindAnswer",
        "MAX_SUGGESTED_ROUNDS",
        "NEVER_WEIGHED",
        "OPEN",
        "OVERALL",
        "PROFILES",
        "UNTESTED",
        "WIN",
    ),
    "evidence": (
        "Index",
        "TaskResult",
    ),
    "kinds": ("PRACTICAL",),
    "method": (
        "BUFFERED_LOOP",
        "durability",
        "loop_io",
    ),
    "phrases": (
        "describe",
        "interval_text",
        "metric_word",
        "names",
        "number",
    ),
    "race": ("*",),
    "ranking": (
        "ALPHA",
        "Pair",
        "Ranking",
        "RatioTest",
        "point_ratio",
        "rank",
        "ratio_test",
    ),
    "regression": (
        "Gate",
        "POWER",
        "PairChange",
        "detectable_line",
        "gate",
        "gate_lines",
        "scope_line",
    ),
    "replay": (
        "CallError",
        "ReplayError",
        "captured",
        "replay_error",
        "replay_tasks",
    ),
    "rounds": ("round_seconds",),
    "scope": (
        "KERNEL",
        "group_of",
        "group_words",
        "other_groups",
        "ranked_group",
        "scope_of",
        "scope_words",
        "verdict_scope",
    ),
    "stats": (
        "OUTLIER_SIGMAS",
        "SHORT_RUN_S",
        "Summary",
        "TOO_WIDE",
        "UNSTABLE_ADVICE",
        "instability",
        "n_for_cv",
        "outliers",
        "summarize",
    ),
    "verdicts": (
        "Verdicts",
        "analyse",
        "caveats",
    ),
}
