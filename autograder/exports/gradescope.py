"""`course gradescope --out autograder.zip`: the course as a Gradescope autograder.

The zip holds, at its root, what Gradescope expects (``setup.sh``, ``run_autograder``) beside
the course's grading code: the ``autograder`` package with its public and hidden suites, the
``solutions`` and ``pyproject.toml``. Gradescope unpacks it into ``/autograder/source``, runs
``setup.sh`` once to build the image, and then, for each submission, ``run_autograder`` as root,
which calls :func:`run` (``python -m autograder.exports.gradescope run``): the files uploaded to
``/autograder/submission`` are graded as one submission by the same sandboxed grader as
`course grade`, and its results (Gradescope's schema, see :mod:`autograder.results.writers`) land in
``/autograder/results/results.json``.

Running as root, every worker drops to an unprivileged slot user (:mod:`autograder.sandbox.isolation`);
before grading, the instructor's files (solutions, suites) and Gradescope's own folders are
made unreadable to other users too, so that they stay closed where the container refuses the
namespaces that would hide them.

``COURSE_AUTOGRADER_ROOT`` (instead of ``/autograder``) and ``COURSE_PYTHON`` (instead of the
image's venv) exist for the course's own tests only.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import stat
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from autograder import catalogue, paths, templating

ROOT = paths.ROOT
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
#: Where setup.sh puts the grader's Python (outside /autograder, which workers may not read).
VENV = "/opt/course-venv"
#: The plan setup.sh records (:mod:`autograder.grading.plan_file`): in the suites folder, which
#: no worker sees and :func:`_close` shuts to other users (it holds hidden inputs).
PLAN_FILE = paths.PLAN_FILE  # the plan `course grade` keeps too: one file

#: The files written beside the code, from templates/gradescope/ (:mod:`autograder.templating`).
TEMPLATES = "autograder.exports"


def generated_files(hidden_visibility: str, call_timeout: float,
                    submission_timeout: float,
                    site_url: str | None = None) -> list[tuple[str, str, int]]:
    """(name in the zip, text, mode) of the files Gradescope runs or shows: ``setup.sh``,
    ``run_autograder`` (both executable) and ``README.md``, filled from their templates.
    ``run_autograder`` carries the settings, ``site_url`` (the lesson site of feedback links;
    None: links name the lesson files) included: the image has no mkdocs.yml to read it from."""
    run = templating.fill(TEMPLATES, "gradescope/run_autograder", venv=VENV,
                          visibility=hidden_visibility, call=f"{call_timeout:g}",
                          submission=f"{submission_timeout:g}",
                          site_url=shlex.quote(site_url or ""))
    return [("setup.sh", templating.fill(TEMPLATES, "gradescope/setup.sh", venv=VENV), 0o755),
            ("run_autograder", run, 0o755),
            ("README.md", templating.text(TEMPLATES, "gradescope/README.md"), 0o644)]


def _source_files(root: Path) -> list[tuple[str, Path]]:
    """(name in the zip, file) for the grading code: package (its templates too), suites,
    solutions, pyproject."""
    files: list[tuple[str, Path]] = []
    for path in sorted((root / "autograder").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and (path.suffix in (
                ".py", ".toml", ".md", ".zip") or "templates" in path.parts):
            files.append((path.relative_to(root).as_posix(), path))
    for path in sorted((root / "solutions").glob("*.py")):
        files.append((path.relative_to(root).as_posix(), path))
    files.append(("pyproject.toml", root / "pyproject.toml"))
    return files


def _entry(zf: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (stat.S_IFREG | mode) << 16
    zf.writestr(info, data)


def build(out: Path, *, root: Path = ROOT, hidden_visibility: str = "after_published",
          call_timeout: float = 10.0, submission_timeout: float = 120.0,
          site_url: str | None = None) -> Path:
    """Write the autograder zip to ``out`` (reproducibly: sorted entries, fixed timestamps);
    its feedback links lessons on ``site_url`` (None: names their files, docs/lessons/...).

    Raises:
        FileNotFoundError: a solution is missing (this needs the instructor's repository).
        ValueError: an unknown visibility, or a ``site_url`` that is not http(s).
    """
    if hidden_visibility not in VISIBILITIES:
        raise ValueError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    site_url = catalogue.check_site_url(site_url or "")
    for t in catalogue.topics():
        if not (root / "solutions" / t.filename).is_file():
            raise FileNotFoundError(f"solutions/{t.filename} is missing: a Gradescope autograder "
                                    "is built from the instructor's repository")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text, mode in generated_files(hidden_visibility, call_timeout,
                                                submission_timeout, site_url):
            _entry(zf, name, text.encode(), mode)
        for name, path in _source_files(root):
            _entry(zf, name, path.read_bytes(), 0o644)
    os.replace(tmp, out)
    return out


# ------------------------------------------------------------------ inside Gradescope

def _close(root: Path) -> None:
    """As root: instructor files and Gradescope's folders unreadable to any other user."""
    if os.geteuid() != 0:
        return
    source = root / "source"
    closed = [source / "solutions", source / "autograder" / "suites",
              root / "submission_metadata.json"]  # Gradescope's file: the student's details
    closed += [p for p in root.iterdir() if p.is_dir() and p.name != "source"]
    for p in closed:
        if p.exists() and not p.is_symlink():
            os.chmod(p, 0o700 if p.is_dir() else 0o600)


def _fault_result(message: str) -> str:
    return json.dumps({
        "score": 0.0,
        "execution_time": 0.0,
        "output": "The autograder itself failed (this is not about your code); please tell "
                  f"your instructor.\n{message}",
        "tests": [],
    }, indent=2) + "\n"


def run(root: Path, *, hidden_visibility: str = "after_published", call_timeout: float = 10.0,
        submission_timeout: float = 120.0, site_url: str | None = None) -> int:
    """Grade ``root/submission`` into ``root/results/results.json`` (lesson links on
    ``site_url``, or the lesson files' names when None); 0, or 1 on a grader fault.

    Prints the seconds each phase took to stderr, run_autograder's log, which Gradescope shows
    the instructor, never the student (:mod:`autograder.grading.timing`)."""
    from autograder.grading import timing

    watch = timing.start()
    from autograder.grading import batch  # noqa: F401 - torch and the grader: timed here

    timing.lap("the grader's imports")
    try:
        return _run(root, hidden_visibility, call_timeout, submission_timeout, site_url)
    finally:
        timing.lap("results.json written")
        timing.stop()
        print(watch.table("seconds by phase, from the start of run_autograder's Python "
                          "(this log only):"), file=sys.stderr, flush=True)


def _run(root: Path, hidden_visibility: str, call_timeout: float, submission_timeout: float,
         site_url: str | None) -> int:
    """:func:`run`'s grading, without its stopwatch."""
    from autograder.grading import batch as grade
    from autograder.limits import Limits
    from autograder.results import writers as outputs

    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    submission = root / "submission"
    submission.mkdir(exist_ok=True)  # nothing uploaded: graded as an empty submission
    _close(root)
    if not PLAN_FILE.is_file():
        # Silent, this run would take tens of seconds where the docs promise about ten: say so
        # in the log (the instructor's, never the student's), and how to record it.
        print(f"no recorded grading plan at {PLAN_FILE}: grading call by call (the same grades, "
              "several times slower); setup.sh's last step records it, as does running "
              "'python -m autograder.exports.gradescope prepare' in the autograder's source "
              "folder", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix="course-gradescope-") as tmp:
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(tmp, "hypothesis")
        out = Path(tmp) / "out"
        try:
            limits = Limits(call_seconds=call_timeout, submission_seconds=submission_timeout)
            (record,) = grade.grade_batch([submission], out, jobs=1, limits=limits,
                                          visibility_hidden=hidden_visibility,
                                          site_url=site_url, plan_path=PLAN_FILE,
                                          class_files=False)
            # From the record in memory (its hints included): one entry per exercise and
            # visibility, not one per test (docs/design/interface.md, Gradescope).
            text = outputs.gradescope_json(record, hidden_visibility, site_url)
        except Exception as exc:  # noqa: BLE001 - a fault of the grader, not the submission
            import traceback

            traceback.print_exc()
            outputs.write_atomic(results / "results.json",
                                 _fault_result(f"{type(exc).__name__}: {exc}"))
            return 1
    outputs.write_atomic(results / "results.json", text)
    doc = json.loads(text)
    print(f"graded: {doc['score']:.2f} / {doc['max_score']:.2f}")
    return 0


def prepare(path: Path = PLAN_FILE) -> int:
    """Record the plan every run replays (setup.sh, once per image); 0, or 1 if it failed,
    in which case each submission is graded call by call: the same grades, more slowly."""
    from autograder.grading import plan_file

    t0 = time.monotonic()
    try:
        plans = plan_file.record(path)
    except Exception as exc:  # noqa: BLE001 - the image still grades, only slower
        print(f"no grading plan ({type(exc).__name__}: {exc}): each submission will be graded "
              "call by call, with the same grades, more slowly", file=sys.stderr)
        return 1
    print(f"grading plan: {len(plans)} topics recorded in {time.monotonic() - t0:.0f} s "
          f"({path.stat().st_size / 2**20:.1f} MiB): {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m autograder.exports.gradescope run …`` (what run_autograder calls); exit code."""
    p = argparse.ArgumentParser(prog="python -m autograder.exports.gradescope")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade /autograder/submission (Gradescope's run_autograder)")
    r.add_argument("--root", default=os.environ.get("COURSE_AUTOGRADER_ROOT", "/autograder"))
    r.add_argument("--hidden-visibility", default="after_published", choices=VISIBILITIES)
    r.add_argument("--call-timeout", type=float, default=10.0)
    r.add_argument("--submission-timeout", type=float, default=120.0)
    r.add_argument("--site-url", default="", help="the lesson site ('' = none)")
    sub.add_parser("prepare", help="record the grading plan once (setup.sh): each run then "
                   "replays it instead of grading call by call")
    args = p.parse_args(argv)
    if args.command == "prepare":
        return prepare()
    return run(Path(args.root), hidden_visibility=args.hidden_visibility,
               call_timeout=args.call_timeout, submission_timeout=args.submission_timeout,
               site_url=catalogue.check_site_url(args.site_url))


if __name__ == "__main__":
    sys.exit(main())
