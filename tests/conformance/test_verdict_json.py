"""``Verdict.as_json``: what ``lanecheck validate --json`` prints of a verdict is read from its
fields, so a field added to ``Verdict`` cannot be left out of the JSON."""

from __future__ import annotations

from dataclasses import dataclass, fields

from model_checks.conformance.verdict import Verdict


def test_every_field_in_order_and_the_rule_in_words_after_its_number() -> None:
    verdict = Verdict(False, 1, "no behaviour allows it", seq=4, rule=2, events=5, design="work-lane")
    doc = verdict.as_json()
    names = [f.name for f in fields(Verdict)]
    after_rule = names.index("rule") + 1
    assert list(doc) == [*names[:after_rule], "rule_text", *names[after_rule:]]
    # what `validate --json` printed when the keys were written out by hand: unchanged
    assert list(doc) == [
        "allowed", "code", "message", "seq", "line", "rule", "rule_text", "prefix", "events",
        "pending", "last_states", "engine", "design",
    ]  # fmt: skip
    assert {name: doc[name] for name in names} == {name: getattr(verdict, name) for name in names}
    assert doc["rule_text"] == verdict.rule_text() is not None


def test_no_rule_no_words() -> None:
    assert Verdict(True, 0, "allowed").as_json()["rule_text"] is None


def test_a_field_added_reaches_the_json() -> None:
    @dataclass(frozen=True)
    class Wider(Verdict):
        extra: int = 7

    assert Wider(True, 0, "allowed").as_json()["extra"] == 7
