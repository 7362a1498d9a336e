"""Atomic, no-overwrite file writing, shared by :mod:`bpeds.persist` and :mod:`bpeds.formats`.

Not public API: the functions that write files document what they promise.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = ["check_targets", "write_files", "write_stream"]

_OPEN_FLAGS = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_BINARY", 0)  # Windows: no newline translation
    | getattr(os, "O_CLOEXEC", 0)
)


def write_files(
    files: Iterable[tuple[str | os.PathLike[str], bytes]], *, overwrite: bool
) -> list[Path]:
    """Write each ``(path, data)`` atomically and return the paths.

    Each file goes to a temporary ``.<name>.<random>.tmp`` file in the same
    directory, which is flushed, synced and then moved into place: renamed
    over ``path`` with ``overwrite``; otherwise hard-linked, which fails if
    ``path`` appeared meanwhile (on a filesystem without hard links, checked
    and renamed). A reader never sees a partial file; a failure leaves no
    temporary file behind (a crash, at most a stray one).

    Every path is checked before anything is written, so a refusal leaves no
    half-written set: a missing directory raises ``FileNotFoundError``; an
    existing path (also a dangling symlink) without ``overwrite`` raises
    ``FileExistsError``, whose message says to pass ``overwrite=True``; a
    directory at ``path`` raises ``IsADirectoryError``.

    A new file gets the usual permissions (``0o666`` minus the umask); a
    replaced file keeps its mode. Complexity: O(bytes).
    """
    items = [(Path(p), data) for p, data in files]
    check_targets([p for p, _ in items], overwrite=overwrite)
    for p, data in items:
        _write_one(p, data, overwrite)
    return [p for p, _ in items]


def check_targets(paths: Iterable[str | os.PathLike[str]], *, overwrite: bool) -> None:
    """Raise as :func:`write_files` would before writing anything to ``paths``.

    ``FileNotFoundError`` for a missing directory, ``FileExistsError`` for an
    existing path without ``overwrite``, ``IsADirectoryError`` for a directory.
    """
    for p in map(Path, paths):
        if not p.parent.is_dir():
            raise FileNotFoundError(f"cannot write {p}: directory {p.parent} does not exist")
        if not overwrite and os.path.lexists(p):
            raise FileExistsError(f"{p} already exists; pass overwrite=True to replace it")
        if p.is_dir():
            raise IsADirectoryError(f"cannot write {p}: it is a directory")


def _write_one(p: Path, data: bytes, overwrite: bool) -> None:
    keep = stat.S_IMODE(p.stat().st_mode) if overwrite and p.exists() else None
    # A new file is created with 0o666, which the kernel cuts by the umask; a file that
    # replaces another is private until it has that file's mode.
    fd, tmp = _create_temp(p, 0o666 if keep is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if keep is not None:
            os.chmod(tmp, keep)
        if overwrite:
            os.replace(tmp, p)
        else:
            _link_no_clobber(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)


def _create_temp(p: Path, mode: int) -> tuple[int, Path]:
    """A new file next to ``p``, opened for writing with ``mode`` (before the umask)."""
    for _ in range(100):
        tmp = p.with_name(f".{p.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, _OPEN_FLAGS, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot write {p}: no free temporary file name in {p.parent}")


def _link_no_clobber(tmp: Path, target: Path) -> None:
    """Put ``tmp`` at ``target`` unless ``target`` appeared meanwhile (``tmp`` stays).

    A hard link fails atomically when the target exists; filesystems without
    hard links fall back to a check and a rename.
    """
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise FileExistsError(
            f"{target} was created while writing it; pass overwrite=True to replace it"
        ) from None
    except OSError:
        if os.path.lexists(target):
            raise FileExistsError(
                f"{target} already exists; pass overwrite=True to replace it"
            ) from None
        os.replace(tmp, target)


def write_stream(path: str | os.PathLike[str], chunks: Iterable[bytes], *, overwrite: bool) -> Path:
    """Write the concatenation of ``chunks`` to ``path`` atomically, as :func:`write_files`.

    The chunks are written as they come (the whole content is never held in
    memory); the file appears at ``path`` only once all of it is written and
    synced. An exception from ``chunks`` leaves nothing behind and ``path``
    untouched. Same checks and errors as :func:`write_files`. O(bytes).
    """
    p = Path(path)
    check_targets([p], overwrite=overwrite)
    keep = stat.S_IMODE(p.stat().st_mode) if overwrite and p.exists() else None
    fd, tmp = _create_temp(p, 0o666 if keep is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        if keep is not None:
            os.chmod(tmp, keep)
        if overwrite:
            os.replace(tmp, p)
        else:
            _link_no_clobber(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)
    return p
