"""The trace formats of the designs other than work-lane, by the header's ``design``."""

from __future__ import annotations

from model_checks.conformance import akka_mailbox, schedule_gate
from model_checks.conformance.streamed import DesignFormat

DESIGN_FORMATS: dict[str, DesignFormat] = {
    schedule_gate.FORMAT.design: schedule_gate.FORMAT,
    akka_mailbox.FORMAT.design: akka_mailbox.FORMAT,
}
