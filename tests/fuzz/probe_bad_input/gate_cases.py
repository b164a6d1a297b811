# The probe passes wrong types on purpose, and builds its cases from lambdas:
# mypy: disable-error-code="arg-type,func-returns-value,misc,operator,unused-ignore"
"""The probe's Schedule Gate cases: bad constructor fields, actors and actor indices are refused naming
them; stop twice, from a handler or from another thread loses no accepted event."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from reference.results import Result
from reference.schedule_gate import GateScheduler
from tests.fuzz.probe_bad_input.sandbox import Case, Outcome
from tests.fuzz.probe_bad_input.verdicts import Ledger, raises, returns, stop_any


def gate_cases() -> list[Case]:
    cases: list[Case] = []
    gate_good = {"permits": 2, "workers": 1, "mailbox_capacity": 4, "max_per_drain": 2}
    for field in gate_good:
        for value in [True, 2.0, math.nan, math.inf, -1, 0, 2**70, None, "2", 10**9 + 0.5]:
            kwargs = {**gate_good, field: value}
            cases.append(
                (
                    f"ref.gate.init {field}={value!r}"[:70],
                    lambda k=kwargs, f=field: raises(
                        lambda: GateScheduler([lambda e: None], **k), f, cleanup=stop_any
                    ),
                )  # type: ignore[arg-type]
            )
    for label, actors in [
        ("[]", []),
        ("None", None),
        ("[5]", [5]),
        ("range(10**9)", range(10**9)),
        ("'ab'", "ab"),
    ]:
        cases.append(
            (
                f"ref.gate.init actors={label}",
                lambda a=actors: raises(lambda: GateScheduler(a, **gate_good), "actors", cleanup=stop_any),
            )
        )  # type: ignore[arg-type]

    def gate_ledger(**kw: object) -> tuple[GateScheduler[Any], Ledger]:
        ledger = Ledger()
        g = GateScheduler(
            [lambda e: ledger.invoke(None, e)] * 2, **{**gate_good, **kw}, on_discard=ledger.discard
        )  # type: ignore[arg-type]
        return g, ledger

    for label, actor in [
        ("True", True),
        ("-1", -1),
        ("2", 2),
        ("1.0", 1.0),
        ("None", None),
        ("2**70", 2**70),
    ]:

        def gate_post(a: object = actor) -> Outcome:
            g, ledger = gate_ledger()
            got = returns(lambda: g.post(a, "x"), Result.INVALID_ARGUMENT)  # type: ignore[arg-type]
            g.stop()
            return ("SILENTLY WRONG", "a refused event ran") if ledger.invoked else got

        cases.append((f"ref.gate.post({label})", gate_post))
        cases.append(
            (
                f"ref.gate.gate({label})",
                lambda a=actor: (lambda g: (raises(lambda: g[0].gate(a), "actor"), g[0].stop())[0])(
                    gate_ledger()
                ),
            )
        )

    def gate_accounting(
        body: Callable[[GateScheduler[Any], Ledger], Result], expect: Result = Result.SUCCESS, **kw: object
    ) -> Outcome:
        g, ledger = gate_ledger(**kw)
        result = body(g, ledger)
        extra = [item for _, item in g.failure.discarded] if g.failure is not None else None
        got = ledger.verdict(extra, f"(stop -> {result.name})")
        if got[0] == "right answer" and result is not expect:
            return "SILENTLY WRONG", f"stop returned {result.name}, expected {expect.name}"
        return got

    def gate_post_n(g: GateScheduler[Any], ledger: Ledger, n: int) -> None:
        for k in range(n):
            if g.post(k % 2, f"e{k}") is Result.SUCCESS:
                ledger.accepted.append(f"e{k}")

    cases.append(
        (
            "ref.gate post after stop",
            lambda: gate_accounting(lambda g, led: (g.stop(), gate_post_n(g, led, 3), g.stop())[2]),
        )
    )
    cases.append(
        (
            "ref.gate double stop",
            lambda: gate_accounting(lambda g, led: (gate_post_n(g, led, 6), g.stop(), g.stop())[2]),
        )
    )
    cases.append(
        (
            "ref.gate permits=1 rejected stays",
            lambda: gate_accounting(lambda g, led: (gate_post_n(g, led, 20), g.stop())[1], permits=1),
        )
    )

    def gate_reentrant(what: str) -> Outcome:
        ledger = Ledger()
        box: dict[str, Any] = {}
        seen: list[object] = []

        def handler(event: object) -> None:
            ledger.invoke(None, event)
            if what == "stop":
                seen.append(box["g"].stop())
            posting = what == "post" and isinstance(event, str) and event.startswith("e")
            if posting and box["g"].post(1, "re" + event) is Result.SUCCESS:
                with ledger.lock:
                    ledger.accepted.append("re" + event)
            if what == "raise":
                raise RuntimeError("handler")

        def on_error(actor: int, event: object, exc: BaseException) -> None:
            seen.append(box["g"].stop())
            raise ValueError("on_error raises")

        g = GateScheduler(
            [handler, handler],
            **{**gate_good, "mailbox_capacity": 16},
            on_error=on_error,
            on_discard=ledger.discard,
        )
        box["g"] = g
        gate_post_n(g, ledger, 6)
        result = g.stop()
        if what in ("stop", "raise") and any(x is not Result.INVALID_STATE for x in seen):
            return "SILENTLY WRONG", f"stop from a handler returned {seen}"
        return ledger.verdict(None, f"(stop -> {result.name})")

    for what in ("stop", "post", "raise"):
        cases.append((f"ref.gate re-entrant {what} from handler", lambda w=what: gate_reentrant(w)))

    def gate_concurrent() -> Outcome:
        g, ledger = gate_ledger(mailbox_capacity=1024, permits=2, workers=2)
        started = threading.Event()

        def producer() -> None:
            for k in range(20_000):
                started.set()
                if g.post(k % 2, k) is Result.SUCCESS:
                    ledger.accepted.append(k)

        t = threading.Thread(target=producer)
        t.start()
        started.wait()
        result = g.stop()
        t.join()
        return ledger.verdict(None, f"(stop -> {result.name})")

    cases.append(("ref.gate stop from another thread while posting", gate_concurrent))

    return cases
