"""The student's commands of `course`: check, hint, list, watch, reset, notebook, submit
(:mod:`autograder.cli.app` builds the parser and runs the instructors' commands)."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from pathlib import Path

from autograder import catalogue, paths

ROOT = paths.ROOT


def _exercises_dir(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    here = Path.cwd() / "exercises"
    return here if here.is_dir() else ROOT / "exercises"


def cmd_check(args: argparse.Namespace) -> int:
    from autograder.console import check_report, console
    from autograder.grading import loop
    from autograder.grading import runner
    from autograder.driver import errors
    from autograder.driver.slot import Slot
    from autograder.student.progress import load_folder, warn_shadowed

    target = _target("check", args.topic)
    folder = _student_folder("check", args.dir) if target is not None else None
    if folder is None:
        return 2
    topics, exercise = target
    # Said first: a student whose edits "do nothing" is often checking another folder.
    print(f"Checking {folder.resolve()} (public tests"
          + (f" of {exercise.qualname} only)" if exercise else ")"), flush=True)
    warn_shadowed("check", folder, topics)
    loaded = load_folder(folder)
    specs = {top.module: [s for s in runner.collect(top.module, hidden=False)
                          if exercise is None or s.exercise == exercise.name]
             for top in topics}
    # -v: a public failure's message carries every frame of the student's side (the libraries'
    # too), not only the submission's own (errors.StudentException; hidden tests: none).
    full = errors.FULL_TRACEBACK.set(bool(getattr(args, "verbose", False)))
    try:
        with Slot(0) as slot:
            outcome = loop.grade(slot, loaded.sources, specs, problems=loaded.problems,
                                 status=lambda topic: console.status(f"checking {topic} …"))
    finally:
        errors.FULL_TRACEBACK.reset(full)
    results = outcome.flat()
    check_report(results, topics, notes=outcome.notes, output=outcome.output, folder=folder)
    return 0 if results and all(r.passed for r in results) else 1


def cmd_hint(args: argparse.Namespace) -> int:
    """`course hint EXERCISE [--level N]`: an exercise's first N hint tiers and its lesson; a
    topic instead (``8``, ``ex08``, ``flash_attention``): each of its exercises with its first
    hint. Exit 2 when the argument names neither."""
    try:
        ex = catalogue.get_exercise(args.exercise)
    except KeyError as exc:
        try:
            topic = catalogue.get_topic(args.exercise)
        except KeyError:
            print(f"course hint: {exc.args[0]}", file=sys.stderr)
            return 2
        return _topic_hints(topic)
    if not 1 <= args.level <= len(ex.hints):  # said, not silently clamped (a tester's note)
        print(f"course hint: {ex.qualname} has hint levels 1 to {len(ex.hints)}; showing "
              f"{'all' if args.level > len(ex.hints) else 'the first'}", file=sys.stderr)
    tiers = ex.hints[: max(1, min(args.level, len(ex.hints)))]
    for i, h in enumerate(tiers, 1):
        print(f"Hint {i}/{len(ex.hints)}: {h}")
    if len(tiers) < len(ex.hints):
        print(f"(more: course hint {ex.qualname} --level {len(tiers) + 1})")
    print(f"Lesson: {ex.lesson_link}")
    return 0


def _topic_hints(topic: catalogue.Topic) -> int:
    """`course hint TOPIC`: each exercise of ``topic`` with its first hint."""
    print(f"{topic.module}: {topic.title} ({len(topic.exercises)} exercises; more on one: "
          f"course hint {topic.module}.NAME --level 2)")
    for ex in topic.exercises:
        print(f"\n{ex.qualname} ({ex.points} point{'s' if ex.points != 1 else ''})\n  Hint 1/{len(ex.hints)}: {ex.hints[0]}"
              f"\n  Lesson: {ex.lesson_link}")
    return 0


def _topics(command: str, arg: str | None) -> list[catalogue.Topic] | None:
    """The topics ``arg`` names (all when None); None, said on stderr, when it names none."""
    try:
        return [catalogue.get_topic(arg)] if arg else list(catalogue.topics())
    except KeyError as exc:
        print(f"course {command}: {exc.args[0]}", file=sys.stderr)
        return None


def _target(command: str, arg: str | None
            ) -> tuple[list[catalogue.Topic], catalogue.Exercise | None] | None:
    """What ``arg`` names: every topic (None), one topic, or one exercise
    (:func:`catalogue.resolve`): (its topics, the exercise or None); None, said on stderr,
    when it names nothing."""
    if not arg:
        return list(catalogue.topics()), None
    try:
        topic, exercise = catalogue.resolve(arg)
    except KeyError as exc:
        print(f"course {command}: {exc.args[0]}", file=sys.stderr)
        return None
    return [topic], exercise


def _student_folder(command: str, arg: str | None) -> Path | None:
    folder = _exercises_dir(arg)
    if not folder.is_dir():
        print(f"course {command}: no exercises folder at {folder}", file=sys.stderr)
        return None
    return folder


def cmd_list(args: argparse.Namespace) -> int:
    from autograder.student import progress

    folder = _student_folder("list", args.dir)
    if folder is None:
        return 2
    progress.warn_shadowed("list", folder, list(catalogue.topics()))
    return progress.show_list(folder, list(catalogue.topics()), run=not args.static)


def cmd_watch(args: argparse.Namespace) -> int:
    from autograder.student import watch

    topics = _topics("watch", args.topic)
    folder = _student_folder("watch", args.dir) if topics is not None else None
    if folder is None:
        return 2
    return watch.watch(folder, topics, once=args.once)


def cmd_reset(args: argparse.Namespace) -> int:
    from autograder.student import notebook, reset

    folder = _student_folder("reset", args.dir)
    if folder is None:
        return 2
    if getattr(args, "undo", False):
        return _undo(args, folder)
    if not args.target:
        print("course reset: name an exercise or a topic to reset, or pass --undo",
              file=sys.stderr)
        return 2
    try:
        topic, ex = catalogue.resolve(args.target)
        if ex is None:
            return _reset_topic(args, folder)
        path = reset.target_file(folder, topic)  # the notebook when the topic lives in one
        existed = path.exists()
        ex, backup = (notebook.reset_exercise(path, args.target) if path.suffix == ".ipynb"
                      else reset.reset(folder, args.target))
    except KeyError as exc:
        print(f"course reset: {exc.args[0]}", file=sys.stderr)
        return 2
    except reset.ResetError as exc:
        print(f"course reset: {exc}", file=sys.stderr)
        return 1
    if not existed:
        print(f"{path} was missing: wrote the whole stub of {topic.module}")
    elif backup is None:
        print(f"{ex.qualname} is already the original stub: nothing changed")
    else:
        print(f"{ex.qualname} restored to its stub in {path}; "
              f"your previous file is saved as {backup}")
    return 0


def _undo(args: argparse.Namespace, folder: Path) -> int:
    """`course reset --undo [TOPIC]`: the newest backup put back (reset.undo); exit 1 when
    there is none, 2 for an unknown topic."""
    from autograder.student import reset

    try:
        path, backup, replaced = reset.undo(folder, args.target)
    except KeyError as exc:
        print(f"course reset: {exc.args[0]}", file=sys.stderr)
        return 2
    except reset.ResetError as exc:
        print(f"course reset: {exc}", file=sys.stderr)
        return 1
    print(f"{path} restored from {backup}"
          + (f"; the file it replaced is saved as {replaced}" if replaced else ""))
    return 0


def _reset_topic(args: argparse.Namespace, folder: Path) -> int:
    """`course reset TOPIC`: the whole file back to its stub, after a yes (or --yes)."""
    from autograder.student import notebook, reset

    no_terminal = []

    def confirm(topic: catalogue.Topic, path: Path) -> bool:
        if args.yes:
            return True
        if not sys.stdin.isatty():  # nobody to ask: never wipe a file unasked
            no_terminal.append(path)
            return False
        if "." not in args.target:
            with contextlib.suppress(KeyError):  # `softmax`: a topic and an exercise
                ex = catalogue.get_exercise(args.target)
                print(f"(To reset only the exercise: course reset {ex.qualname})")
        try:
            answer = input(f"Reset every exercise of {topic.module}? Your file is backed up "
                           "first. [y/N] ")
        except EOFError:
            answer = ""
        return answer.strip().lower() in ("y", "yes")

    try:
        path = reset.target_file(folder, catalogue.get_topic(args.target))
        topic, backup = (notebook.reset_topic(path, args.target, confirm)
                         if path.suffix == ".ipynb"
                         else reset.reset_topic(folder, args.target, confirm))
    except reset.Declined:
        if no_terminal:
            print(f"course reset: resetting a whole topic replaces every exercise in "
                  f"{no_terminal[0]}; not run from a terminal, so nobody could confirm it: "
                  "pass --yes to reset it", file=sys.stderr)
            return 2
        print("Nothing changed.")
        return 1
    path = reset.target_file(folder, topic)
    if backup is None:
        print(f"{path} is the original stub: nothing to back up")
    else:
        print(f"{path} restored to its stub; your previous file is saved as {backup}")
    return 0


def cmd_notebook(args: argparse.Namespace) -> int:
    from autograder.student import notebook

    topics = _topics("notebook", args.topic)
    folder = _student_folder("notebook", args.dir) if topics is not None else None
    if folder is None:
        return 2
    try:
        topic, path, shadow, backup = notebook.write(folder, args.topic, force=args.force)
    except notebook.NotebookError as exc:
        # The notebook is there already: --move-py alone still moves the .py that wins over it
        # (a new user ran `course notebook 1`, then again with --move-py as its warning said).
        topic = catalogue.get_topic(args.topic)
        existing, shadow = folder / notebook.filename(topic), folder / topic.filename
        if getattr(args, "move_py", False) and existing.exists() and shadow.exists():
            _move_py(shadow, existing)
            return 0
        print(f"course notebook: {exc}", file=sys.stderr)
        return 1
    if shadow is not None and _move_aside(args, shadow):
        _move_py(shadow, path)
        shadow = None
    where = f" --dir {folder}" if args.dir else ""
    then = (f"move or rename {shadow.name} (the .py wins), then run" if shadow is not None
            else "then run")
    print(f"{path}: the stub of {topic.module} as a notebook; fill it in, {then} "
          f"course check {topic.number}{where}")
    if backup is not None:
        print(f"your previous notebook is saved as {backup}")
    if shadow is not None:
        print(f"course notebook: warning: {shadow} is in the same folder, and the .py wins "
              f"when graded: course check and course grade read {shadow.name}, not "
              f"{path.name}. Move or rename {shadow.name} to be graded on the notebook "
              "(--move-py moves it into .backup/).", file=sys.stderr)
    return 0


def _move_py(shadow: Path, notebook_path: Path) -> None:
    """Move the topic's .py aside into ``.backup/`` (backed up, never deleted: it may hold the
    student's work; `course reset --undo` restores it) and say so."""
    from autograder.authoring import stubs

    moved = stubs.backup_copy(shadow)
    shadow.unlink()
    print(f"{shadow.name} moved aside to {moved} (course reset --undo brings it back): "
          f"{notebook_path.name} is what gets graded now")


def _move_aside(args: argparse.Namespace, shadow: Path) -> bool:
    """Whether to move ``shadow`` (the topic's .py, which wins over the notebook) aside:
    ``--move-py``, or a yes on a terminal; never unasked."""
    if getattr(args, "move_py", False):
        return True
    if not sys.stdin.isatty():
        return False
    try:
        answer = input(f"{shadow.name} is in the same folder and would be graded instead of "
                       "the notebook. Move it aside into .backup/? [y/N] ")
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")


def cmd_submit(args: argparse.Namespace) -> int:
    from autograder.student import submit

    folder = _student_folder("submit", args.dir)
    if folder is None:
        return 2
    # The zip's stem is the submission's id when graded: name it after the student.
    # A leading dot would hide the zip, and `course grade` refuses such an id; a trailing one
    # makes names like "ann..zip": drop both.
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", submit.student_id(args.id)).strip(".")
    out = args.out or (name or "submission") + ".zip"
    return submit.submit(folder, Path(out), args.id, check=not args.no_check)
