"""A worker that spins on an Event, drawing each turn, and gives up at a low draw (buggy at some
draw seeds): how many turns it spins is the schedule's, and each turn's draw is a later one. Alone
in its module: the state search's abstract state includes the module's globals."""

import random
import threading


def main() -> None:
    ev = threading.Event()
    bad = [False]

    def worker() -> None:
        while not ev.is_set():
            if random.random() < 0.25:
                bad[0] = True
                return

    t = threading.Thread(target=worker)
    t.start()
    ev.set()
    t.join()
    assert not bad[0]
