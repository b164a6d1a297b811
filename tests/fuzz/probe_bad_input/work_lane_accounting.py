# The probe passes wrong types on purpose, and builds its cases from lambdas:
# mypy: disable-error-code="arg-type,misc,unused-ignore"
"""The probe's Work Lane accounting cases: stop twice or from another thread, callbacks that re-enter
or raise, a raising tracer, label or drain; after each, every accepted item is run or reported."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from reference.results import Result
from reference.scheduler import LaneSpec, StopMode, WorkerScheduler
from tests.fuzz.probe_bad_input.sandbox import Case, Outcome
from tests.fuzz.probe_bad_input.verdicts import Ledger, raises, returns
from tests.fuzz.probe_bad_input.work_lane_arguments import GOOD, NOTHING, sched


def work_lane_accounting_cases() -> list[Case]:
    cases: list[Case] = []

    def accounting(
        body: Callable[[Ledger], tuple[WorkerScheduler[Any], Result]], expect: Result | None = None
    ) -> Outcome:
        ledger = Ledger()
        s, result = body(ledger)
        failure = s.failure
        extra = [item for _, item in failure.discarded] if failure is not None else None
        got = ledger.verdict(extra, f"(stop -> {result.name})")
        if got[0] == "right answer" and expect is not None and result is not expect:
            return "SILENTLY WRONG", f"stop returned {result.name}, expected {expect.name}"
        return got

    def post_n(s: WorkerScheduler[Any], ledger: Ledger, n: int, lane: int = 0, tag: str = "i") -> None:
        _, h = s.get_lane(lane)
        for k in range(n):
            if s.try_post(h, f"{tag}{k}") is Result.SUCCESS:
                ledger.accepted.append(f"{tag}{k}")

    def post_after_stop(ledger: Ledger) -> tuple[WorkerScheduler[Any], Result]:
        s = sched(ledger)
        _, h = s.get_lane(0)
        s.stop()
        if s.try_post(h, "late") is Result.SUCCESS:
            ledger.accepted.append("late")
        return s, s.stop()

    cases.append(("ref.ws post after stop", lambda: accounting(post_after_stop, Result.SUCCESS)))
    cases.append(
        (
            "ref.ws get_lane after stop",
            lambda: returns(
                lambda: (lambda s: (s.stop(), s.get_lane(0)[0])[1])(sched(Ledger())), Result.INVALID_STATE
            ),
        )
    )

    def double_stop(
        mode1: StopMode, mode2: StopMode
    ) -> Callable[[Ledger], tuple[WorkerScheduler[Any], Result]]:
        def body(ledger: Ledger) -> tuple[WorkerScheduler[Any], Result]:
            s = sched(ledger)
            post_n(s, ledger, 4)
            s.stop(mode1)
            return s, s.stop(mode2)

        return body

    cases.append(
        (
            "ref.ws double stop drain",
            lambda: accounting(double_stop(StopMode.DRAIN, StopMode.DRAIN), Result.SUCCESS),
        )
    )
    cases.append(
        (
            "ref.ws stop discard then drain",
            lambda: accounting(double_stop(StopMode.DISCARD, StopMode.DRAIN), Result.SUCCESS),
        )
    )

    def reentrant(what: str) -> Callable[[Ledger], tuple[WorkerScheduler[Any], Result]]:
        def body(ledger: Ledger) -> tuple[WorkerScheduler[Any], Result]:
            box: dict[str, Any] = {}
            seen: list[object] = []

            def invoke(_ctx: object, item: object) -> None:
                ledger.invoke(_ctx, item)
                s2 = box["s"]
                if what == "stop" and item == "i0":
                    seen.append(s2.stop())
                    seen.append(s2.stop(StopMode.DISCARD))
                if what == "post" and isinstance(item, str) and item.startswith("i"):
                    _, h = s2.get_lane(1)
                    if s2.try_post(h, "re" + item) is Result.SUCCESS:
                        with ledger.lock:
                            ledger.accepted.append("re" + item)
                if what == "raise":
                    raise RuntimeError("boom")

            def on_error(lane: int, item: object, exc: BaseException) -> None:
                seen.append(("error", item))
                if what == "raise":
                    seen.append(box["s"].stop())
                    raise ValueError("on_error raises too")

            def on_discard(lane: int, item: object) -> None:
                ledger.discard(lane, item)
                if what == "discard-reenter":
                    seen.append(box["s"].stop())
                    _, h = box["s"].get_lane(0)
                    seen.append(box["s"].try_post(h, "from-discard"))
                    raise RuntimeError("on_discard raises")

            s = WorkerScheduler(
                [LaneSpec(invoke), LaneSpec(invoke)],
                **{**GOOD, "lane_capacity": 8},
                on_error=on_error,
                on_discard=on_discard,  # type: ignore[arg-type]
            )
            box["s"] = s
            post_n(s, ledger, 6)
            result = s.stop(StopMode.DISCARD if what == "discard-reenter" else StopMode.DRAIN)
            if what == "stop" and seen[:2] != [Result.INVALID_STATE, Result.INVALID_STATE]:
                raise AssertionError(f"stop from invoke returned {seen}")
            if what == "raise" and sum(1 for x in seen if isinstance(x, tuple)) != len(ledger.accepted):
                raise AssertionError(f"on_error not called for every raising invoke: {seen}")
            return s, result

        return body

    for what in ("stop", "post", "raise", "discard-reenter"):
        cases.append(
            (
                f"ref.ws re-entrant {what} from callback",
                lambda w=what: accounting(reentrant(w), Result.SUCCESS),
            )
        )

    def raising_tracer(where: str) -> Callable[[Ledger], tuple[WorkerScheduler[Any], Result]]:
        def body(ledger: Ledger) -> tuple[WorkerScheduler[Any], Result]:
            class Tracer:
                def begin(self, config: object) -> None:
                    if where == "begin":
                        raise RuntimeError("tracer.begin")

                def emit(self, thread: str, event: str, fields: object) -> None:
                    if event == where:
                        raise RuntimeError(f"tracer.emit {event}")

            s = sched(ledger, tracer=Tracer(), lane_capacity=8)
            for k in range(6):
                _, h = s.get_lane(k % 2)
                try:
                    if s.try_post(h, f"i{k}") is Result.SUCCESS:
                        ledger.accepted.append(f"i{k}")
                except RuntimeError:
                    # the post raised after (maybe) accepting: stop reports it if it was accepted
                    ledger.accepted.append(f"i{k}")
                    ledger.invoked.append(f"i{k}") if False else None
            return s, s.stop()

        return body

    for where in ("post", "take", "invoke", "drain_end", "submit"):

        def tracer_case(w: str = where) -> Outcome:
            ledger = Ledger()
            s, result = raising_tracer(w)(ledger)
            failure = s.failure
            extra = [item for _, item in failure.discarded] if failure is not None else []
            # an item whose post raised may or may not have been accepted: it must not be both
            done = (
                Counter(ledger.invoked)
                + Counter(ledger.discarded)
                + Counter(i for i in extra if i not in ledger.discarded)
            )
            maybe = [i for i in ledger.accepted if done[i] == 0]
            if maybe and result is not Result.UNKNOWN:
                return "LOST ITEM", f"{maybe} neither run nor reported, stop -> {result.name}"
            if s.failed and result is not Result.UNKNOWN:
                return "SILENTLY WRONG", f"failed scheduler's stop returned {result.name}"
            return (
                "right answer",
                f"stop -> {result.name}, failed={s.failed},"
                f" {len(ledger.invoked)} invoked, {len(extra)} reported",
            )

        cases.append((f"ref.ws tracer raises on {where}", tracer_case))
    cases.append(
        (
            "ref.ws tracer raises on begin",
            lambda: raises(lambda: raising_tracer("begin")(Ledger()), None, (RuntimeError,)),
        )
    )

    def raising_label(ledger: Ledger) -> tuple[WorkerScheduler[Any], Result]:
        from reference.tracing import RecordingTracer as ListTracer

        def label(item: object) -> object:
            raise KeyError("label")

        s = sched(ledger, tracer=ListTracer(), item_label=label)
        try:
            post_n(s, ledger, 3)
        except KeyError:
            ledger.accepted.append("i0")
        return s, s.stop()

    cases.append(("ref.ws item_label raises", lambda: accounting(raising_label)))

    def broken_drain(ledger: Ledger) -> tuple[WorkerScheduler[Any], Result]:
        from reference.work_lane import WorkLane

        class Broken(WorkLane[Any]):
            def drain(self) -> bool:
                raise RuntimeError("our own bug")

        s = sched(ledger, lane_factory=Broken)
        post_n(s, ledger, 4)
        time.sleep(0.05)
        return s, s.stop()

    cases.append(("ref.ws own code raises in drain", lambda: accounting(broken_drain, Result.UNKNOWN)))

    def concurrent_stop(ledger: Ledger) -> tuple[WorkerScheduler[Any], Result]:
        s = sched(ledger, lane_capacity=1024, workers=2)
        _, h = s.get_lane(0)
        started = threading.Event()

        def producer() -> None:
            for k in range(20_000):
                started.set()
                if s.try_post(h, k) is Result.SUCCESS:
                    ledger.accepted.append(k)

        t = threading.Thread(target=producer)
        t.start()
        started.wait()
        result = s.stop(StopMode.DISCARD)
        t.join()
        return s, result

    cases.append(
        ("ref.ws stop from another thread while posting", lambda: accounting(concurrent_stop, Result.SUCCESS))
    )
    # 1024 threads may not fit the probe's 1 GB: a clear RuntimeError (no thread left behind) is fine
    cases.append(
        (
            "ref.ws workers=1024 threads",
            lambda: (lambda out: ("named error", out[1]) if "can't start new thread" in out[1] else out)(
                returns(
                    lambda: WorkerScheduler([LaneSpec(NOTHING)], **{**GOOD, "workers": 1024}).stop(),
                    Result.SUCCESS,
                    "right answer",
                )
            ),
        )
    )

    return cases
