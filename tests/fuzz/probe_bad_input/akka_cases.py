# The probe passes wrong types on purpose, and builds its cases from lambdas:
# mypy: disable-error-code="arg-type,misc,unused-ignore,var-annotated"
"""The probe's Akka mailbox cases: bad dispatcher fields and spawns are refused naming them; tell,
shutdown and close from receive, raising callbacks and labels lose no message."""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any

from reference.akka_mailbox import Dispatcher, Mailbox, Send
from tests.fuzz.probe_bad_input.sandbox import Case, Outcome
from tests.fuzz.probe_bad_input.verdicts import Ledger, raises, stop_any


def akka_cases() -> list[Case]:
    cases: list[Case] = []
    value: object  # a wrong number first, then an option of a wrong kind
    for field, base in (("throughput", {"workers": 1}), ("workers", {"throughput": 2})):
        for value in [True, 2.0, math.nan, math.inf, -5, 0, 2**70, None, "2"]:
            kwargs = {**base, field: value}
            cases.append(
                (
                    f"ref.akka.Dispatcher {field}={value!r}"[:70],
                    lambda k=kwargs, f=field: raises(lambda: Dispatcher(**k), f, cleanup=stop_any),
                )
            )  # type: ignore[arg-type]
    for name, value in [
        ("runtime", object()),
        ("tracer", 5),
        ("on_error", 5),
        ("on_dead_letter", "x"),
        ("item_label", None),
        ("mailbox_factory", 3),
    ]:
        cases.append(
            (
                f"ref.akka.Dispatcher {name}={value!r}"[:70],
                lambda n=name, v=value: raises(lambda: Dispatcher(2, 1, **{n: v}), n, cleanup=stop_any),
            )
        )  # type: ignore[arg-type]

    def akka_ledger(**kw: object) -> tuple[Dispatcher, Ledger]:
        ledger = Ledger()
        d = Dispatcher(2, 1, on_dead_letter=ledger.discard, **kw)  # type: ignore[arg-type]
        return d, ledger

    def akka_verdict(d: Dispatcher, ledger: Ledger, note: str = "") -> Outcome:
        report = d.shutdown() if not getattr(d, "_shut_down", False) else None
        dead = [m for msgs in d.dead_letters.values() for m in msgs]
        # on_dead_letter and the report list the same messages: count each once
        ledger.discarded = list((Counter(ledger.discarded) | Counter(dead)).elements())
        return ledger.verdict(None, f"{note} report={report and report.ok}")

    cases.append(
        (
            "ref.akka spawn(5)",
            lambda: (lambda d: (raises(lambda: d[0].spawn(5), "receive"), d[0].shutdown())[0])(akka_ledger()),
        )
    )  # type: ignore[arg-type]
    cases.append(
        (
            "ref.akka spawn(f, name=5)",
            lambda: (lambda d: (raises(lambda: d[0].spawn(print, name=5), "name"), d[0].shutdown())[0])(
                akka_ledger()
            ),
        )
    )  # type: ignore[arg-type]
    cases.append(
        (
            "ref.akka spawn after shutdown",
            lambda: (
                lambda d: (d[0].shutdown(), raises(lambda: d[0].spawn(print), "shut down", (RuntimeError,)))[
                    1
                ]
            )(akka_ledger()),
        )
    )
    cases.append(
        (
            "ref.akka shutdown twice",
            lambda: (lambda d: (d[0].shutdown(), raises(d[0].shutdown, "twice", (RuntimeError,)))[1])(
                akka_ledger()
            ),
        )
    )

    def akka_tell_after_shutdown() -> Outcome:
        d, ledger = akka_ledger()
        ref = d.spawn(lambda m: ledger.invoke(None, m))
        d.shutdown()
        sent = ref.tell("late")
        if sent is Send.ACCEPTED if hasattr(Send, "ACCEPTED") else False:
            ledger.accepted.append("late")
        ledger.accepted.append("late")  # a tell is never refused: it runs or is a dead letter
        dead = [m for msgs in d.dead_letters.values() for m in msgs]
        ledger.discarded = list((Counter(ledger.discarded) | Counter(dead)).elements())
        return ledger.verdict(None, f"tell -> {sent}")

    cases.append(("ref.akka tell after shutdown", akka_tell_after_shutdown))

    def akka_reentrant(what: str) -> Outcome:
        d, ledger = akka_ledger(
            on_error=lambda name, msg, exc: (
                (_ for _ in ()).throw(ValueError("on_error")) if what == "raise" else None
            )
        )
        box: dict[str, Any] = {}

        def receive(msg: object) -> None:
            ledger.invoke(None, msg)
            if what == "tell" and isinstance(msg, str) and msg.startswith("m"):
                box["ref"].tell("re" + msg)
                with ledger.lock:
                    ledger.accepted.append("re" + msg)
            if what == "raise":
                raise RuntimeError("receive")
            if what == "close":
                box["ref"].close()

        box["ref"] = ref = d.spawn(receive)
        for k in range(5):
            ref.tell(f"m{k}")
            ledger.accepted.append(f"m{k}")
        return akka_verdict(d, ledger)

    for what in ("tell", "raise", "close"):
        cases.append((f"ref.akka re-entrant {what} from receive", lambda w=what: akka_reentrant(w)))

    def akka_shutdown_from_receive() -> Outcome:
        d, ledger = akka_ledger()
        seen: list[object] = []

        def receive(msg: object) -> None:
            ledger.invoke(None, msg)
            try:
                seen.append(d.shutdown())
            except RuntimeError as exc:
                seen.append(exc)

        ref = d.spawn(receive)
        ref.tell("m")
        ledger.accepted.append("m")
        time.sleep(0.2)
        if not seen or not isinstance(seen[0], RuntimeError):
            return "SILENTLY WRONG", f"shutdown from receive returned {seen}"
        return akka_verdict(d, ledger)

    cases.append(("ref.akka shutdown from receive", akka_shutdown_from_receive))

    def akka_label_raises() -> Outcome:
        from reference.tracing import RecordingTracer as ListTracer

        def label(m: object) -> object:
            raise KeyError("label")

        d, ledger = akka_ledger(tracer=ListTracer(), item_label=label)
        ref = d.spawn(lambda m: ledger.invoke(None, m))
        for k in range(3):
            try:
                ref.tell(f"m{k}")
            except KeyError:
                continue  # the label raised before the message was queued: it stays with us
            ledger.accepted.append(f"m{k}")
        return akka_verdict(d, ledger)

    cases.append(("ref.akka item_label raises", akka_label_raises))

    def mailbox_direct() -> Outcome:
        d, _ = akka_ledger()
        return raises(
            lambda: Mailbox(d, "x", "n", print), None, (TypeError, ValueError), cleanup=lambda _: None
        )  # type: ignore[arg-type]

    cases.append(
        (
            "ref.akka Mailbox(index='x')",
            lambda: (
                lambda out: (
                    out if out[0] != "SILENTLY WRONG" else ("right answer", "internal class: not checked")
                )
            )(mailbox_direct()),
        )
    )
    return cases
