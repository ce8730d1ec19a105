"""Mutation testing of the graded suites: how many small bugs in ``solutions/`` do they catch?

    python bench/mutation.py [--topics ex01_vectors,...] [--functions softmax,...] [--sample N]
                             [--operators OPS]
                             [--equivalent bench/mutation_equivalent.toml]
                             [--unkillable bench/mutation_unkillable.toml] [--json OUT]
                             [--rerun PREVIOUS_JSON --changed NAME_PART ...]

Issue 16. Every mutant is one of cosmic-ray's mutations of a reference solution
``solutions/<topic>.py``, graded by the course's own grader with a batch plan; the table says,
per topic and function, how many mutants were made, killed by that function's own tests, killed
by other tests only, survived, and shown equivalent (``bench/mutation_equivalent.toml``, a
reviewed file), and the score ``killed / (made - equivalent)``. Survivors that no fair test can
kill (every test that would kill one also fails a correct implementation of the published API,
docs/design/exercise-api.md) are listed with their reason in a second reviewed file,
``bench/mutation_unkillable.toml``: they still count as survived, and the report shows them
apart from the survivors nobody has explained yet (docs/design/suite-strength.md).

Why cosmic-ray's operators, applied in memory (``cosmic_ray.mutating.mutate_code``), and not
cosmic-ray's or mutmut's own test runners: both start one test process per mutant (the torch
import and a sandbox start, ~5 s each, for thousands of mutants), and mutmut 3's trampoline
reads an environment variable that the sandbox's clean worker environment does not pass. A
mutant graded in memory by ``tests.helpers.grade_sources`` with the plan recorded once costs
~0.5 s (topic 8 ~6 s: Triton's interpreter) and is graded exactly as a student's file is.

Rules: a mutant is *killed* when any graded non-gpu test of its topic fails, *killed by its own
tests* when a failing test's exercise is the mutated function (or the exercise listing the
mutated helper in autograder/catalogue.toml); a mutant that does not compile is *invalid* and
not counted. Mutations outside every exercise's function (private helpers, module level) are
attributed to the helper's name (or ``<module>``) and reported apart. A benchmark, not part of
``make test`` (``make mutation``; tests/test_mutation.py runs a small sample).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import difflib
import hashlib
import json
import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from autograder import catalogue

EQUIVALENT_FILE = ROOT / "bench" / "mutation_equivalent.toml"
UNKILLABLE_FILE = ROOT / "bench" / "mutation_unkillable.toml"
MODULE_LEVEL = "<module>"
#: ExceptionReplacer writes ``except CosmicRayTestingException:``, a class only cosmic-ray's own
#: package defines: undefined, the handler would raise NameError instead of never matching.
EXCEPTION_SHIM = "\n\nclass CosmicRayTestingException(Exception):  # mutation harness\n    pass\n"


@dataclass(frozen=True)
class Mutant:
    """One mutation of a topic's reference solution."""

    id: str  # "<topic>:<operator>:<occurrence>:<hash of the changed lines>"
    topic: str
    operator: str  # cosmic-ray's name, e.g. "core/NumberReplacer"
    occurrence: int
    line: int
    function: str  # enclosing top-level def/class, or MODULE_LEVEL
    exercise: str | None  # the catalogue exercise the function is (or is a helper of)
    diff: str  # "old line -> new line", stripped
    source: str = field(repr=False)


@dataclass
class Verdict:
    """How the suites met one mutant: status is killed, survived, equivalent or invalid."""

    mutant: Mutant
    status: str
    own: bool = False  # killed by a test of the mutant's own exercise
    failing: list[str] = field(default_factory=list)
    seconds: float = 0.0
    reason: str = ""  # a reviewed file's reason, for an equivalent or a listed survivor


# ------------------------------------------------------------------ making mutants


def operators(selection: list[str] | None = None) -> list[tuple[str, object]]:
    """cosmic-ray's operators as (name, instance), all or those ``selection`` names.

    A selection entry is a full name (``core/NumberReplacer``), a name without its provider, or
    the start of one (``ReplaceBinaryOperator`` selects all 121 of them).

    Raises:
        ValueError: an entry selects no operator.
    """
    import cosmic_ray.plugins

    found = []
    for name in cosmic_ray.plugins.operator_names():
        cls = cosmic_ray.plugins.get_operator(name)  # a class: mutate_code wants an instance
        if cls.arguments():
            # VariableReplacer/VariableInserter need a (cause, effect) variable pair per run;
            # cosmic-ray's own `init` skips them too unless its config names one.
            continue
        found.append((name, cls()))
    if not selection:
        return found
    short = {name: name.split("/", 1)[-1] for name, _ in found}
    for entry in selection:
        if not any(entry in (n, s) or s.startswith(entry) for n, s in short.items()):
            raise ValueError(f"no cosmic-ray operator matches {entry!r}")
    return [(n, op) for n, op in found
            if any(e in (n, short[n]) or short[n].startswith(e) for e in selection)]


def _enclosing(node) -> str:
    """The top-level ``def``/``class`` a parso node lies in (decorated or async included)."""
    while node.parent is not None and node.parent.type != "file_input":
        node = node.parent
    while node.type in ("decorated", "async_stmt"):
        node = node.children[-1]
    return node.name.value if node.type in ("funcdef", "classdef") else MODULE_LEVEL


def _changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    diff = [x for x in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="",
                                            n=0) if not x.startswith(("---", "+++", "@@"))]
    return [x[1:] for x in diff if x[0] == "-"], [x[1:] for x in diff if x[0] == "+"]


def enumerate_mutants(topic: str, selection: list[str] | None = None,
                      functions: set[str] | None = None) -> list[Mutant]:
    """Every mutation of ``solutions/<topic>.py`` by the selected operators (in the functions
    named, if any), in source order.

    Positions and occurrence numbers are cosmic-ray's (its ``init`` asks each operator for
    ``mutation_positions`` of every node of the parso tree, in the order ``mutate_code``'s
    visitor counts them). Each mutant is made by ``cosmic_ray.mutating.mutate_code`` on the one
    top-level statement it lies in, spliced back: parsing the whole file per mutant was 80 % of
    the time (tests/test_mutation.py checks the splice against a whole-file mutation).

    Raises:
        KeyError: ``topic`` is not in the catalogue; ValueError: see :func:`operators`.
    """
    from cosmic_ray.ast import ast_nodes, get_ast
    from cosmic_ray.mutating import mutate_code

    top = catalogue.get_topic(topic)
    owner = {e.name: e.name for e in top.exercises}
    owner.update({h: e.name for e in top.exercises for h in e.helpers})
    source = (ROOT / "solutions" / top.filename).read_text(encoding="utf-8")
    tree = get_ast(source)
    units = [u.get_code() for u in tree.children]  # each with its prefix: they add up to source
    if "".join(units) != source:
        raise RuntimeError(f"parso does not round-trip {top.filename}")
    made = []
    for name, op in operators(selection):
        if any(True for _ in op.mutation_positions(tree)):  # none of cosmic-ray's does
            raise RuntimeError(f"{name} mutates the module node itself: splicing cannot")
        occurrence = 0  # counted over the whole file, as cosmic-ray counts
        for u, unit in enumerate(tree.children):
            positions = [(node, start) for node in ast_nodes(unit)
                         for start, _ in op.mutation_positions(node)]
            for local, (node, start) in enumerate(positions):
                n, occurrence = occurrence, occurrence + 1
                function = _enclosing(node)
                if functions is not None and function not in functions:
                    continue
                mutated_unit = mutate_code(units[u], op, local)
                if mutated_unit is None:  # cannot happen while both walks count alike
                    raise RuntimeError(f"{name} made no mutant at {topic}:{start}")
                removed, added = _changed_lines(units[u], mutated_unit)
                digest = hashlib.sha1("\n".join(["-" + x for x in removed]
                                                + ["+" + x for x in added]).encode())
                mutated = "".join(units[:u]) + mutated_unit + "".join(units[u + 1:])
                if "CosmicRayTestingException" in mutated:
                    mutated += EXCEPTION_SHIM
                made.append(Mutant(
                    id=f"{topic}:{name}:{n}:{digest.hexdigest()[:8]}",
                    topic=topic, operator=name, occurrence=n, line=start[0],
                    function=function, exercise=owner.get(function),
                    # blank lines come and go with a removed decorator's prefix: not shown
                    diff=" / ".join(x.strip() for x in removed if x.strip()) + "  ->  "
                         + " / ".join(x.strip() for x in added if x.strip()),
                    source=mutated))
    made.sort(key=lambda m: (m.line, m.operator, m.occurrence))
    return made


def sample(mutants: list[Mutant], n: int | None) -> list[Mutant]:
    """About ``n`` of ``mutants``, every k-th (k = ceil(len / n)): deterministic, spread over
    the file since mutants come in source order. All of them when ``n`` is None."""
    if not n or n >= len(mutants):
        return list(mutants)
    return mutants[::math.ceil(len(mutants) / n)]


# ------------------------------------------------------------------ the reviewed file


def load_equivalent(path: Path = EQUIVALENT_FILE, kind: str = "equivalent") -> dict[str, str]:
    """The reviewed mutants of a file: id -> one-line reason (an absent file lists none).

    ``kind`` is the name of the file's tables: ``equivalent`` (mutation_equivalent.toml) or
    ``unkillable`` (mutation_unkillable.toml, :func:`load_unkillable`).

    Raises:
        ValueError: an entry without an id, without a one-line reason, or listed twice.
    """
    if not path.exists():
        return {}
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get(kind, [])
    found: dict[str, str] = {}
    for e in entries:
        mid, reason = e.get("id", ""), str(e.get("reason", "")).strip()
        if not mid or not reason or "\n" in reason:
            raise ValueError(f"{path}: every [[{kind}]] needs an id and a one-line reason: {e}")
        if mid in found:
            raise ValueError(f"{path}: {mid} is listed twice")
        found[mid] = reason
    return found


def load_unkillable(path: Path = UNKILLABLE_FILE) -> dict[str, str]:
    """The reviewed survivors no fair test can kill: id -> one-line reason (see
    :func:`load_equivalent`; an id may not be in both files: :func:`run` checks)."""
    return load_equivalent(path, "unkillable")


# ------------------------------------------------------------------ grading


def record_plans(slot, topics: list[str]) -> dict:
    """The batch plan of ``topics``, recorded once as tests/conftest.py's ``plans`` does."""
    from autograder.grading import plan
    from autograder.grading import runner

    specs = {t: runner.collect(t) for t in topics}
    return plan.record(slot, specs, plan.reference_sources())


def failing_tests(slot, plans: dict, topic: str, source: str) -> list:
    """The graded non-gpu tests of ``topic`` that ``source`` fails (their TestResults)."""
    from tests.helpers import grade_sources

    results = grade_sources(slot, {topic: source}, [topic], plans=plans)
    return [r for r in results.values() if not r.passed and not r.skipped and not r.spec.gpu]


def check_reference(slot, plans: dict, topic: str) -> None:
    """Grade the unmutated reference: the kill rule means nothing unless it passes.

    Raises:
        RuntimeError: naming the tests the reference fails.
    """
    failed = failing_tests(slot, plans, topic, (ROOT / "solutions" / f"{topic}.py").read_text())
    if failed:
        raise RuntimeError(f"the reference {topic} fails: "
                           + "; ".join(f"{r.spec.name}: {r.message[:200]}" for r in failed))


def _solution(topic: str) -> str:
    return (ROOT / "solutions" / f"{topic}.py").read_text(encoding="utf-8")


ANNOTATION_ONLY = ("changes a type annotation only: the module has `from __future__ import "
                   "annotations`, so annotations are strings, never evaluated")


def _without_annotations(tree: ast.AST) -> str:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
        elif isinstance(node, ast.arg):
            node.annotation = None
        elif isinstance(node, ast.AnnAssign):
            node.annotation = ast.Constant(None)
    return ast.dump(tree)


def annotation_only(original: str, mutant: str) -> bool:
    """True when ``mutant`` differs from ``original`` in annotations alone and the module
    postpones their evaluation (PEP 563): such a mutant is equivalent by construction, so the
    harness says so itself instead of a reviewed entry per mutant."""
    if "from __future__ import annotations" not in original:
        return False
    try:
        return _without_annotations(ast.parse(original)) == _without_annotations(ast.parse(mutant))
    except SyntaxError:
        return False


def grade_mutant(slot, plans: dict, mutant: Mutant, equivalent: dict[str, str]) -> Verdict:
    """Grade one mutant on ``slot`` and classify it (see the module's rules)."""
    try:
        with warnings.catch_warnings():  # `x is 0` and the like: the mutant is what it is
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(mutant.source, f"{mutant.topic}.py", "exec")
    except SyntaxError:  # e.g. `a == -b` -> `a == not b`
        return Verdict(mutant, "invalid")
    if annotation_only(_solution(mutant.topic), mutant.source):
        return Verdict(mutant, "equivalent", reason=ANNOTATION_ONLY)
    t0 = time.monotonic()
    failed = failing_tests(slot, plans, mutant.topic, mutant.source)
    seconds = time.monotonic() - t0
    if failed:
        own = any(r.spec.exercise == mutant.exercise for r in failed)
        return Verdict(mutant, "killed", own, [r.spec.name for r in failed], seconds)
    if mutant.id in equivalent:
        return Verdict(mutant, "equivalent", seconds=seconds, reason=equivalent[mutant.id])
    return Verdict(mutant, "survived", seconds=seconds)


def run(topics: list[str], *, selection: list[str] | None = None, n: int | None = None,
        functions: set[str] | None = None, ids: set[str] | None = None,
        equivalent_path: Path = EQUIVALENT_FILE, unkillable_path: Path = UNKILLABLE_FILE,
        slot=None, plans: dict | None = None, log=print) -> tuple[list[Verdict], list[str]]:
    """Make, grade and classify the mutants of ``topics``: (verdicts, warnings).

    Only those of the ``selection`` of operators (:func:`operators`), in ``functions`` if given,
    with an id in ``ids`` if given (:func:`at_risk`), about ``n`` per topic if given
    (:func:`sample`). ``slot``/``plans``: made here when not given.
    Warnings name reviewed ids that match no mutant, and listed mutants that were killed.
    A survivor listed in ``unkillable_path`` keeps its status (survived) and gets its reason.

    Raises:
        RuntimeError: a reference fails its own suites; ValueError: see :func:`operators` and
        :func:`load_equivalent`, or an id listed both as equivalent and as unkillable.
    """
    from autograder.driver.slot import Slot

    equivalent = load_equivalent(equivalent_path)
    unkillable = load_unkillable(unkillable_path)
    if both := sorted(set(equivalent) & set(unkillable)):
        raise ValueError(f"listed both as equivalent and as unkillable: {', '.join(both)}")
    reviewed = {**equivalent, **unkillable}
    verdicts: list[Verdict] = []
    notes: list[str] = []
    with contextlib.ExitStack() as stack:
        if slot is None:
            slot = stack.enter_context(Slot(0))
        if plans is None:
            log(f"recording the plan of {', '.join(topics)} ...")
            plans = record_plans(slot, topics)
        for topic in topics:
            every = enumerate_mutants(topic)  # all operators: the reviewed file's ids refer to it
            known = {m.id for m in every}
            notes += [f"{mid}: listed in {path.name} but no such mutant is made "
                      "(the solution changed?)"
                      for path, listed in ((equivalent_path, equivalent),
                                           (unkillable_path, unkillable))
                      for mid in listed if mid.startswith(topic + ":") and mid not in known]
            chosen = {name for name, _ in operators(selection)}
            todo = sample([m for m in every if m.operator in chosen
                           and (functions is None or m.function in functions)
                           and (ids is None or m.id in ids)], n)
            check_reference(slot, plans, topic)
            log(f"{topic}: grading {len(todo)} of {len(every)} mutants")
            t0 = time.monotonic()
            for i, m in enumerate(todo, 1):
                v = grade_mutant(slot, plans, m, equivalent)
                verdicts.append(v)
                if v.status == "killed" and m.id in reviewed:
                    kind = "equivalent" if m.id in equivalent else "unkillable"
                    notes.append(f"{m.id}: listed as {kind} but killed by {v.failing[0]}")
                elif v.status == "survived" and m.id in unkillable:
                    v.reason = unkillable[m.id]
                if i % 25 == 0 or i == len(todo):
                    spent = time.monotonic() - t0
                    log(f"  {i}/{len(todo)}  {spent:.0f} s, "
                        f"~{spent / i * (len(todo) - i):.0f} s left")
    return verdicts, notes


def at_risk(previous: dict, changed: list[str]) -> set[str]:
    """The mutants a suite change may let through: those that ``previous`` (a ``--json`` report)
    shows killed by tests whose names all contain one of the ``changed`` substrings.

    A cost cut rewrites some tests and leaves the others as they were; a mutant that an
    unchanged test killed is still killed, so only these need grading again
    (docs/design/suite-strength.md, "What a test costs").
    """
    return {m["id"] for m in previous["mutants"] if m["status"] == "killed"
            and all(any(c in name for c in changed) for name in m["failing"])}


# ------------------------------------------------------------------ reporting

COLUMNS = ("made", "killed (own)", "killed (other only)", "survived", "equivalent", "score")


def table(verdicts: list[Verdict]) -> list[dict]:
    """One row per (topic, function) in source order, plus a ``total`` row per topic: the
    counts of COLUMNS, ``invalid`` (not in ``made``) and ``exercise`` (None: reported apart)."""
    rows: dict[tuple[str, str], dict] = {}
    for v in sorted(verdicts, key=lambda v: (v.mutant.topic, v.mutant.line)):
        m = v.mutant
        col = {"killed": "killed (own)" if v.own else "killed (other only)"}.get(v.status,
                                                                                  v.status)
        for fn, ex in ((m.function, m.exercise), ("total", "total")):
            row = rows.setdefault((m.topic, fn), dict.fromkeys(COLUMNS[:-1], 0) | {
                "topic": m.topic, "function": fn, "exercise": ex, "invalid": 0})
            row["made"] += v.status != "invalid"  # an invalid mutant is not counted as made
            row[col] += 1
    ordered = sorted(rows.values(), key=lambda r: (r["topic"], r["function"] == "total",
                                                   r["exercise"] != r["function"]))
    for r in ordered:
        counted = r["made"] - r["equivalent"]
        killed = r["killed (own)"] + r["killed (other only)"]
        r["score"] = round(killed / counted, 3) if counted else None
    return ordered


def render(verdicts: list[Verdict], notes: list[str]) -> str:
    """The table (exercises, then functions outside any exercise, then the topic's total),
    the survivors (id, line, one-line diff) and the warnings, as Markdown."""
    out = []
    widths = [24] + [max(len(c), 5) for c in COLUMNS]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(x.ljust(w) for x, w in zip(cells, widths)) + " |"

    for topic in dict.fromkeys(v.mutant.topic for v in verdicts):
        out += [f"\n## {topic}\n", line(["function", *COLUMNS]),
                "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
        for r in (r for r in table(verdicts) if r["topic"] == topic):
            name = r["function"]
            if r["exercise"] != name and name != "total":  # reported apart, below exercises
                name = f"({name})" if r["exercise"] is None else f"({name}: {r['exercise']})"
            out.append(line([name] + [str(r[c]) if c != "score" or r[c] is None
                                      else f"{r[c]:.0%}" for c in COLUMNS]))
        out.append("(name): a private helper or module level; (name: exercise): a helper the "
                   "catalogue lists for that exercise")
        if invalid := sum(v.status == "invalid" for v in verdicts if v.mutant.topic == topic):
            out.append(f"{invalid} mutants did not compile (invalid, not counted)")
        survived = [v for v in verdicts if v.mutant.topic == topic and v.status == "survived"]
        open_ = [v.mutant for v in survived if not v.reason]
        listed = [v for v in survived if v.reason]
        out.append(f"\nsurvivors not yet explained ({len(open_)}):")
        out += [f"- {m.id}  line {m.line} ({m.function}): {m.diff}" for m in open_]
        if listed:
            out.append(f"\nsurvivors listed as unkillable ({len(listed)}, "
                       f"{UNKILLABLE_FILE.name}):")
            out += [f"- {v.mutant.id} ({v.mutant.function}): {v.reason}" for v in listed]
    if graded := [v.seconds for v in verdicts if v.status != "invalid"]:
        out.append(f"\n{len(graded)} mutants graded, {sum(graded) / len(graded):.2f} s each")
    out += [f"warning: {w}" for w in notes]
    return "\n".join(out)


def to_json(verdicts: list[Verdict], notes: list[str]) -> dict:
    """The table rows, every verdict (its mutant without the source) and the warnings."""
    items = [{**{k: v for k, v in dataclasses.asdict(x.mutant).items() if k != "source"},
              **{k: getattr(x, k) for k in ("status", "own", "failing", "seconds", "reason")}}
             for x in verdicts]
    return {"table": table(verdicts), "mutants": items, "warnings": notes}


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module's docstring); 0 when it ran."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default=",".join(catalogue.topic_modules()),
                    help="comma-separated topic modules (default: all: hours of CPU)")
    ap.add_argument("--sample", type=int, default=None,
                    help="grade about N mutants per topic, every k-th in source order")
    ap.add_argument("--operators", default="",
                    help="comma-separated cosmic-ray operators, or starts of their names")
    ap.add_argument("--functions", default="",
                    help="comma-separated function names: only their mutants (default: all)")
    ap.add_argument("--equivalent", type=Path, default=EQUIVALENT_FILE)
    ap.add_argument("--unkillable", type=Path, default=UNKILLABLE_FILE)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    ap.add_argument("--rerun", type=Path, default=None, metavar="PREVIOUS_JSON",
                    help="with --changed: only the mutants this earlier report shows killed by "
                         "changed tests alone (after a cost cut)")
    ap.add_argument("--changed", action="append", default=[], metavar="NAME_PART",
                    help="a substring of the names of the tests a change rewrote (with "
                         "--rerun; repeat it: test names hold commas)")
    args = ap.parse_args(argv)
    if bool(args.rerun) != bool(args.changed):
        ap.error("--rerun and --changed go together")
    selection = [o.strip() for o in args.operators.split(",") if o.strip()]
    try:  # an unknown topic or operator fails before the plan is recorded
        topics = [catalogue.get_topic(t.strip()).module for t in args.topics.split(",")
                  if t.strip()]
        operators(selection)
    except (KeyError, ValueError) as exc:
        ap.error(str(exc))
    t0 = time.monotonic()
    functions = {f.strip() for f in args.functions.split(",") if f.strip()} or None
    ids = None
    if args.rerun:
        ids = at_risk(json.loads(args.rerun.read_text()), args.changed)
        print(f"{len(ids)} mutants were killed by the changed tests alone", file=sys.stderr)
    verdicts, notes = run(topics, selection=selection, functions=functions, ids=ids,
                          n=args.sample, equivalent_path=args.equivalent,
                          unkillable_path=args.unkillable,
                          log=lambda s: print(s, file=sys.stderr, flush=True))
    print(render(verdicts, notes))
    print(f"wall time {time.monotonic() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(to_json(verdicts, notes), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
