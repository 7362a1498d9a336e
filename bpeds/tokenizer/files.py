"""Atomic, no-overwrite file writing: model files, other formats, counts files, reports.

Every file bpeds writes goes through :func:`write_files` or :func:`write_stream`,
so a reader never sees a partial file and an existing file is replaced only
when asked. :func:`check_targets` raises what writing would raise without
writing anything: call it before a long run (training, a comparison) so that
a refusal comes first, not at the end. ``docs/security.md`` describes the
rules on symbolic links and special files.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterable
from pathlib import Path

from bpeds.errors import TargetFileError

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
    half-written set (see :func:`check_targets`): a missing directory raises
    ``FileNotFoundError``; an existing path without ``overwrite``,
    ``FileExistsError``, whose message says to pass ``overwrite=True``; a
    directory, ``IsADirectoryError``; anything else that is not a regular file
    (a FIFO, a device such as ``/dev/null``, a socket),
    :class:`~bpeds.errors.TargetFileError`.

    **Symbolic links.** With ``overwrite``, a symlink at ``path`` is followed:
    the regular file it leads to is replaced (atomically, in that file's
    directory) and the link is kept, as ``cp`` does. A dangling link, a link
    to anything but a regular file, and a link in a sticky shared directory
    (``/tmp``) owned by neither you nor the directory's owner (the rule of
    Linux's ``protected_symlinks``) raise :class:`~bpeds.errors.TargetFileError`.
    Without ``overwrite`` any existing link, dangling or not, is an existing path.

    ``overwrite`` must be a ``bool`` (``TypeError`` otherwise: ``"no"`` is not
    false). A new file gets the usual permissions (``0o666`` minus the umask);
    a replaced file keeps its mode. Complexity: O(bytes).
    """
    items = [(Path(p), data) for p, data in files]
    targets = check_targets([p for p, _ in items], overwrite=overwrite)
    for target, (_, data) in zip(targets, items, strict=True):
        _write_one(target, (data,), overwrite)
    return [p for p, _ in items]


def check_targets(paths: Iterable[str | os.PathLike[str]], *, overwrite: bool) -> list[Path]:
    """Raise as :func:`write_files` would before writing anything to ``paths``.

    Returns the files that would be written: each path, or for a symlink
    followed with ``overwrite``, the regular file it leads to.
    """
    if not isinstance(overwrite, bool):
        raise TypeError(
            f"overwrite must be True or False, got {type(overwrite).__name__} {overwrite!r}"
        )
    return [_target(Path(p), overwrite) for p in paths]


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _refuse(p: Path, reason: str) -> TargetFileError:
    return TargetFileError(errno.EEXIST, f"{reason}; bpeds writes only regular files", str(p))


def _target(p: Path, overwrite: bool) -> Path:
    """The file to write for ``p`` (see :func:`write_files`), or the error that refuses it."""
    if not p.parent.is_dir():
        raise FileNotFoundError(f"cannot write {p}: directory {p.parent} does not exist")
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return p
    if stat.S_ISLNK(st.st_mode):
        if not overwrite:
            raise FileExistsError(f"{p} already exists; pass overwrite=True to replace it")
        return _follow(p, st)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"cannot write {p}: it is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(p, f"it is {_kind(st.st_mode)}")
    if not overwrite:
        raise FileExistsError(f"{p} already exists; pass overwrite=True to replace it")
    return p


def _follow(link: Path, st: os.stat_result) -> Path:
    """The regular file the symlink ``link`` leads to, if bpeds may write through it."""
    parent = os.stat(link.parent)
    euid = getattr(os, "geteuid", None)
    if (
        euid is not None
        and parent.st_mode & stat.S_ISVTX
        and parent.st_mode & stat.S_IWOTH
        and st.st_uid not in (euid(), parent.st_uid)
    ):
        raise _refuse(
            link,
            "it is a symbolic link owned by another user in a shared directory, which bpeds "
            "does not follow",
        )
    real = Path(os.path.realpath(link))
    try:
        mode = os.stat(real).st_mode
    except OSError:
        raise _refuse(link, f"it is a symbolic link to {real}, which does not exist") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"cannot write {link}: it is a symbolic link to a directory")
    if not stat.S_ISREG(mode):
        raise _refuse(link, f"it is a symbolic link to {real}, which is {_kind(mode)}")
    return real


def _write_one(p: Path, chunks: Iterable[bytes], overwrite: bool) -> None:
    """Write the concatenation of ``chunks`` to a temporary file next to ``p``, sync
    it, then put it at ``p`` (replacing it only with ``overwrite``)."""
    keep = None
    if overwrite:
        with contextlib.suppress(FileNotFoundError):  # not there, or removed meanwhile
            keep = stat.S_IMODE(p.stat().st_mode)
    # A new file is created with 0o666, which the kernel cuts by the umask; a file that
    # replaces another is private until it has that file's mode.
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
    (target,) = check_targets([p], overwrite=overwrite)
    _write_one(target, chunks, overwrite)
    return p
