"""A handler's profile samples are appended the same way on every store (in SQL on SQLite and
PostgreSQL, by the core's read-and-write in memory), and on PostgreSQL concurrent appends keep
every sample."""

from __future__ import annotations

import threading

import pytest

from reference.jobs.core import PROFILE_SAMPLES, StoreCore
from tests.jobs.conftest import STORE_KINDS, StoreMaker
from tests.jobs.helpers import Clock

NEW = [0.25, 1048576.0]


@pytest.mark.parametrize("kind", STORE_KINDS)
@pytest.mark.parametrize(
    "stored", [None, 0, 3, PROFILE_SAMPLES - 1, PROFILE_SAMPLES, PROFILE_SAMPLES + 1, 12]
)
def test_a_sample_is_appended_keeping_the_last_ones_on_every_store(
    kind: str, stored: int | None, store_maker: StoreMaker
) -> None:
    store = store_maker(kind, Clock(), None)
    before = None if stored is None else [[float(i), float(i * 10)] for i in range(stored)]

    def body() -> list[list[float]]:
        if before is not None:
            store._save_samples("h", before)
        store._add_sample("h", NEW, PROFILE_SAMPLES)
        return store._samples("h")

    after = store._run(body)
    expected = ([] if before is None else before) + [NEW]
    assert after == expected[-PROFILE_SAMPLES:]
    # and the same as the core's own read-modify-write gives on that store
    if before is not None:
        store._run(lambda: store._save_samples("k", before))
    store._run(lambda: StoreCore._add_sample(store, "k", NEW, PROFILE_SAMPLES))
    assert store._read(lambda: store._samples("k")) == after


@pytest.mark.timeout(60)
def test_concurrent_appends_on_postgresql_keep_every_sample(store_maker: StoreMaker) -> None:
    first = store_maker("postgresql", Clock(), None)
    from reference.jobs.pg_store import PgStore

    assert isinstance(first, PgStore)
    stores = [first] + [PgStore(first.dsn, process=f"s{i}") for i in range(3)]
    barrier = threading.Barrier(len(stores))

    def add(store: StoreCore, n: int) -> None:
        barrier.wait()
        for i in range(2):
            sample = [float(n), float(i)]
            store._run(lambda: store._add_sample("h", sample, 100))  # noqa: B023 (run at once)

    threads = [threading.Thread(target=add, args=(s, n)) for n, s in enumerate(stores)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    samples = first._read(lambda: first._samples("h"))
    for store in stores[1:]:
        store.close()
    assert sorted(map(tuple, samples)) == sorted((float(n), float(i)) for n in range(4) for i in range(2))
