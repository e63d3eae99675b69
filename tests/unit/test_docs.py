"""The docs that are generated stay current; the man page and shell completion work for real."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import click
import pytest

from fsarena.cli.commands import main
from fsarena.cli.manpage import commands

ROOT = Path(__file__).resolve().parents[2]
FSARENA = Path(sys.executable).parent / "fsarena"  # the installed entry point


def _gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_man_page_and_the_package_table_are_current() -> None:
    gen = _gen_docs()
    assert (ROOT / "docs" / "fsarena.1").read_text() == gen.man_page(), (
        "docs/fsarena.1 is stale: run .venv/bin/python scripts/gen_docs.py"
    )
    assert (ROOT / "docs" / "development.md").read_text() == gen.development_guide(), (
        "docs/development.md's package table is stale: run scripts/gen_docs.py"
    )


def test_a_built_wheel_carries_the_man_page_written_from_the_cli(tmp_path: Path) -> None:
    """The build hook (scripts/hatch_build.py) renders the page from the CLI being built."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("fsarena-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith("/share/man/man1/fsarena.1")]
        page = archive.read(name).decode()
    assert page == _gen_docs().man_page()
    assert '.SS "fsarena powerloss"' in page and '.SS "fsarena store import"' in page


def test_the_package_table_has_every_package_of_the_layering_test() -> None:
    from tests.layers import ALLOWED

    text = (ROOT / "docs" / "development.md").read_text()
    listed = re.findall(r"^\| `(\w+)/` \|", text, re.M)
    assert listed == list(ALLOWED)


def _every_command_and_option() -> list[tuple[str, list[str]]]:
    root = click.Context(main, info_name="fsarena", **main.context_settings)
    found = [("fsarena", [o for p in main.get_params(root) for o in p.opts if o.startswith("-")])]
    for ctx, path in commands(main, root):
        params = ctx.command.get_params(ctx)
        found.append((path, [o for p in params for o in p.opts if o.startswith("-")]))
    return found


@pytest.mark.skipif(shutil.which("man") is None, reason="man(1) is not installed")
def test_man_renders_every_command_and_option() -> None:
    env = {**os.environ, "LC_ALL": "C", "MANWIDTH": "250", "MANPAGER": "cat", "PAGER": "cat"}
    out = subprocess.run(
        ["man", str(ROOT / "docs" / "fsarena.1")], capture_output=True, text=True, env=env,
        check=True,
    ).stdout  # fmt: skip
    sections = re.split(r"\n   (?=fsarena )", out)  # one section per command (.SS)
    by_path = {s.splitlines()[0].strip(): s for s in sections[1:]}
    everything = _every_command_and_option()
    assert len(everything) > 10  # run, report, store import, fleet run, ...
    assert "crashtest" not in out  # an old name, hidden: only the new one is taught
    for path, options in everything:
        text = out if path == "fsarena" else by_path[path]
        for option in options:
            assert re.search(rf"(^|[\s,]){re.escape(option)}\b", text), (path, option)


def _complete_in_bash(*words: str) -> list[str]:
    """What bash offers for the last word, through the script `fsarena` prints for bash."""
    script = f"""
        eval "$(_FSARENA_COMPLETE=bash_source fsarena)"
        COMP_WORDS=({" ".join(f"'{w}'" for w in words)})
        COMP_CWORD={len(words) - 1}
        COMPREPLY=()
        _fsarena_completion fsarena
        printf '%s\\n' "${{COMPREPLY[@]}}"
    """
    env = {**os.environ, "PATH": f"{FSARENA.parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(
        ["bash", "--norc", "-c", script], capture_output=True, text=True, env=env, check=True
    )
    return [line for line in out.stdout.splitlines() if line]


def test_bash_completes_commands_options_and_choices() -> None:
    assert _complete_in_bash("fsarena", "ru") == ["run"]
    assert {"report", "run", "store", "powerloss"} <= set(_complete_in_bash("fsarena", ""))
    assert _complete_in_bash("fsarena", "cr") == []  # the old name works, hidden
    assert "--time-budget" in _complete_in_bash("fsarena", "run", "--time")
    formats = _complete_in_bash("fsarena", "report", "--format", "")
    assert formats == ["csv", "html", "json", "markdown", "text"]
    assert _complete_in_bash("fsarena", "store", "hi") == ["history"]


def test_zsh_completion_is_provided() -> None:
    out = subprocess.run(
        [str(FSARENA)], env={**os.environ, "_FSARENA_COMPLETE": "zsh_source"},
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert out.startswith("#compdef fsarena")


def _anchor(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's) gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_measured_figures_are_dated_and_the_docs_links_to_them_resolve() -> None:
    """bench/RESULTS.md holds the measured figures: each entry dated, with its commit and
    command; the guides link to an entry instead of repeating figures that go stale."""
    results = (ROOT / "bench" / "RESULTS.md").read_text()
    entries = re.split(r"^## ", results, flags=re.M)[1:]
    assert len(entries) >= 10
    for entry in entries:
        title = entry.splitlines()[0]
        assert re.search(r"\*\*20\d\d-\d\d-\d\d", entry), f"{title}: no date"
        assert re.search(r"`[0-9a-f]{7,12}`", entry), f"{title}: no commit"
        assert re.search(r"command", entry, re.I), f"{title}: no command"
    anchors = {_anchor(e.splitlines()[0]) for e in entries}
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    links = [
        (doc.name, anchor)
        for doc in docs
        for anchor in re.findall(r"RESULTS\.md#([\w\-]+)", doc.read_text())
    ]
    assert len(links) >= 6
    for doc, anchor in links:
        assert anchor in anchors, (doc, anchor)


def test_the_readmes_report_excerpt_is_from_a_real_report() -> None:
    readme = (ROOT / "README.md").read_text()
    excerpt = re.search(r"```text\n(.*?)```", readme, re.S)
    assert excerpt is not None
    golden = (ROOT / "tests" / "golden" / "three-filesystems.txt").read_text()
    assert excerpt.group(1) in golden


def test_shell_completion_offers_filesystems_and_suites() -> None:
    """--fs completes after its last comma (drivers too), --suite the built-in suites."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    fsarena = str(Path(sys.executable).parent / "fsarena")

    def complete(*words: str) -> list[str]:
        env = {**os.environ, "COMP_WORDS": " ".join(["fsarena", *words]),
               "COMP_CWORD": str(len(words)), "_FSARENA_COMPLETE": "bash_complete"}  # fmt: skip
        out = subprocess.run([fsarena], env=env, capture_output=True, text=True, check=True)
        return [line.split(",", 1)[1] for line in out.stdout.splitlines()]

    assert {"ext4,xfs", "ext4,xfs@uml"} <= set(complete("run", "--fs", "ext4,x"))
    assert "article-a-2006" in complete("run", "--suite", "art")
    assert "server-2026" in complete("check", "--suite", "ser")
