"""Counting on a real Dask cluster: a ``distributed.LocalCluster`` of worker processes.

Checked: the counts (order of first appearance included) and the merges equal local
counting's, through a ``Client``, ``client.get_executor()`` and a ``dask.bag``; a bad
file raises on the client the error local counting raises, naming the file; the count
command's ``--scheduler``; and (under the CI budget, being slower) a worker killed
mid-job, whose tasks Dask runs again, changes nothing.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bpeds.cli import main
from bpeds.tokenizer.counts import Counts
from bpeds.tokenizer.io import InvalidTextError
from bpeds.tokenizer.training import count, count_to_file, train
from tests.budget import FULL

distributed = pytest.importorskip("distributed")
dask_bag = pytest.importorskip("dask.bag")

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """Two worker processes (each its own interpreter), one thread each."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("shards")
    out = []
    for i in range(6):
        path = root / f"shard{i}.txt"
        path.write_text(TEXT[i * 15000 : i * 15000 + 40000], encoding="utf-8")
        out.append(path)
    return out


def items(c: Counts) -> list[tuple[str, int]]:
    return list(c.items())


def test_a_client_counts_and_trains_as_locally(client: Any, files: list[Path]) -> None:
    data: list[Any] = [files[0], "some text of its own", *files[1:], "and more"]
    local = count(data, special_tokens=["<s>"])
    on_cluster = count(data, special_tokens=["<s>"], executor=client)
    assert items(on_cluster) == items(local)
    assert items(count(data, special_tokens=["<s>"], executor=client.get_executor())) == items(
        local
    )
    for tie in ("leftmost", "smallest_ids"):
        expected = train(data, 400, tie=tie, special_tokens=["<s>"]).merges
        assert train(on_cluster, 400, tie=tie).merges == expected


def test_a_budget_and_a_resumable_count_on_a_client(
    client: Any, files: list[Path], tmp_path: Path
) -> None:
    """With max_memory the client's executor feeds the bounded table; with resume_dir each
    file's part is saved as its task finishes."""
    local = count(files)
    assert items(count(files, executor=client, max_memory=200_000)) == items(local)
    parts = tmp_path / "parts"
    parts.mkdir()
    out = tmp_path / "out.counts"
    assert count_to_file(files, out, executor=client, resume_dir=parts) == (
        len(local),
        local.total,
    )
    assert items(Counts.load(out)) == items(local)


def test_a_bag_of_texts_counts_as_the_texts(client: Any) -> None:
    texts = [TEXT[i : i + 3000] for i in range(0, 60000, 2500)]
    bag = dask_bag.from_sequence(texts, npartitions=7)
    assert items(count(bag, executor=client)) == items(count(texts))


def test_a_bad_file_raises_on_the_client_as_locally(client: Any, files: list[Path]) -> None:
    bad = files[0].parent / "bad.txt"
    bad.write_bytes(b"fine text \xc3( more")
    data = [files[1], bad, files[2]]
    with pytest.raises(InvalidTextError) as local:
        count(data)
    with pytest.raises(InvalidTextError) as remote:
        count(data, executor=client)
    assert str(remote.value) == str(local.value)
    assert str(bad) in str(remote.value)
    assert remote.value.offset == local.value.offset == 10
    with pytest.raises(FileNotFoundError, match=r"missing\.txt"):
        count([files[0], files[0].parent / "missing.txt"], executor=client)


def test_the_count_command_counts_on_a_scheduler(
    client: Any, files: list[Path], tmp_path: Path
) -> None:
    address = client.scheduler.address
    names = [str(p) for p in files[:3]]
    assert main(["count", *names, "-o", str(tmp_path / "d.counts"), "--scheduler", address]) == 0
    assert main(["count", *names, "-o", str(tmp_path / "l.counts"), "-q"]) == 0
    assert (tmp_path / "d.counts").read_bytes() == (tmp_path / "l.counts").read_bytes()


@pytest.mark.skipif(not FULL, reason="starts its own cluster and kills a worker: CI budget")
def test_a_worker_killed_mid_job_changes_nothing(tmp_path: Path) -> None:
    # Files big enough that the job is still running when a worker dies.
    paths = []
    for i in range(6):
        path = tmp_path / f"big{i}.txt"
        path.write_text((TEXT[i * 1000 :] + f" part {i} ") * 3, encoding="utf-8")
        paths.append(path)
    local = count(paths)
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=50,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        pids = c.run(os.getpid)
        result: dict[str, Any] = {}

        def job() -> None:
            try:
                result["counts"] = count(paths, executor=c)
            except BaseException as exc:  # pragma: no cover - reported below
                result["error"] = exc

        thread = threading.Thread(target=job)
        thread.start()
        deadline = time.monotonic() + 60
        victim = None
        while victim is None and time.monotonic() < deadline and thread.is_alive():
            busy = [w for w, keys in c.processing().items() if keys and w in pids]
            victim = busy[0] if busy else None
            time.sleep(0.01)
        assert victim is not None, "the job ended before a worker could be killed"
        os.kill(pids[victim], signal.SIGKILL)
        killed_mid_job = thread.is_alive()
        thread.join(120)
        assert not thread.is_alive()
    assert killed_mid_job
    assert "error" not in result, result.get("error")
    assert items(result["counts"]) == items(local)
