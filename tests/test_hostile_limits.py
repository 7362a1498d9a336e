"""Files whose cost is hidden: patterns that compile into gigabytes however they are written,
token lengths that double with each merge, event logs that loop, counts files that inflate.

Each attack is a small file. A test that would exhaust memory on a broken build runs in a
child process whose address space is capped (:func:`run_capped`), so that it fails instead
of taking the machine with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bpeds.tokenizer.counts import Counts

ROOT = Path(__file__).resolve().parent.parent

# Each compiles into gigabytes in the regex module, and each reads as small to a checker
# that parses the pattern its own way.
BYPASSES = [
    "(?x:a)#a{10000000}",  # a scoped verbose flag, with "#" outside its scope
    "[(?x]#a{10000000}",  # "(?x" inside a set
    r"\(?x#a{10000000}",  # "(?x" after an escaped parenthesis
    r"a\g{10000000}",  # \g{...} is not a braced escape here
    "(?x)a{1 0 0 0 0 0 0 0}",  # spaces inside braces in verbose mode
]


def run_capped(code: str, memory: int = 1 << 30, timeout: float = 120) -> str:
    """Run ``code`` in a child Python whose address space may grow by ``memory`` bytes;
    its stdout and stderr. The child fails (MemoryError) rather than exhaust the machine."""
    prelude = textwrap.dedent(
        f"""
        import resource
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (size + {memory}, resource.RLIM_INFINITY))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    return done.stdout + done.stderr


needs_rlimit = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc"
)


def bpeds_json(pattern: str) -> str:
    return json.dumps(
        {
            "format": "bpeds",
            "version": 1,
            "pattern": pattern,
            "special_tokens": {},
            "options": {},
            "merges": [[97, 98]],
        }
    )


# -- patterns: what compiling costs, bounded whatever the parser reads -------------------------


@needs_rlimit
@pytest.mark.parametrize("pattern", BYPASSES)
def test_a_pattern_that_compiles_into_gigabytes_is_refused_however_it_is_written(
    tmp_path: Path, pattern: str
) -> None:
    model = tmp_path / "evil.json"
    model.write_text(bpeds_json(pattern), encoding="utf-8")
    counts = tmp_path / "evil.counts"
    Counts._trusted({"ab": 1}, pattern, ()).save(counts)
    out = run_capped(
        f"""
        from bpeds.errors import ModelFormatError
        from bpeds.tokenizer import Tokenizer
        from bpeds.tokenizer.counts import Counts, CountsFormatError
        for load, path, error in (
            (Tokenizer.load, {str(model)!r}, ModelFormatError),
            (Counts.load, {str(counts)!r}, CountsFormatError),
        ):
            try:
                load(path)
            except error as exc:
                assert "split pattern refused" in str(exc), exc
                print("refused")
        """
    )
    assert out.split() == ["refused", "refused"], out


@needs_rlimit
def test_the_command_line_refuses_such_a_model_in_one_line(tmp_path: Path) -> None:
    model = tmp_path / "evil.json"
    model.write_text(bpeds_json(BYPASSES[0]), encoding="utf-8")
    out = run_capped(
        f"""
        import sys
        from bpeds.cli import main
        sys.exit(main(["info", {str(model)!r}]))
        """
    )
    assert out.count("\n") == 1 and "split pattern refused" in out, out


def test_ordinary_patterns_pass_the_probe_and_compile() -> None:
    from bpeds.tokenizer.pattern_safety import probe_pattern
    from bpeds.tokenizer.pretokenize import compile_pattern

    for source in (r"\w+|\s+|.", r"(?x) \w+ | \s+ | [^\w\s]+", r"\p{L}{1,16}|\d{1,3}|\S|\s+"):
        probe_pattern(source)
        assert compile_pattern(source).findall("ab 12") != []


def test_a_syntax_error_is_reported_by_compiling_not_by_the_probe() -> None:
    from bpeds.tokenizer.pretokenize import compile_pattern

    with pytest.raises(ValueError, match="does not compile"):
        compile_pattern("(unclosed")

