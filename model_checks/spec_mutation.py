"""Ways the designs' spec mutants are built from a correct spec, shared so that a mutant file shows
only its bug: the most common bug of all is one atomic step cut in two (check, then act)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from spec.language import Action, ActionResult, Spec, SpecError, variant

Step = Callable[..., ActionResult]


def split(
    base: Spec,
    name: str,
    action: str,
    first: Step,
    then: Step,
    *,
    first_event: str | None = None,
    then_event: str | None = None,
    drop: Sequence[str] = (),
) -> Spec:
    """``base`` with its atomic step ``action`` cut in two, the variant ``name``.

    ``first`` takes ``action``'s place and ``then`` is a new step that finishes it later, both
    for the same processes as ``action``. ``first`` logs ``first_event`` (none by default: it
    only looks); ``then`` logs ``then_event``, by default the event ``action`` logged. ``drop``:
    steps of ``base`` the cut makes impossible.
    """
    original = next((a for a in base.actions if a.name == action), None)
    if original is None:
        raise SpecError(f"variant {name}: {base.name} has no action {action}")
    domains = original.domains
    return variant(
        base,
        name,
        replace_actions={action: Action(first.__name__, first, domains, first_event)},
        add_actions=[Action(then.__name__, then, domains, then_event or original.event)],
        drop_actions=drop,
    )
