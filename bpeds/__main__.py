"""``python -m bpeds``: the ``bpeds`` command (see :mod:`bpeds.cli`)."""

from __future__ import annotations

from bpeds.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
