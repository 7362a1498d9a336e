"""The command-line sessions shown in ``docs/cli.md`` give the output shown.

Every fenced block without a language that holds ``$ `` lines is a session: each command
runs, in order, in one folder holding the files the page names (made here as the page
says: ``taylorswift.txt``; ``numbers.txt``; ``myscores.py``, the page's own code;
``part1.txt`` and ``part2.txt.gz``, the first and second half of the article's lines;
``broken.counts``, a file that is not a counts file), and its output (stdout and stderr,
then ``[exit N]`` when the status is not 0) must be the lines shown. Times (``in 0.3 s``)
are compared as ``in N s``. Commands without a pipe run in this process (``bpeds.cli.main``);
the few with one run in a shell.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bpeds.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def sessions(doc: str) -> list[list[tuple[str, list[str], int]]]:
    """Each session's ``(command, output lines, exit status)``, in order."""
    blocks: list[list[str]] = []
    inside: list[str] | None = None
    fenced = False
    for line in doc.splitlines():
        if line.startswith("```"):
            if not fenced:
                fenced, inside = True, ([] if line == "```" else None)
            else:
                if inside is not None and any(x.startswith("$ ") for x in inside):
                    blocks.append(inside)
                fenced, inside = False, None
            continue
        if inside is not None:
            inside.append(line)
    out: list[list[tuple[str, list[str], int]]] = []
    for block in blocks:
        steps: list[tuple[str, list[str], int]] = []
        for line in block:
            if line.startswith("$ "):
                steps.append((line[2:], [], 0))
            elif steps:
                steps[-1][1].append(line)
        session = []
        for cmd, lines, _ in steps:
            while lines and not lines[-1]:
                lines.pop()
            status = 0
            if lines and re.fullmatch(r"\[exit \d+\]", lines[-1]):
                status = int(lines.pop()[6:-1])
            session.append((cmd, lines, status))
        out.append(session)
    return out


def _fixtures(where: Path) -> None:
    text = (ROOT / "tests" / "data" / "taylorswift.txt").read_text(encoding="utf-8")
    (where / "taylorswift.txt").write_text(text, encoding="utf-8")
    numbers = " ".join(str(k * k * 7919 % 100000) for k in range(2000))
    (where / "numbers.txt").write_text(numbers + "\n", encoding="utf-8")
    code = re.search(r"`myscores.py` in the current directory:\n\n```python\n(.*?)```", DOC, re.S)
    assert code is not None
    (where / "myscores.py").write_text(code.group(1), encoding="utf-8")
    lines = text.splitlines(keepends=True)
    half = len(lines) // 2
    (where / "part1.txt").write_text("".join(lines[:half]), encoding="utf-8")
    (where / "part2.txt.gz").write_bytes(gzip.compress("".join(lines[half:]).encode()))
    (where / "broken.counts").write_text("not a counts file\n", encoding="utf-8")


def _run(cmd: str, where: Path) -> tuple[list[str], int]:
    """A command's output lines and exit status."""
    if "|" in cmd:
        bin_dir = Path(sys.executable).parent
        env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
        env["PYTHONPATH"] = str(where)
        done = subprocess.run(
            ["bash", "-c", cmd], cwd=where, env=env, capture_output=True, text=True, check=False
        )
        return (done.stdout + done.stderr).rstrip("\n").splitlines(), done.returncode
    argv = shlex.split(cmd)
    assert argv[0] == "bpeds"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv[1:])
    return (out.getvalue() + err.getvalue()).rstrip("\n").splitlines(), code


def _same(lines: list[str]) -> list[str]:
    return [re.sub(r"in \d+(\.\d+)? s\b", "in N s", line) for line in lines]


SESSIONS = sessions(DOC)


def test_the_page_holds_its_sessions() -> None:
    assert len(SESSIONS) >= 10
    assert sum(len(s) for s in SESSIONS) >= 40


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_every_session_gives_the_output_shown(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bpeds.driver import checks

    monkeypatch.setattr(checks, "_warned", set())  # the advice is given once per process
    where = tmp_path_factory.mktemp("cli-doc")
    _fixtures(where)
    monkeypatch.chdir(where)
    monkeypatch.syspath_prepend(str(where))
    wrong = []
    for session in SESSIONS:
        for cmd, want, status in session:
            got, code = _run(cmd, where)
            if _same(got) != _same(want) or code != status:
                wrong.append(f"$ {cmd}\n  exit {code} (shown: {status})\n  " + "\n  ".join(got))
    sys.modules.pop("myscores", None)
    shutil.rmtree(where, ignore_errors=True)
    assert not wrong, "docs/cli.md shows other output:\n" + "\n".join(wrong)
