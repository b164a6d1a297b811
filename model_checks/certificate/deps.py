"""Which code a unit of `lanecheck verify` depends on, and the sha256 of each of those files.

A unit depends on the modules it runs: the closure, over the import graph of lanecheck's packages
(``spec``, ``reference``, ``model_checks``) and of the designs' packages, of

* ``model_checks.verify`` (which runs every unit), the registry, and the unit's provider;
* the design it covers: the module defining its ``Design`` and every module the ``Design`` names
  for the parts verify uses (``"spec.work_lane:SPEC"``, its configurations, mutants, scenarios,
  providers, trace format; a value given as an object counts by the module that holds it), and
  its ``reference_modules``;
* what importing every other registered design's defining module runs (the registry imports
  them all): its module-level imports, transitively, not what they import in functions;
* the packages above each module reached (their ``__init__`` runs first).

An edge of the graph is an ``import`` anywhere in a module (in functions too: grimp reads them),
or a string constant written as a module name (``"model_checks.harness.rt.scheduler"``: how the
harness core and plug-ins name modules they import by name), read by pattern, so that a name in a
comment counts too: a file too many costs a re-run, a file too few would let a stale verdict be
reused. The strings of ``model_checks.verify`` are not followed: they name every provider, and a
unit runs its own only. Data files (a trace schema) count when they lie beside a module reached,
or in a folder below it without Python modules.

Compiled extension modules (``*.so``, the mypyc harness core) and byte code are not hashed: they are
built from the hashed sources, and which harness core ran is recorded with the tool versions.
Third-party code is not hashed either: its versions are recorded (``environment.tools``).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from model_checks.verify import Unit

# lanecheck's own top-level packages (pyproject's packages.find); designs' packages are added.
OWN_TOPS = ("model_checks", "spec", "reference")
# Modules every unit runs through, whatever its provider.
ALWAYS = ("model_checks.verify", "model_checks.registry")
# Modules whose module-name strings are not followed (see the docstring).
STRINGS_NOT_FOLLOWED = frozenset({"model_checks.verify"})
# Design fields only other commands use (`lanecheck bench`, the command line, the review site):
# no verify provider reads them, so what they name is not run by a unit.
NOT_RUN_BY_VERIFY = frozenset({"benches", "commands", "report_pages", "summary"})
# Files that are not source: byte code, compiled extensions, editor and OS litter.
SKIPPED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd", ".dll", ".dylib")
SKIPPED_DIRS = ("__pycache__",)
# "a.b" or "a.b:attr": a string that may name a module (a one-word string never does).
MODULE_STRING = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?::[A-Za-z_][\w.]*)?|[A-Za-z_]\w*:[A-Za-z_][\w.]*"
)
QUOTED = re.compile(r"[\"'](?P<string>[A-Za-z_][\w.]*(?::[A-Za-z_][\w.]*)?)[\"']")


@dataclass(frozen=True)
class Dependencies:
    """The files a unit depends on (keys relative to their import root) and their sha256."""

    files: dict[str, str]
    # False when the unit's design could not be traced to a module: its verdict is never reused.
    complete: bool = True
    problems: list[str] = field(default_factory=list)


@cache
def root_of(top: str) -> Path | None:
    """The directory a top-level package is imported from (found without importing it)."""
    spec = importlib.util.find_spec(top)
    if spec is None or spec.origin is None:
        return None
    origin = Path(spec.origin)
    return origin.parent.parent if origin.name == "__init__.py" else origin.parent


def sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(path, stat.st_mtime_ns, stat.st_size)


@cache
def _sha256(path: Path, mtime_ns: int, size: int) -> str:  # keyed by the file's stat: an edit is seen
    return hashlib.sha256(path.read_bytes()).hexdigest()


def key_of(path: Path, top: str) -> str:
    root = root_of(top)
    assert root is not None
    return path.relative_to(root).as_posix()


@cache
def path_of(name: str) -> Path | None:
    """The source file of module ``name`` (a package's ``__init__.py``), or None."""
    root = root_of(name.split(".", 1)[0])
    if root is None or not all(piece.isidentifier() for piece in name.split(".")):
        return None
    base = root.joinpath(*name.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


class Graph:
    """What each module of some top-level packages imports or names, read once (``graph``)."""

    def __init__(self, tops: Iterable[str]) -> None:
        try:
            from grimp import build_graph
        except ImportError:  # not installed: each module is parsed here instead (slower, same edges)
            build_graph = None  # type: ignore[assignment]
        self.tops = frozenset(t for t in tops if path_of(t) is not None)
        packages = sorted(t for t in self.tops if path_of(t) == root_of(t) / t / "__init__.py")  # type: ignore[operator]
        # cache_dir None: grimp would otherwise write its cache into the working directory
        self._grimp = build_graph(*packages, cache_dir=None) if packages and build_graph is not None else None

    def own(self, name: str) -> bool:
        return name.split(".", 1)[0] in self.tops and path_of(name) is not None

    def imports(self, name: str) -> set[str]:
        """The modules ``name`` imports (anywhere in it) or names in a string, with their packages."""
        path = path_of(name)
        if path is None:
            return set()
        found: set[str] = set()
        if self._grimp is not None and name in self._grimp.modules:
            found |= self._grimp.find_modules_directly_imported_by(name)
        else:  # no grimp, or a top-level module that is no package (grimp reads packages only)
            found |= imported_on_import(name, everywhere=True)
        if name not in STRINGS_NOT_FOLLOWED:
            found |= _strings_in(path, path.stat().st_mtime_ns)
        return {m for n in found for m in with_packages(n) if self.own(m)}


@cache
def graph(tops: frozenset[str]) -> Graph:
    return Graph(tops)


def with_packages(name: str) -> list[str]:
    """``name`` and the packages above it: importing it runs their ``__init__`` first."""
    pieces = name.split(".")
    return [".".join(pieces[:i]) for i in range(1, len(pieces) + 1)]


@cache
def _strings_in(path: Path, mtime_ns: int) -> frozenset[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    return frozenset(
        m["string"].partition(":")[0] for m in QUOTED.finditer(text) if MODULE_STRING.fullmatch(m["string"])
    )


@cache
def imported_on_import(name: str, everywhere: bool = False) -> frozenset[str]:
    """The modules ``name`` imports when it is imported: its statements outside functions
    (``everywhere``: in functions too)."""
    path = path_of(name)
    if path is None:
        return frozenset()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: Iterable[ast.AST]) -> None:
        for node in nodes:
            if not everywhere and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue  # runs when called, not when imported
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names)
            visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_bytes()).body)
    return frozenset(found)


@cache
def data_files(folder: Path) -> tuple[Path, ...]:
    """The files of ``folder`` that are not Python, and those of its sub-folders without Python."""
    out: list[Path] = []
    for p in sorted(folder.iterdir()):
        if p.name in SKIPPED_DIRS or p.name.startswith("."):
            continue  # tool caches (.mypy_cache) and editor litter, never code
        if p.is_file() and p.suffix != ".py" and not p.name.endswith(SKIPPED_SUFFIXES):
            out.append(p)
        elif p.is_dir() and not (p / "__init__.py").exists() and not any(p.rglob("*.py")):
            out += [
                f
                for f in sorted(p.rglob("*"))
                if f.is_file()
                and not f.name.endswith(SKIPPED_SUFFIXES)
                and not any(part in SKIPPED_DIRS or part.startswith(".") for part in f.relative_to(p).parts)
            ]
    return tuple(out)


@cache
def design_module(name: str) -> str | None:
    """The module that defines the registered design ``name``, or None when it cannot be told."""
    from model_checks import registry

    wanted = registry.design(name)
    for attr, module in defining_modules():
        obj = getattr(sys.modules.get(module) or importlib.import_module(module), attr, None)
        if obj is wanted or (callable(obj) and _made_by(obj, name)):
            return module
    return None


@cache
def defining_modules() -> list[tuple[str, str]]:
    """(attribute, module) of every design the registry loads: the built-in ones, then plug-ins."""
    from model_checks import registry

    out = [("DESIGN", f"model_checks.designs.{package}") for package in registry.BUILT_IN]
    for ep in entry_points(group=registry.ENTRY_POINT_GROUP):
        module, _, attr = ep.value.partition(":")
        try:
            importlib.import_module(module)
        except Exception:  # a plug-in the registry skipped: it runs nothing
            continue
        out.append((attr.strip(), module))
    return out


def _made_by(factory: object, name: str) -> bool:
    try:
        made = factory()  # type: ignore[operator]
    except Exception:
        return False
    return getattr(made, "name", None) == name


def _holders(tops: frozenset[str]) -> dict[int, tuple[str, ...]]:
    """id of each object a module of ``tops`` holds by a module-level name -> those modules."""
    scanned = _holders_of(tops)
    if scanned.seen == len(sys.modules):
        return scanned.found
    scanned.seen = len(sys.modules)
    for name, module in list(sys.modules.items()):  # a module loaded since the last call is seen
        if name not in scanned.modules and name.split(".", 1)[0] in tops and module is not None:
            scanned.modules.add(name)
            for value in list(vars(module).values()):
                scanned.found[id(value)] = (*scanned.found.get(id(value), ()), name)
    return scanned.found


@dataclass
class _Scanned:
    modules: set[str] = field(default_factory=set)
    seen: int = 0  # len(sys.modules) at the last scan
    found: dict[int, tuple[str, ...]] = field(default_factory=dict)


@cache
def _holders_of(tops: frozenset[str]) -> _Scanned:
    return _Scanned()


def named_by(value: Any, tops: frozenset[str], depth: int = 0) -> Iterator[str]:
    """The modules a ``Design`` field's value names or lives in (strings, objects, containers)."""
    if depth > 4 or value is None or isinstance(value, bool | int | float):
        return
    if isinstance(value, str):
        target = value.partition(":")[0]
        if MODULE_STRING.fullmatch(value) or "." in target:
            yield target
        return
    yield from _holders(tops).get(id(value), ())  # a loaded ``Lazy`` field: the module holding it
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from named_by(k, tops, depth + 1)
            yield from named_by(v, tops, depth + 1)
        return
    if isinstance(value, tuple | list | set | frozenset):
        for v in value:
            yield from named_by(v, tops, depth + 1)
        return
    # an object: its own module (a function's, a class's) or its type's
    module = getattr(value, "__module__", None) or getattr(type(value), "__module__", None)
    if isinstance(module, str):
        yield module


def dependencies(unit: Unit) -> Dependencies:
    """The files ``unit`` depends on, by the rule in this module's docstring."""
    from model_checks import registry

    problems: list[str] = []
    start: list[str] = [unit.target.partition(":")[0], *ALWAYS]
    on_import: list[str] = []  # other designs' defining modules: only what runs when imported
    mine: str | None = None
    if unit.covers in registry.designs():
        design = registry.design(unit.covers)
        mine = design_module(unit.covers)
        if mine is None:
            problems.append(f"the module defining design {unit.covers!r} was not found")
        else:
            start.append(mine)
        held = frozenset({*OWN_TOPS, *([mine.split(".", 1)[0]] if mine else [])})
        # a field given as "module:attribute" names its module, but a ``Lazy`` one keeps only the
        # object once loaded: every field is loaded, then each object found in the modules holding it
        values = []
        for f in fields(design):
            if f.name not in NOT_RUN_BY_VERIFY:
                try:
                    values.append(getattr(design, f.name))
                except Exception as problem:  # its rows cannot run either; never reuse them
                    problems.append(f"design {unit.covers!r}: its {f.name} does not load: {problem}")
        for value in values:
            start += named_by(value, held)
    elif unit.covers != "lanecheck":
        problems.append(f"no design {unit.covers!r} is registered")
    on_import += [module for _, module in defining_modules() if module != mine]

    run_whole, imported_only = _closure(start, on_import)
    return Dependencies(files_of(run_whole, imported_only), complete=not problems, problems=problems)


def closure(start: Iterable[str], on_import: Iterable[str] = ()) -> set[str]:
    """The modules run from ``start`` (followed whole) and ``on_import`` (only as imported)."""
    run_whole, imported_only = _closure(start, on_import)
    return run_whole | imported_only


def _closure(start: Iterable[str], on_import: Iterable[str]) -> tuple[set[str], set[str]]:
    """(the modules followed whole, ``on_import``'s modules that only were imported)."""
    start, on_import = list(start), list(on_import)
    g = graph(frozenset({*OWN_TOPS, *(m.split(".", 1)[0] for m in [*start, *on_import])}))
    # what importing ``on_import`` runs: module-level imports, transitively, and their packages
    imported: set[str] = set()
    pending = [m for name in on_import for m in with_packages(name) if g.own(m)]
    while pending:
        name = pending.pop()
        if name not in imported:
            imported.add(name)
            pending += [m for n in imported_on_import(name) for m in with_packages(n) if g.own(m)]
    queue = [m for name in start for m in with_packages(name) if g.own(m)]
    reached: set[str] = set()
    while queue:
        name = queue.pop()
        if name in reached:
            continue
        reached.add(name)
        queue += [n for n in g.imports(name) if n not in reached]
    return reached, imported - reached


def files_of(modules: Iterable[str], without_data: Iterable[str] = ()) -> dict[str, str]:
    """The source files of ``modules`` and ``without_data``, and the data files beside the first,
    by key, with their sha256 (a design folder the registry only imports reads none of its data)."""
    files: dict[Path, str] = {}
    for name in without_data:
        path = path_of(name)
        if path is not None:
            files[path] = name.split(".", 1)[0]
    for name in modules:
        path = path_of(name)
        if path is None:
            continue
        top = name.split(".", 1)[0]
        files[path] = top
        for data in data_files(path.parent):
            files.setdefault(data, top)
    return {key_of(p, top): _hash_once(p) for p, top in sorted(files.items())}


_hashed: dict[Path, str] = {}  # the units of one command share most files: each read once (``forget``)


def _hash_once(path: Path) -> str:
    if path not in _hashed:
        _hashed[path] = sha256(path)
    return _hashed[path]


def forget() -> None:
    """Drops what this module remembers of the tree (a command starts afresh)."""
    _hashed.clear()
    names = ("root_of", "path_of", "design_module", "defining_modules", "graph", "imported_on_import")
    for name in (*names, "data_files", "_holders_of"):
        clear = getattr(globals()[name], "cache_clear", None)
        if clear is not None:  # a test may have put a plain function in its place
            clear()


def current_hash(key: str) -> str | None:
    """The sha256 of the file a certificate names (``spec/work_lane.py``) as it is now, or None."""
    top = key.split("/", 1)[0]
    root = root_of(top)
    if root is None:
        return None
    path = root / key
    return _hash_once(path) if path.is_file() else None
