"""The one catalogue of topics -> exercises -> points, hints and lesson links.

Everything that needs to know the exercises reads them from here (``catalogue.toml`` beside this
file); nothing else lists them.
"""

from __future__ import annotations

import difflib
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import paths

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CATALOGUE_PATH = Path(__file__).with_name("catalogue.toml")

#: Where `make serve` serves the lesson site on a student's own machine (mkdocs' default
#: address): right for `course check`, `watch` and `hint` there, dead anywhere else, so graded
#: feedback never uses it unless told to (:func:`configured_site_url`, ``--site-url``).
SITE_URL = "http://127.0.0.1:8000/"
#: The course's lesson site configuration, whose ``site_url`` (when set) is where it is published.
MKDOCS_YML = paths.ROOT / "mkdocs.yml"


def lesson_url(lesson_page: str, anchor: str, site_url: str | None) -> str:
    """Where a lesson page (``lessons/03-softmax.md``) and its ``anchor`` (``#section`` or "")
    are: the page's address on the site at ``site_url``, or with ``site_url`` None (no site
    known) its path in the repository, ``docs/lessons/03-softmax.md#section``.

    The one place a lesson address is built (feedback, hints, the nbgrader notebooks)."""
    if not site_url:
        return f"docs/{lesson_page}{anchor}"
    return f"{site_url.rstrip('/')}/{lesson_page.removesuffix('.md')}/{anchor}"


def lesson_link(ex: "Exercise", site_url: str | None) -> str:
    """The lesson link shown with a failed test of ``ex``: its page in the repository and,
    when ``site_url`` is given, its address on that site:
    ``docs/lessons/03-softmax.md#sec (https://host/lessons/03-softmax/#sec)``. The local
    address (:data:`SITE_URL`) says it needs `make serve`: a new user opened it with no server
    running."""
    path = lesson_url(ex.lesson_page, ex.anchor, None)
    if not site_url:
        return path
    url = lesson_url(ex.lesson_page, ex.anchor, site_url)
    return f"{path} (with `make serve` running: {url})" if site_url == SITE_URL else f"{path} ({url})"


def check_site_url(url: str) -> str | None:
    """``url`` (``--site-url`` or mkdocs.yml's ``site_url``) checked: an ``http(s)://`` address
    with a host, returned with one trailing ``/``; None for "" (no site).

    Raises:
        ValueError: ``url`` is not an http(s) address (the message quotes it).
    """
    from urllib.parse import urlsplit

    url = url.strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc or any(c.isspace() for c in url):
        raise ValueError(f"site URL {url!r} is not an http:// or https:// address, e.g. "
                         "https://example.org/course/")
    return url.rstrip("/") + "/"


def configured_site_url(mkdocs_yml: Path = MKDOCS_YML) -> str | None:
    """The ``site_url`` set in ``mkdocs_yml`` (the published lesson site), or None when the
    file is absent or the key is absent, commented out or empty.

    Read as one top-level ``site_url: VALUE`` line (quotes and a trailing ``# comment``
    allowed), not with a YAML parser: the grader must not depend on PyYAML.

    Raises:
        ValueError: the value set is not an http(s) address (the file is named).
    """
    import re

    try:
        text = mkdocs_yml.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    m = re.search(r"""^site_url:[ \t]*(?:"([^"]*)"|'([^']*)'|([^#\s]*))[ \t]*(?:#.*)?$""",
                  text, re.MULTILINE)
    if m is None:
        return None
    value = next((g for g in m.groups() if g is not None), "")
    try:
        return check_site_url(value)
    except ValueError as exc:
        raise ValueError(f"{mkdocs_yml}: {exc}") from None


@dataclass(frozen=True)
class Exercise:
    """One function or class a student implements."""

    topic: str  # module name, e.g. "ex03_softmax"
    name: str  # function or class name, e.g. "softmax"
    points: int
    hints: tuple[str, ...]
    anchor: str  # "#section" in the topic's lesson page
    lesson_page: str  # e.g. "lessons/03-softmax.md"
    #: private functions the student writes for this exercise (e.g. the Triton kernel it
    #: launches): their bodies are solution regions too, and stubs name this exercise there
    helpers: tuple[str, ...] = ()

    @property
    def qualname(self) -> str:
        return f"{self.topic}.{self.name}"

    @property
    def stub_message_start(self) -> str:
        """A regex of how the message of this exercise's stub ``NotImplementedError`` starts
        (:mod:`autograder.authoring.stubs` writes it): the qualname, then ``:`` (its body, a
        helper of it) or ``.`` (a method of it). `course list --static` finds it in a source
        (:mod:`autograder.student.reset`), feedback in a failure (:mod:`autograder.results.failures`)."""
        return rf"{re.escape(self.qualname)}[.:]"

    @property
    def lesson_link(self) -> str:
        """The link for a student's own machine (`course check`, `watch`, `hint`): the page in
        the repository and its address on `make serve` (:func:`lesson_link`, :data:`SITE_URL`)."""
        return lesson_link(self, SITE_URL)


@dataclass(frozen=True)
class Topic:
    module: str
    number: int
    slug: str
    title: str
    lesson_page: str
    points: int
    exercises: tuple[Exercise, ...]
    #: the students write Triton kernels: graded through Triton's interpreter on CPU tensors,
    #: and their CUDA (gpu) tests need workers that compile (autograder.grading.runner._skipped)
    triton: bool = False

    @property
    def filename(self) -> str:
        return f"{self.module}.py"

    def exercise(self, name: str) -> Exercise:
        """The exercise called ``name``; any case is accepted when only one exercise matches.

        Raises:
            KeyError: naming this topic's exercises when none matches.
        """
        for ex in self.exercises:
            if ex.name == name:
                return ex
        folded = [ex for ex in self.exercises if ex.name.casefold() == name.casefold()]
        if len(folded) == 1:
            return folded[0]
        close = difflib.get_close_matches(name, [e.name for e in self.exercises], n=1)
        guess = f"did you mean {close[0]!r}? " if close else ""
        raise KeyError(f"{self.module} has no exercise {name!r}; {guess}its exercises: "
                       + ", ".join(e.name for e in self.exercises))

    def owner(self, name: str) -> Exercise:
        """The exercise called ``name``, or the one listing ``name`` among its helpers.

        Raises:
            KeyError: when neither exists.
        """
        for ex in self.exercises:
            if name in ex.helpers:
                return ex
        return self.exercise(name)


@functools.lru_cache(maxsize=1)
def topics() -> tuple[Topic, ...]:
    """All topics in course order, validated (points add up, names unique)."""
    data = tomllib.loads(CATALOGUE_PATH.read_text(encoding="utf-8"))
    result = []
    for t in data["topic"]:
        exercises = tuple(
            Exercise(
                topic=t["module"],
                name=e["name"],
                points=int(e["points"]),
                hints=tuple(e["hints"]),
                anchor=e["lesson"],
                lesson_page=t["lesson"],
                helpers=tuple(e.get("helpers", ())),
            )
            for e in t["exercise"]
        )
        total = sum(e.points for e in exercises)
        if total != t["points"]:
            raise ValueError(f"catalogue: {t['module']} exercises sum to {total}, not {t['points']}")
        result.append(
            Topic(
                module=t["module"],
                number=int(t["number"]),
                slug=t["slug"],
                title=t["title"],
                lesson_page=t["lesson"],
                points=int(t["points"]),
                exercises=exercises,
                triton=bool(t.get("triton", False)),
            )
        )
    return tuple(result)


def topic_modules() -> list[str]:
    return [t.module for t in topics()]


#: How a topic may be named, said in every "unknown topic" message (:func:`topic_forms`).
TOPIC_FORMS = "ex03_softmax, ex03, ex3, 3 or softmax (any case)"
#: How one exercise may be named, said in every "unknown exercise" message.
EXERCISE_FORMS = "TOPIC.NAME (ex03_softmax.softmax, 3.softmax) or a bare NAME (logsumexp)"


def topic_forms(t: Topic) -> set[str]:
    """Every lower-case name that resolves to ``t``: ``ex03_softmax``, ``ex03``, ``ex3``,
    ``ex3_softmax``, ``3``, ``03`` and the slug (``svd-lora`` also as ``svd_lora``)."""
    tail = t.module.split("_", 1)[1]
    return {t.module, t.module[:4], f"ex{t.number}", f"ex{t.number}_{tail}", str(t.number),
            f"{t.number:02d}", t.slug, t.slug.replace("-", "_"), tail}


def _guess(key: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}? " if close else ""


def _topic_names() -> list[str]:
    return [f for t in topics() for f in (t.module, t.slug, t.module.split("_", 1)[1])]


def get_topic(key: str | int) -> Topic:
    """Resolve ``ex01_vectors``, ``ex01``, ``ex1``, ``1``, ``01`` or ``vectors`` (any case, a
    trailing ``.py`` allowed) to a topic.

    Raises:
        KeyError: naming the accepted forms and the topics when nothing matches.
    """
    k = str(key).strip().lower().removesuffix(".py")
    for t in topics():
        if k in topic_forms(t):
            return t
    listed = ", ".join(t.module for t in topics())
    raise KeyError(f"unknown topic {key!r}; {_guess(k, _topic_names())}name a topic as "
                   f"{TOPIC_FORMS}; the topics: {listed}")


def get_exercise(key: str) -> Exercise:
    """Resolve ``ex03_softmax.softmax``, ``3.softmax`` or a unique bare name like ``softmax``
    (the topic part in any of :func:`get_topic`'s forms; a name's case matters only when two
    exercises differ by case alone).

    Raises:
        KeyError: naming the accepted forms when nothing, or more than one exercise, matches.
    """
    key = key.strip()
    if "." in key:
        topic_key, name = key.split(".", 1)
        return get_topic(topic_key).exercise(name)
    matches = [e for e in all_exercises() if e.name == key] or \
        [e for e in all_exercises() if e.name.casefold() == key.casefold()]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise KeyError(f"exercise {key!r} is in several topics ("
                       + ", ".join(e.qualname for e in matches) + "); write it as TOPIC.NAME")
    guess = _guess(key, [e.qualname for e in all_exercises()]
                   + [e.name for e in all_exercises()])
    raise KeyError(f"unknown exercise {key!r}; {guess}name an exercise as {EXERCISE_FORMS}")


def resolve(key: str) -> tuple[Topic, Exercise | None]:
    """A topic (``course check 3``) or one exercise (``course check ex03_softmax.logsumexp``):
    (the topic, None) or (the exercise's topic, the exercise). A name that is both a topic and
    a bare exercise name (``softmax``) means the topic; ``ex03_softmax.softmax`` is the exercise.

    Raises:
        KeyError: naming the accepted forms of both when nothing matches.
    """
    try:
        return get_topic(key), None
    except KeyError:
        pass
    try:
        ex = get_exercise(key)
    except KeyError as exc:
        if "." in key.strip():  # TOPIC.NAME: the exercise's own message says what was wrong
            raise
        if "several topics" in exc.args[0]:
            raise
        k = key.strip().lower()
        guess = _guess(k, _topic_names() + [e.name for e in all_exercises()])
        raise KeyError(f"unknown topic or exercise {key!r}; {guess}name a topic as "
                       f"{TOPIC_FORMS}, or one exercise as {EXERCISE_FORMS}") from None
    return get_topic(ex.topic), ex


def all_exercises() -> list[Exercise]:
    return [e for t in topics() for e in t.exercises]
