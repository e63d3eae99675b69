"""The drawn answer as a document's figure: its SVG for a page, its lines for a terminal.

answer_figure builds the model from the Answer; answer_svg and answer_chars draw it.
This joins the two renderings into the `Drawing` a `document.Figure` carries, so
contents.answer_section places the figure like any other block.
"""

from __future__ import annotations

from dataclasses import dataclass

from fsarena.report import answer_chars, answer_svg
from fsarena.report.answer_figure import AnswerFigure


@dataclass(frozen=True)
class AnswerDrawing:
    figure: AnswerFigure

    def svg(self) -> str:
        return answer_svg.svg(self.figure)

    def lines(self, width: int) -> list[str]:
        return answer_chars.lines(self.figure, width)
