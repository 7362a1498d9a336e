"""``python -m bpeds`` and the ``bpeds`` command: :func:`run` (see :mod:`bpeds.cli`)."""

from __future__ import annotations

import sys


def run() -> int:
    """Import the command line and run it; Ctrl-C while importing exits with status 130.

    Importing :mod:`bpeds.cli` takes a few hundred milliseconds; an interrupt
    then is reported in one line, as it is while a command runs, not as a
    traceback.
    """
    try:
        from bpeds.cli import EXIT_INTERRUPTED, main
    except KeyboardInterrupt:
        print("bpeds: interrupted", file=sys.stderr)
        return 130
    try:
        return main()
    except KeyboardInterrupt:  # after main's own handler (e.g. while printing its message)
        print("bpeds: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(run())
