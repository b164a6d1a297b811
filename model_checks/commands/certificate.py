"""`lanecheck certificate check FILE`: does the code still match a certificate of `lanecheck verify`?"""

from __future__ import annotations

import json
import secrets
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from model_checks.commands import CommandError

MAX_SAMPLE = 10_000
MAX_SEED = 2**32 - 1


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Check a certificate of `lanecheck verify` against the code, re-running a sample of its rows.",
        no_args_is_help=True,
    )
    app.add_typer(group, name="certificate")

    @group.command("check")
    def check_command(
        file: Annotated[
            Path, typer.Argument(dir_okay=False, help="a file written by `verify --certificate`")
        ],
        sample: Annotated[
            int, typer.Option(min=0, max=MAX_SAMPLE, help="rows to run again and compare (0..10000)")
        ] = 3,
        seed: Annotated[
            int | None,
            typer.Option(min=0, max=MAX_SEED, help="picks the sample (0..2^32-1; default: random, shown)"),
        ] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the findings as JSON")] = False,
    ) -> None:
        """Check a certificate of `lanecheck verify` against the code, re-running a sample of its rows.

        Exit 0: every unit's code matches and every sampled row got its recorded verdict again;
        1: some file changed (named) or a verdict differs; 2: the file is not a certificate.
        """
        from model_checks.certificate import audit, document

        try:
            doc = document.read(file)
        except FileNotFoundError:
            raise CommandError(f"{file}: no such file", "FILE") from None
        except ValueError as problem:
            raise CommandError(str(problem), "FILE") from None
        used_seed = seed if seed is not None else secrets.randbelow(MAX_SEED + 1)
        findings = audit.compare(doc)
        notes = audit.tool_differences(doc)
        picks = audit.sample(doc, sample, used_seed)
        out = (lambda line: None) if json_out else (lambda line: sys.stdout.write(line + "\n"))
        out(f"certificate {file}: written {doc['created']}, {len(findings)} units, "
            f"{sum(f.rows for f in findings)} rows")  # fmt: skip
        for f in findings:
            if f.changed:
                out(f"CHANGED {f.key}: " + "; ".join(f.changed[:5]) + (" ..." if len(f.changed) > 5 else ""))
        matching = [f for f in findings if not f.changed]
        out(f"{len(matching)} of {len(findings)} units: code matches")
        for note in notes:
            out(f"note: tools differ: {note}")
        out(f"re-running {len(picks)} sampled rows (seed {used_seed}) ...")
        reruns = audit.rerun(doc, picks)
        for r in reruns:
            verdict = "same" if r.same else "DIFFERS"
            out(f"{verdict}: {r.subject}: certificate {r.recorded}, now {r.now or 'no such row'}")
        changed = [f for f in findings if f.changed]
        differ = [r for r in reruns if not r.same]
        if json_out:
            result: dict[str, Any] = {
                "ok": not changed and not differ,
                "seed": used_seed,
                "units": [{"key": f.key, "rows": f.rows, "changed": f.changed} for f in findings],
                "tools_differ": notes,
                "sample": [
                    {"subject": r.subject, "certificate": r.recorded, "now": r.now, "same": r.same}
                    for r in reruns
                ],
            }
            sys.stdout.write(json.dumps(result, indent=2) + "\n")
        else:
            if changed:
                out(f"{len(changed)} units' code changed since the certificate")
            if differ:
                out(f"{len(differ)} sampled rows got a verdict other than the certificate's")
            if not changed and not differ:
                out("the certificate holds: code unchanged, sampled verdicts confirmed")
        raise typer.Exit(1 if changed or differ else 0)
