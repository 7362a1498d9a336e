"""Training data as records: ``.jsonl`` files, Parquet columns, Hugging Face datasets and
iterables of mappings (``bpeds.Records``), each record one unit, read in bounded memory."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

import bpeds
from bpeds import Records
from bpeds.tokenizer.io import iter_segments

# Imported while the test modules are collected: a later test's imports can leave a module
# without a spec in sys.modules, which `datasets`' own import-time probing trips over.
try:
    import datasets
except ImportError:  # pragma: no cover - a dev dependency
    datasets = None

SWIFT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")
LINES = [line for line in SWIFT[:30000].splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def rows() -> list[dict[str, object]]:
    return [{"id": i, "text": t, "body": t.upper()} for i, t in enumerate(LINES)]


def test_a_jsonl_file_trains_as_its_text_field_one_unit_per_record(
    rows: list[dict[str, object]], tmp_path: Path
) -> None:
    plain = bpeds.train(LINES, 500, workers=1)
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    assert bpeds.train(path, 500, workers=1) == plain  # a .jsonl path: its "text" field
    assert bpeds.train(Records(path), 500, workers=1) == plain
    gz = write_jsonl(tmp_path / "d.jsonl.gz", rows)
    assert bpeds.train(Records(gz), 500, workers=1) == plain
    upper = bpeds.train([t.upper() for t in LINES], 500, workers=1)
    assert bpeds.train(Records(path, field="body"), 500, workers=1) == upper


def test_a_parquet_column_is_chosen_by_field(rows: list[dict[str, object]], tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert bpeds.train(Records(path, field="body"), 400, workers=1) == bpeds.train(
        [t.upper() for t in LINES], 400, workers=1
    )
    with pytest.raises(
        ValueError, match=r"no column 'nope'; the file has \['id', 'text', 'body'\]"
    ):
        list(Records(path, field="nope"))


def test_a_hugging_face_dataset_streams_its_column(rows: list[dict[str, object]]) -> None:
    if datasets is None:  # pragma: no cover - a dev dependency
        pytest.skip("needs the datasets package")
    ds = datasets.Dataset.from_list(rows)
    plain = bpeds.train(LINES, 400, workers=1)
    assert bpeds.train(Records(ds), 400, workers=1) == plain
    streaming = datasets.IterableDataset.from_generator(lambda: iter(rows))
    assert bpeds.train(Records(streaming), 400, workers=1) == plain
    with pytest.raises(ValueError, match="no column 'nope'"):
        list(Records(ds, field="nope"))


def test_records_from_any_iterable_of_mappings_and_their_errors() -> None:
    gen = ({"text": t} for t in LINES)
    assert list(Records(gen)) == LINES
    assert list(Records([{"text": None}, {"text": "a"}])) == ["a"]
    with pytest.raises(ValueError, match=r"record 1 has no field 'text' \(it has \['body'\]\)"):
        list(Records([{"text": "a"}, {"body": "b"}]))
    with pytest.raises(ValueError, match="record 0: field 'text' holds int"):
        list(Records([{"text": 3}]))
    with pytest.raises(TypeError, match="record 0 is a str"):
        list(Records(["text"]))
    with pytest.raises(TypeError, match="Records reads"):
        Records(42)
    with pytest.raises(ValueError, match=r"reads \.jsonl and \.parquet"):
        Records("corpus.txt")


def test_jsonl_errors_name_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "ok"}\n\n{"other": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl, line 3: no field 'text'.*\['other'\]"):
        bpeds.train(path, 300)
    path.write_text('{"text": "ok"}\nnot json\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl, line 2: not JSON"):
        bpeds.count(path)
    path.write_text('{"text": "a\\ud800b"}\n', encoding="utf-8")
    with pytest.raises(bpeds.InvalidTextError, match="lone surrogate"):
        bpeds.train(path, 300)
    with pytest.warns(UserWarning, match="training stopped"):
        assert bpeds.train(path, 300, errors="replace").num_merges == 3  # "a\ufffdb"


def test_reading_records_keeps_memory_bounded(tmp_path: Path) -> None:
    """Reading 8 MB of records holds about one record at a time, not the file."""

    def rows() -> Iterator[str]:
        for i in range(4000):
            yield json.dumps({"text": f"record {i} " + "lorem ipsum dolor " * 110}) + "\n"

    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as f:
        f.writelines(rows())
    assert path.stat().st_size > 8_000_000
    tracemalloc.start()
    try:
        n = sum(len(p) for p in iter_segments(Records(path), pattern="gpt2"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert n > 7_000_000
    assert peak < 1_000_000
