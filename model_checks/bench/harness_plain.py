"""A plain-``threading`` program for the harness-vs-frontrun comparison (no lanecheck imports)."""

from __future__ import annotations

import threading


class Account:
    """Two deposits under one lock: correct, so both tools must explore every interleaving."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.balance = 0

    def deposit(self, amount: int) -> None:
        with self.lock:
            current = self.balance
            self.balance = current + amount


def run_deposits(account: Account, threads: int = 2) -> None:
    workers = [threading.Thread(target=account.deposit, args=(1,)) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
