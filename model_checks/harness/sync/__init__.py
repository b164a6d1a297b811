"""Thin controlled primitives: each method announces one operation to the scheduler and returns
its result. No decisions are taken here."""

from model_checks.harness.sync.primitives import (
    Atomic,
    AtomicReference,
    Condition,
    Event,
    Lock,
    Queue,
    Semaphore,
    ThreadHandle,
)

__all__ = ["Atomic", "AtomicReference", "Condition", "Event", "Lock", "Queue", "Semaphore", "ThreadHandle"]
