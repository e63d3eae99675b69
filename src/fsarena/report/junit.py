"""The regression gate as JUnit XML, the format CI systems read (`compare --junit FILE`).

One testcase per task × filesystem pair of NEW: a failure for a regression, skipped
with the reason for a pair that was not tested or could not have shown a slowdown of
the size asked for (the gate's INCONCLUSIVE), passed otherwise. The suite's properties
carry the threshold, each test's level and what the gate could detect. Nothing in it
depends on the clock: the same sessions give the same file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from fsarena.analysis.regression import POWER, Gate, PairChange, detectable_line, scope_line


def _case(result: Gate, p: PairChange) -> ET.Element:
    case = ET.Element(
        "testcase", classname=f"fsarena.{p.filesystem}", name=f"{p.task} ({p.metric})"
    )
    pct = result.threshold * 100
    if p in result.regressions:
        message = (
            f"{p.worse_by() * 100:.1f} % worse than BASE (at least {(p.lower - 1) * 100:.1f} %; "
            f"n = {p.n_base} and {p.n_new}), above {pct:g} %"
        )
        ET.SubElement(case, "failure", message=message, type="regression").text = message
    elif not p.testable:
        ET.SubElement(case, "skipped", message=f"not tested: {p.untested or 'untestable'}")
    elif p in result.blind:
        ET.SubElement(
            case,
            "skipped",
            message=f"inconclusive: the test finds a slowdown of {p.detectable * 100:.1f} % or "
            f"more ({POWER * 100:.0f} % power) at n = {p.n_base} and {p.n_new}, "
            f"not one of {pct:g} %",
        )
    else:
        out = ET.SubElement(case, "system-out")
        out.text = (
            f"{(p.ratio - 1) * 100:+.1f} % against BASE; detectable: "
            f"{p.detectable * 100:.1f} % ({POWER * 100:.0f} % power)"
        )
    return case


def render(result: Gate, labels: tuple[str, str]) -> str:
    """The XML document, declaration first."""
    cases = [_case(result, p) for p in result.pairs]
    failures = sum(1 for c in cases if c.find("failure") is not None)
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    counts = {
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
    }
    root = ET.Element("testsuites", {"name": "fsarena regression gate", **counts})
    suite = ET.SubElement(root, "testsuite", {"name": f"{labels[0]} -> {labels[1]}", **counts})
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("threshold_pct", f"{result.threshold * 100:g}"),
        (
            "verdict",
            "regression" if result.failed else "inconclusive" if result.inconclusive else "pass",
        ),
        ("exit_code", str(result.exit_code)),
        ("scope", scope_line(result)),
        ("detectable", detectable_line(result)),
    ):
        ET.SubElement(properties, "property", name=name, value=value)
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
