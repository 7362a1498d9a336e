"""Worker processes end with the process that started them, and Ctrl-C stops a comparison
with one line and no traceback.

Each test starts bpeds in a child process busy with worker processes, kills that child
(``SIGKILL`` or ``SIGTERM``) and checks that its workers are gone soon after, instead of
computing on, orphaned, for as long as their tasks take.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest

from tests.budget import FULL, matrix

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads the process tree from /proc"
)

# Each keeps its workers busy for minutes (they are killed long before).
WORKLOADS = {
    "train": """
        import bpeds
        texts = ("w%d " % i * 30000 for i in range(10_000))
        bpeds.train(texts, 400, workers=2, pattern=r"\\w+|\\W")
    """,
    "count": """
        import bpeds
        texts = ("w%d " % i * 30000 for i in range(10_000))
        bpeds.count(texts, workers=2, pattern=r"\\w+|\\W")
    """,
    "encode_batch": """
        import bpeds
        tok = bpeds.Tokenizer([(119, 49)], pattern=r"\\w+|\\W")
        tok.encode_batch(["w1 x " * 20000] * 4000, workers=2)
    """,
    "compare": """
        import bpeds
        big = ["w%d " % (i % 5000) * 50 for i in range(40_000)]
        bpeds.compare(
            [{"vocab_size": 5000}, {"vocab_size": 5001}],
            train=big, heldout=["w1 w2"], workers=2, processes=True, progress=False,
        )
    """,
}


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc."""
    out: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        out.setdefault(ppid, []).append(int(entry))
    return out


def _descendants(pid: int) -> list[int]:
    tree = _children()
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


def _start(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_for_workers(proc: subprocess.Popen[bytes], at_least: int) -> list[int]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        workers = _descendants(proc.pid)
        if len(workers) >= at_least:
            return workers
        time.sleep(0.1)
    raise AssertionError("the workers never started")


def _once_at_work(proc: subprocess.Popen[bytes], act: Callable[[list[int]], None]) -> str:
    """``act(workers)`` once ``proc`` has two workers; its stderr once it has ended (its
    process group is killed if it has not ended within two minutes)."""
    try:
        act(_wait_for_workers(proc, 2))
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return err.decode()


@pytest.mark.parametrize(
    ("workload", "sig"),
    matrix(
        list(WORKLOADS), [signal.SIGKILL, signal.SIGTERM], ids=[list(WORKLOADS), ["KILL", "TERM"]]
    ),
)
def test_workers_end_with_their_parent(workload: str, sig: signal.Signals) -> None:
    proc = _start(WORKLOADS[workload])
    workers = _wait_for_workers(proc, 2)
    try:
        time.sleep(0.5)  # the workers are at work
        workers = _descendants(proc.pid)
        os.kill(proc.pid, sig)
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [w for w in workers if _alive(w)]
        assert left == [], f"{workload}: workers {left} outlived their parent"
    finally:
        for w in workers:
            with contextlib.suppress(OSError):
                os.kill(w, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
        if proc.stderr:
            proc.stderr.close()


def test_ctrl_c_stops_a_comparison_in_one_line(tmp_path: Path) -> None:
    train = tmp_path / "train.txt"
    words = ("".join(chr(97 + int(d)) for d in str(i)) for i in range(300_000))
    train.write_text(" ".join(words), encoding="utf-8")  # 300,000 distinct words
    (tmp_path / "held.txt").write_text("w1 w2 w3", encoding="utf-8")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "bpeds", "compare", "--train", str(train), "--no-plots"),
            *("--heldout", str(tmp_path / "held.txt"), "-o", str(tmp_path / "out")),
            *("--config", "vocab_size=30000", "--config", "vocab_size=30001", "--workers", "2"),
        ],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # a process group, as a terminal's foreground job
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )

    def ctrl_c(workers: list[int]) -> None:
        time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole group

    text = _once_at_work(proc, ctrl_c)
    assert proc.returncode == 130, text
    assert "Traceback" not in text, text
    assert "KeyboardInterrupt" not in text, text
    assert text.strip().endswith("interrupted"), text


# -- workers that end before their work -----------------------------------------------------------


class KilledWorker(Exception):  # noqa: N818 - Dask's name, which bpeds knows it by
    """Stands for Dask's error of the same name."""


class _FailingExecutor(Executor):
    """Every task fails as a lost worker makes it fail."""

    def __init__(self, how: str) -> None:
        self.how = how

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        if self.how == "cancelled":
            future.cancel()
        else:
            future.set_exception(
                BrokenProcessPool("a process died")
                if self.how == "broken"
                else KilledWorker("count_file-1", "tcp://10.0.0.1:4000")
            )
        return future


@pytest.mark.parametrize("how", ["broken", "cancelled", "killed"])
def test_lost_workers_are_one_error_that_says_so(tmp_path: Path, how: str) -> None:
    from bpeds.processes import WorkersLostError
    from bpeds.tokenizer.counting import count, count_to_file

    path = tmp_path / "t.txt"
    path.write_text("some text", encoding="utf-8")
    runs: list[Callable[[], object]] = [
        lambda: count([path], executor=_FailingExecutor(how)),
        lambda: count_to_file([path], tmp_path / "c.counts", executor=_FailingExecutor(how)),
    ]
    for run in runs:
        with pytest.raises(WorkersLostError, match="the executor stopped before") as info:
            run()
        assert info.value.__cause__ is not None  # the executor's own error, kept
    assert not (tmp_path / "c.counts").exists()


def test_a_task_error_still_passes_unchanged(tmp_path: Path) -> None:
    import bpeds
    from bpeds.tokenizer.io import InvalidTextError

    path = tmp_path / "bad.txt"
    path.write_bytes(b"\xff")
    with ThreadPoolExecutor(1) as ex, pytest.raises(InvalidTextError):
        bpeds.count([path], executor=ex)


def test_a_killed_worker_ends_the_count_command_in_one_line(tmp_path: Path) -> None:
    text = tmp_path / "t.txt"
    text.write_text(" ".join(f"w{i}" for i in range(2_000_000)), encoding="utf-8")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "bpeds", "count", str(text)),
            *("-o", str(tmp_path / "c.counts"), "--workers", "2", "--pattern", r"\w+|\W", "-q"),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    text_err = _once_at_work(proc, lambda workers: os.kill(workers[0], signal.SIGKILL))
    assert proc.returncode == 1, text_err
    assert text_err.count("\n") == 1, text_err
    assert "stopped before the work was done" in text_err
    assert not (tmp_path / "c.counts").exists()


@pytest.mark.skipif(not FULL, reason="starts its own Dask cluster and kills its worker: CI budget")
@pytest.mark.parametrize("end", ["kill-worker", "close-cluster"])
def test_count_on_a_cluster_that_fails_ends_in_one_line(tmp_path: Path, end: str) -> None:
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    paths = []
    for i in range(4):
        path = tmp_path / f"f{i}.txt"
        path.write_text(" ".join(f"w{i}x{j}" for j in range(1_000_000)), encoding="utf-8")
        paths.append(str(path))
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=50,
        )
    try:
        with distributed.Client(cluster) as client:
            pids = list(client.run(os.getpid).values())
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "bpeds", "count", *paths),
                *("-o", str(tmp_path / "c.counts"), "--scheduler", cluster.scheduler_address),
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        time.sleep(3)  # the count has started (its client connects, tasks run)
        assert proc.poll() is None
        if end == "kill-worker":
            os.kill(pids[0], signal.SIGKILL)
        else:
            cluster.close()
        _, err = proc.communicate(timeout=120)
    finally:
        cluster.close()
    text = err.decode()
    assert proc.returncode == 1, text
    assert "Traceback" not in text, text
    assert text.count("\n") == 1, text
    assert not (tmp_path / "c.counts").exists()
