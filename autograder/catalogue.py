"""The one catalogue of topics -> exercises -> points, hints and lesson links.

Everything that needs to know the exercises reads them from here (``catalogue.toml`` beside this
file); nothing else lists them.
"""

from __future__ import annotations

import difflib
import functools
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CATALOGUE_PATH = Path(__file__).with_name("catalogue.toml")

#: Where the built lesson site is served by `make serve` (mkdocs' default address).
SITE_URL = "http://127.0.0.1:8000/"


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
    def lesson_link(self) -> str:
        """A link a student can open: the page in the repo and its address on `make serve`."""
        page = self.lesson_page.removesuffix(".md")
        return f"docs/{self.lesson_page}{self.anchor} ({SITE_URL}{page}/{self.anchor})"


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
    #: and their CUDA (gpu) tests need workers that compile (autograder.grading.run._skipped)
    triton: bool = False

    @property
    def filename(self) -> str:
        return f"{self.module}.py"

    def exercise(self, name: str) -> Exercise:
        for ex in self.exercises:
            if ex.name == name:
                return ex
        close = difflib.get_close_matches(name, [e.name for e in self.exercises], n=1)
        guess = f"; did you mean {close[0]!r}?" if close else ""
        raise KeyError(f"{self.module} has no exercise {name!r}{guess}")

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


def get_topic(key: str | int) -> Topic:
    """Resolve ``ex01_vectors``, ``ex01``, ``1``, ``01`` or ``vectors`` to a topic.

    Raises:
        KeyError: naming the accepted forms when nothing matches.
    """
    k = str(key).strip().lower().removesuffix(".py")
    for t in topics():
        forms = {t.module, t.module[:4], str(t.number), f"{t.number:02d}", t.slug,
                 t.slug.replace("-", "_"), t.module[5:]}
        if k in forms:
            return t
    accepted = ", ".join(f"{t.module}/{t.number}/{t.slug}" for t in topics())
    forms = [f for t in topics() for f in (t.module, t.slug, t.module[5:])]
    close = difflib.get_close_matches(k, forms, n=1, cutoff=0.6)
    guess = f"did you mean {close[0]!r}? " if close else ""
    raise KeyError(f"unknown topic {key!r}; {guess}use one of: {accepted}")


def get_exercise(key: str) -> Exercise:
    """Resolve ``ex03_softmax.softmax``, ``3.softmax`` or a unique bare name like ``softmax``."""
    if "." in key:
        topic_key, name = key.split(".", 1)
        return get_topic(topic_key).exercise(name)
    matches = [e for t in topics() for e in t.exercises if e.name == key]
    if len(matches) != 1:
        close = difflib.get_close_matches(key, [e.qualname for e in all_exercises()]
                                          + [e.name for e in all_exercises()], n=1, cutoff=0.6)
        guess = f"did you mean {close[0]!r}? " if close else ""
        raise KeyError(f"unknown exercise {key!r}; {guess}write it as TOPIC.NAME, e.g. "
                       "ex03_softmax.softmax")
    return matches[0]


def all_exercises() -> list[Exercise]:
    return [e for t in topics() for e in t.exercises]
