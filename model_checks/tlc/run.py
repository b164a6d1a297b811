"""Run TLC on a generated model of the TLA+ twin and read its ``-tool`` output.

TLC's ``-tool`` mode frames every message as ``@!@!@STARTMSG code:severity @!@!@``
... ``@!@!@ENDMSG code @!@!@``; the codes read here are TLC's ``EC`` constants.
The child is reaped with ``os.wait4`` so its own peak RSS and CPU time are known.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from model_checks.tlc import jar
from model_checks.tlc.twin import Model, TlaTwin

HOLDS, VIOLATED = "holds", "violated"

# TLC's message codes (tlc2.output.EC).
INVARIANT_VIOLATED_INITIAL = 2107
INVARIANT_VIOLATED_BEHAVIOR = 2110
DEADLOCK_REACHED = 2114
TEMPORAL_PROPERTY_VIOLATED = 2116
STATE_PRINT = 2217
BEHAVIOR_UP_TO_THIS_POINT = 2121
BACK_TO_STATE = 2122
STUTTERING = 2218
STATS = 2199
DEPTH = 2194
FINISHED = 2186
SEVERITY_ERROR = 1
VIOLATIONS = {
    INVARIANT_VIOLATED_INITIAL,
    INVARIANT_VIOLATED_BEHAVIOR,
    DEADLOCK_REACHED,
    TEMPORAL_PROPERTY_VIOLATED,
    BEHAVIOR_UP_TO_THIS_POINT,
}

_MESSAGE = re.compile(r"@!@!@STARTMSG (\d+):(\d+) @!@!@\n(.*?)@!@!@ENDMSG \1 @!@!@", re.S)
_STATS = re.compile(
    r"([\d,]+) states? generated, ([\d,]+) distinct states? found, ([\d,]+) states? left on queue"
)
_DEPTH = re.compile(r"depth of the complete state graph search is (\d+)")
_INVARIANT = re.compile(r"Invariant (\w+) is violated")
_FINISHED = re.compile(r"Finished in (\d+)ms")


class TlcError(RuntimeError):
    """TLC could not check the model (a parse, semantic or configuration error): not a verdict."""


@dataclass
class TlcResult:
    """What one TLC run found, in the explorer's terms."""

    model: str
    cfg: str
    workers: int
    verdict: str  # holds | violated
    violated: str | None  # an invariant's name, "Deadlock", or a property's name
    states_generated: int
    distinct_states: int
    depth: int  # as the explorer counts it: the initial states are at depth 0
    trace_length: int | None  # steps in the counterexample (a lasso counts its step back)
    trace_loops: bool  # the counterexample is a lasso (back to a state, or stuttering)
    seconds: float  # wall time, JVM start-up included
    tlc_seconds: float  # TLC's own "Finished in"
    cpu_seconds: float  # user + system time of the JVM
    max_rss_bytes: int  # the JVM's peak resident set
    output: str = field(repr=False, default="")

    @property
    def distinct_states_per_second(self) -> float:
        return self.distinct_states / self.seconds if self.seconds > 0 else float(self.distinct_states)


@dataclass
class Transcript:
    """The facts of a ``-tool`` transcript."""

    verdict: str = HOLDS
    violated: str | None = None
    generated: int | None = None
    distinct: int | None = None
    depth: int = 1  # TLC's count: the initial states are at depth 1
    trace_states: int = 0
    back_to_state: bool = False
    stuttering: bool = False
    tlc_ms: int = 0
    errors: list[str] = field(default_factory=list)


def parse(output: str) -> Transcript:
    """Read TLC's messages: verdict, violated name, counts, depth, the trace's shape."""
    facts = Transcript()
    for code_text, severity_text, body in _MESSAGE.findall(output):
        code, severity = int(code_text), int(severity_text)
        if code in (INVARIANT_VIOLATED_INITIAL, INVARIANT_VIOLATED_BEHAVIOR):
            match = _INVARIANT.search(body)
            facts.verdict, facts.violated = VIOLATED, match.group(1) if match else "invariant"
        elif code == DEADLOCK_REACHED:
            facts.verdict, facts.violated = VIOLATED, "Deadlock"
        elif code == TEMPORAL_PROPERTY_VIOLATED:
            facts.verdict, facts.violated = VIOLATED, "temporal properties"
        elif code == STATE_PRINT:
            facts.trace_states += 1
        elif code == BACK_TO_STATE:
            facts.back_to_state = True
        elif code == STUTTERING:
            facts.stuttering = True
        elif code == STATS and (match := _STATS.search(body)):
            facts.generated = int(match.group(1).replace(",", ""))
            facts.distinct = int(match.group(2).replace(",", ""))
        elif code == DEPTH and (match := _DEPTH.search(body)):
            facts.depth = int(match.group(1))
        elif code == FINISHED and (match := _FINISHED.search(body)):
            facts.tlc_ms = int(match.group(1))
        elif severity == SEVERITY_ERROR and code not in VIOLATIONS:
            facts.errors.append(f"TLC error {code}: {body.strip()}")
    return facts


def _java_command(workers: int, scratch: Path, cfg: str, module: str, heap: str | None) -> list[str]:
    """TLC on ``module`` in ``scratch``: its states under ``scratch/states`` and the JVM's
    temporary files under ``scratch/tmp``, so that two TLCs run at once (the test suite's
    workers do) share no directory. (One such run once failed to parse its model, "Module-Table
    lookup failure", in session 20's CI, and passed when run again; the cause is not known, and a
    shared temporary directory is the one thing two runs still had in common.)"""
    java, tools = jar.find_java(), jar.find_jar()
    if java is None or tools is None:
        raise TlcError(jar.unavailable() or "TLC is not available")
    tmp = scratch / "tmp"
    tmp.mkdir(exist_ok=True)
    metadir = scratch / "states"
    command = [java, "-XX:+UseParallelGC", f"-Djava.io.tmpdir={tmp}"]
    if heap is not None:
        command.append(f"-Xmx{heap}")
    command += ["-cp", str(tools), "tlc2.TLC", "-tool", "-workers", str(workers)]
    command += ["-metadir", str(metadir), "-config", cfg, f"{module}.tla"]
    return command


def run_model(
    twin: TlaTwin,
    model: Model,
    cfg: str,
    *,
    workers: int = 1,
    deadlock: bool = True,
    heap: str | None = None,
    timeout: float | None = None,
) -> TlcResult:
    """Run TLC on ``model`` with its configuration file ``cfg``, in a scratch directory."""
    with tempfile.TemporaryDirectory(prefix="lanecheck-tlc-") as scratch:
        directory = Path(scratch)
        for module in twin.modules:
            shutil.copy(twin.directory / module, directory / module)
        model.write(directory)
        command = _java_command(workers, directory, cfg, model.name, heap)
        if not deadlock:
            command.insert(command.index("-tool"), "-deadlock")  # TLC's flag *disables* the check
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        # Read to EOF, then reap the child with wait4 (not Popen.wait) to get its own rusage.
        timer = threading.Timer(timeout, process.kill) if timeout is not None else None
        if timer is not None:
            timer.start()
        try:
            assert process.stdout is not None
            output = process.stdout.read()
            process.stdout.close()
            _, status, usage = os.wait4(process.pid, 0)
            process.returncode = os.waitstatus_to_exitcode(status)
        finally:
            if timer is not None:
                timer.cancel()
        if timeout is not None and process.returncode < 0:
            raise TlcError(f"TLC did not finish {model.name} within {timeout:g}s")
        seconds = time.perf_counter() - started
    facts = parse(output)
    if facts.errors or facts.generated is None or facts.distinct is None:
        problems = facts.errors or [output[-2000:]]
        raise TlcError(f"TLC could not check {model.name} ({cfg}):\n" + "\n".join(problems))
    trace = facts.trace_states
    return TlcResult(
        model=model.name,
        cfg=cfg,
        workers=workers,
        verdict=facts.verdict,
        violated=facts.violated,
        states_generated=facts.generated,
        distinct_states=facts.distinct,
        depth=max(facts.depth - 1, 0),
        trace_length=(trace - 1 + (1 if facts.back_to_state else 0)) if trace else None,
        trace_loops=facts.back_to_state or facts.stuttering,
        seconds=seconds,
        tlc_seconds=facts.tlc_ms / 1000,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        max_rss_bytes=usage.ru_maxrss * 1024,
        output=output,
    )


def run(
    twin: TlaTwin,
    config: str,
    variant: str | None = None,
    *,
    symmetry: bool = False,
    liveness: bool = True,
    deadlock: bool = True,
    workers: int = 1,
    constants: Any = None,
    name_property: bool = True,
    heap: str | None = None,
    timeout: float | None = None,
) -> TlcResult:
    """Check ``twin``'s model of ``config`` (and ``variant``) with TLC, as the explorer would.

    With symmetry TLC checks no liveness (it refuses to). When a liveness check
    fails and several properties were checked, TLC does not say which one: with
    ``name_property`` each is rechecked alone to name it.
    """
    properties: list[str] | None = None if liveness else []
    model = twin.build(config, variant, constants, properties=properties)
    cfg = f"{model.name}_symmetry.cfg" if symmetry else f"{model.name}.cfg"
    result = run_model(twin, model, cfg, workers=workers, deadlock=deadlock, heap=heap, timeout=timeout)
    if result.violated == "temporal properties" and name_property:
        names = [p.name for p in twin.spec_of(variant)[0].properties]
        for name in names:
            alone = twin.build(config, variant, constants, properties=[name])
            single = run_model(
                twin, alone, f"{alone.name}.cfg", workers=workers, deadlock=deadlock, heap=heap
            )
            if single.verdict == VIOLATED:
                result.violated = name
                break
    return result
