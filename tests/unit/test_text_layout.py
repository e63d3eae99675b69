"""Text tables cut to the terminal's width keep the columns that name a row in every block."""

from __future__ import annotations

from fsarena.report.text import layout, wrap


def test_every_block_of_a_cut_table_says_which_task_and_filesystem_a_row_is() -> None:
    headers = ["task", "filesystem", "fresh", "aged", "aged/fresh", "95 % interval", "n"]
    rows = [
        ["mount", "btrfs", "0.00623 s", "0.0109 s", "1.74", "1.6–1.9", "2/2"],
        ["mount", "ext4", "0.00694 s", "0.00914 s", "1.32", "over 100× wide: too few runs", "2/2"],
    ]
    lines = layout(headers, rows, 60)
    blocks = "\n".join(lines).split("\n\n")
    assert len(blocks) > 1  # it had to be cut
    for block in blocks:
        head, _, *body = block.splitlines()
        assert head.startswith("task   filesystem")
        assert [b.split()[:2] for b in body] == [["mount", "btrfs"], ["mount", "ext4"]]
    assert max(len(line) for line in lines) <= 60


def test_a_wrapped_line_never_parts_a_number_from_its_unit() -> None:
    """Seen in a default run's warning: 'CPU cost (xfs, ext4 within 31' / '%)'."""
    text = "undecided: CPU cost (xfs, ext4 within 31 %); file trees within 1.2 s and 95 % CI"
    for width in range(20, len(text) + 1):
        lines = wrap(text, "  ", width)
        assert " ".join(" ".join(lines).split()) == text  # nothing lost or changed
        for line in lines:
            assert not line.lstrip().startswith(("%", "s ", "CI")), (width, lines)
            assert len(line) <= width
            assert "\u00a0" not in line
