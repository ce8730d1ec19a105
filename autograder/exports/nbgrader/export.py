"""`course nbgrader DIR`: the course as an nbgrader course directory.

What it writes (one nbgrader assignment per topic, named after the topic's module)::

    DIR/nbgrader_config.py                      feedback hides hidden tests; no MathJax CDN
    DIR/templates/course_feedback/              the feedback template (nbgrader's, offline)
    DIR/source/ex01_vectors/ex01_vectors.ipynb  … one source notebook per topic
    DIR/README.md                               the instructor's workflow

A source notebook holds, in the solution's own order: the lesson's summary with links to the
site; the module's given code (imports, constants) in locked cells; one solution cell per
exercise with the reference body between ``### BEGIN SOLUTION`` / ``### END SOLUTION``; and after
each exercise one autograded test cell worth the exercise's catalogue points. The test cells do
not copy the tests: they name them, and :mod:`autograder.exports.nbgrader.adapter` runs those very suite
functions in the kernel (public tests first, hidden tests between ``### BEGIN HIDDEN TESTS`` /
``### END HIDDEN TESTS``, which `nbgrader generate_assignment` strips from the release). An
exercise without any test yet gets no test cell (so no free points).

nbgrader runs the tests in the student's kernel; `course grade` on the collected notebooks is the
tamper-proof path (see :mod:`autograder.exports.nbgrader.adapter` and the written README): it reads their
code cells and leaves out the autograded test cells
(:func:`autograder.grading.submission.notebook_to_source`).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from autograder import catalogue, paths, templating
from autograder.grading import runner

ROOT = paths.ROOT
NB_META = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}
COURSE_ID = "linear-algebra-for-transformers"
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"


class ExportError(ValueError):
    """The course cannot be exported as it stands (a solution or suite out of line)."""


# ------------------------------------------------------------------ cells

def _points(n: int) -> str:
    """``n`` points in words: "1 point", "3 points"."""
    return f"{n} point" if n == 1 else f"{n} points"


def _nbgrader(grade_id: str, *, grade: bool = False, solution: bool = False,
              locked: bool = False, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _cell(kind: str, source: str, cell_id: str, meta: dict) -> dict:
    cell = {"cell_type": kind, "id": cell_id, "metadata": meta, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _segments(source: str, topic: catalogue.Topic) -> list[tuple[str | None, str]]:
    """The solution file cut at its top-level statements: (exercise name or None, text).

    Comments and blank lines before a statement travel with it; the module docstring is
    dropped (the notebook opens with the lesson summary instead); consecutive statements that
    are not exercises share one segment.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    names = {e.name for e in topic.exercises}
    # a helper the student writes too (topic 8's Triton kernels) joins its exercise's cell
    owners = {h: e.name for e in topic.exercises for h in e.helpers}
    body = list(tree.body)
    prev = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        prev = body[0].end_lineno
        body = body[1:]
    ranges: list[list] = []  # [exercise name or None, first line, end line]
    starts = [min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]) - 1
              for n in body]
    for i, node in enumerate(body):
        nxt = starts[i + 1] if i < len(body) - 1 else len(lines)
        end = node.end_lineno
        # indented comments after the last statement (``### END SOLUTION``) are the node's
        while end < nxt and (not lines[end].strip() or lines[end][0] in " \t"):
            end += 1
        if i == len(body) - 1:
            end = len(lines)
        name = getattr(node, "name", None)
        kind = name if name in names else owners.get(name)
        if ranges and ranges[-1][0] == kind:
            ranges[-1][2] = end
        else:
            ranges.append([kind, prev, end])
        prev = end
    return [(kind, "\n".join(lines[a:b]).strip("\n")) for kind, a, b in ranges]


def bundled_lesson(topic: catalogue.Topic) -> str:
    """The name of the lesson file copied beside a topic's notebook (``03-softmax.md``)."""
    return Path(topic.lesson_page).name


def notebook_lesson_url(topic: catalogue.Topic, anchor: str, site_url: str | None) -> str:
    """A lesson link that resolves inside Jupyter: the page on the site at ``site_url``
    (:func:`autograder.catalogue.lesson_url`), or with None the lesson file :func:`build`
    bundles beside the notebook (``03-softmax.md#section``; a repository path such as
    ``docs/lessons/…`` would name a file the assignment folder does not hold)."""
    if site_url:
        return catalogue.lesson_url(topic.lesson_page, anchor, site_url)
    return f"{bundled_lesson(topic)}{anchor}"


def lesson_summary(topic: catalogue.Topic, site_url: str | None, root: Path = ROOT) -> str:
    """The lesson page's opening paragraph and its sections, linked to the site at
    ``site_url``, or to the lesson file bundled beside the notebook when None
    (:func:`notebook_lesson_url`)."""
    def url(anchor: str) -> str:
        return notebook_lesson_url(topic, anchor, site_url)

    page_url = url("")
    page = root / "docs" / topic.lesson_page
    intro, sections = "", []
    if page.is_file():
        text = page.read_text("utf-8")
        paras = re.split(r"\n\s*\n", re.sub(r"\A#[^\n]*\n", "", text.strip() + "\n"))
        intro = next((p.strip() for p in paras if p.strip() and not p.lstrip().startswith("#")),
                     "")
        for m in re.finditer(r"^## (.+?)(?:\s*\{#([\w-]+)\})?\s*$", text, re.MULTILINE):
            title, anchor = m.group(1).strip(), m.group(2)
            sections.append(f"- [{title}]({url('#' + anchor)})" if anchor else f"- {title}")
    parts = [f"# Topic {topic.number}: {topic.title}", ""]
    if intro:
        parts += [intro, ""]
    # Read raw, a lesson file shows snippet lines where its code goes: point at the site.
    where = (f"(`docs/{topic.lesson_page}` in the course repository)" if site_url else
             "(its source, beside this notebook: the course repository's `make serve` shows "
             "it with its code, figures and exercises)")
    parts += [f"**Read the lesson first:** [{topic.title}]({page_url}) {where}."]
    if sections:
        parts += ["", "In the lesson:", "", *sections]
    parts += ["", f"## Your exercises ({_points(topic.points)})", "",
              ("Fill in every cell that says `YOUR CODE HERE`, then run the test cell after it: "
              "it runs the public tests of that exercise (the same as `course check "
              f"{topic.number}`). More tests, not shown, run when your work is graded, and the "
              "points of an exercise are shared among all its tests."), ""]
    for ex in topic.exercises:
        parts.append(f"- `{ex.name}` ({_points(ex.points)}): "
                     f"[lesson section]({url(ex.anchor)})")
    return "\n".join(parts).rstrip() + "\n"


def _test_cell_source(topic: catalogue.Topic, ex: catalogue.Exercise,
                      specs: list[runner.TestSpec]) -> str:
    public = [s for s in specs if s.visibility == "public"]
    hidden = [s for s in specs if s.visibility == "hidden"]
    lines = [(f"# Autograded: the tests of {ex.name} ({_points(ex.points)}), the very tests "
             "`course check` and `course grade` run."),
             "from autograder.exports.nbgrader.adapter import Tests",
             "",
             f"tests = Tests({topic.module!r}, {ex.name!r}, globals())"]
    lines += [f"tests.run({s.description!r})" for s in public]
    if hidden:
        lines.append(BEGIN_HIDDEN)
        lines += [f"tests.run({s.description!r})" for s in hidden]
        lines.append(END_HIDDEN)
    lines.append("tests.result()")
    return "\n".join(lines)


#: The first code cell of a topic with Triton kernels: on a machine without CUDA they run only
#: through Triton's interpreter (docs/design/measured-facts.md, "Triton in the sandbox").
TRITON_SWITCH = """\
# Triton kernels run on the CPU only through Triton's interpreter, which has to be switched on
# before any kernel is defined. On a machine with a CUDA GPU it stays off.
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")"""


def topic_notebook(topic: catalogue.Topic, solution: str, specs: list[runner.TestSpec],
                   site_url: str | None = None, root: Path = ROOT) -> dict:
    """The nbgrader source notebook of one topic, as an nbformat 4.5 dict; lessons linked on
    ``site_url`` (None: the lesson file :func:`build` bundles beside it, 03-softmax.md)."""
    if "BEGIN HIDDEN TESTS" in solution or "END HIDDEN TESTS" in solution:
        raise ExportError(f"solutions/{topic.filename} contains a hidden-tests marker")
    by_exercise: dict[str, list[runner.TestSpec]] = {}
    for s in specs:
        by_exercise.setdefault(s.exercise, []).append(s)
    cells = [_cell("markdown", lesson_summary(topic, site_url, root), "intro",
                   _nbgrader("intro", locked=True))]
    if re.search(r"^import triton\b", solution, re.M):
        # triton reads the switch when a kernel is decorated: it must come before the imports
        cells.append(_cell("code", TRITON_SWITCH, "triton-interpreter",
                           _nbgrader("triton-interpreter", locked=True)))
    seen: set[str] = set()
    given = 0
    for name, text in _segments(solution, topic):
        if name is None:
            given += 1
            gid = f"given-{given}"
            cells.append(_cell("code", text, gid, _nbgrader(gid, locked=True)))
            continue
        if "### BEGIN SOLUTION" not in text:
            raise ExportError(f"{topic.module}.{name} has no ### BEGIN SOLUTION block")
        seen.add(name)
        ex = topic.exercise(name)
        tests = by_exercise.get(name, [])
        head = [f"### `{name}` ({_points(ex.points)})", "",
                (f"Hint: {ex.hints[0]} Lesson: [{ex.anchor.lstrip('#')}]"
                f"({notebook_lesson_url(topic, ex.anchor, site_url)}).")]
        if not tests:
            head += ["", "*(This exercise has no tests yet, so it carries no points here.)*"]
        cells.append(_cell("markdown", "\n".join(head), f"about-{name}",
                           _nbgrader(f"about-{name}", locked=True)))
        cells.append(_cell("code", text, name, _nbgrader(name, solution=True)))
        if tests:
            gid = f"test-{name}"
            cells.append(_cell("code", _test_cell_source(topic, ex, tests), gid,
                               _nbgrader(gid, grade=True, locked=True, points=ex.points)))
    missing = [e.name for e in topic.exercises if e.name not in seen]
    if missing:
        raise ExportError(f"solutions/{topic.filename} does not define {', '.join(missing)}")
    return {"cells": cells, "metadata": dict(NB_META), "nbformat": 4, "nbformat_minor": 5}


# ------------------------------------------------------------------ configuration

#: nbgrader_config.py, the feedback page's MathJax macro and README.md are templates beside
#: this module (templates/: :mod:`autograder.templating`).
TEMPLATES = "autograder.exports.nbgrader"


def config_text(timeout: int = 600) -> str:
    """The course's nbgrader_config.py, with its course id and ``timeout`` (seconds per cell)."""
    return templating.fill(TEMPLATES, "nbgrader_config.py.tmpl", course_id=repr(COURSE_ID),
                           timeout=int(timeout))


def build(dest: Path, *, topics: list[str] | None = None, site_url: str | None = None,
          root: Path = ROOT, timeout: int = 600,
          progress: Callable[[str], None] | None = None) -> list[Path]:
    """Write the nbgrader course into ``dest``; return the source notebooks written. Lessons
    are linked on ``site_url`` (the published site), or, when None, to each lesson's file,
    which is copied beside its notebook (``source/<topic>/03-softmax.md``: nbgrader's
    ``generate_assignment`` releases an assignment folder's other files with it).
    ``progress(message)`` is told as each topic's notebook is made (collecting a topic's
    suites imports them: about 2 s a topic).

    Every notebook is made before anything is written: a missing or malformed solution leaves
    ``dest`` as it was (absent, or the course folder it already was), never half a course.

    Raises:
        ExportError: a solution or a suite that cannot be exported, or ``dest`` is a file.
        KeyError: an unknown topic.
    """
    chosen = [catalogue.get_topic(t) for t in topics] if topics else list(catalogue.topics())
    if dest.exists() and not dest.is_dir():
        raise ExportError(f"{dest} is a file, not a folder: name the nbgrader course folder")
    missing = [f"solutions/{t.filename}" for t in chosen
               if not (root / "solutions" / t.filename).is_file()]
    if missing:
        raise ExportError(f"{root} lacks {', '.join(missing)}: an nbgrader course is built "
                          "from the instructor's repository")
    notebooks = {}
    for i, topic in enumerate(chosen, 1):
        if progress:
            progress(f"[{i}/{len(chosen)}] {topic.module}: collecting its tests, writing its "
                     "notebook …")
        notebooks[dest / "source" / topic.module / f"{topic.module}.ipynb"] = topic_notebook(
            topic, (root / "solutions" / topic.filename).read_text("utf-8"),
            runner.collect(topic.module), site_url, root)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "nbgrader_config.py").write_text(config_text(timeout), encoding="utf-8")
    tpl = dest / "templates" / "course_feedback"
    tpl.mkdir(parents=True, exist_ok=True)
    (tpl / "conf.json").write_text(json.dumps(
        {"base_template": "feedback", "mimetypes": {"text/html": True}}, indent=2) + "\n",
        encoding="utf-8")
    (tpl / "mathjax.html.j2").write_text(templating.text(TEMPLATES, "mathjax.html.j2"),
                                         encoding="utf-8")
    (dest / "README.md").write_text(templating.text(TEMPLATES, "README.md"), encoding="utf-8")
    for topic, (path, nb) in zip(chosen, notebooks.items()):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        lesson = root / "docs" / topic.lesson_page
        if site_url is None and lesson.is_file():
            shutil.copyfile(lesson, path.parent / bundled_lesson(topic))
    return list(notebooks)
