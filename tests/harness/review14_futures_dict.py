"""Review 14's p102 (C3), with type hints: a correct program whose dict is keyed by futures,
as_completed() results mapped back to their inputs."""

import time
from concurrent.futures import ThreadPoolExecutor, as_completed


def work(n: int) -> int:
    time.sleep(0.01 * (2 - n))
    return n * n


def main() -> None:
    with ThreadPoolExecutor(max_workers=2) as ex:
        futs = {ex.submit(work, n): n for n in range(2)}
        out = {}
        for f in as_completed(futs):
            out[futs[f]] = f.result()
    assert out == {0: 0, 1: 1}, out
