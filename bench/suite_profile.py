"""Where the graded suites spend their time: one row per test, the costliest first.

    python bench/suite_profile.py [--topics ex01_vectors,...] [--top 30] [--json OUT] [--cold]

Issue 16 ("strength per second"). The reference solution of each topic is graded call by call
(as `course check` grades) in one session, and for each test the profile records:
  - ``seconds``: the test's wall time, trusted side included (reference maths, Hypothesis
    drawing inputs, comparing);
  - ``student``: of which, waiting for the worker's replies (the submission's calls; what the
    batch plan pipelines and what the per-submission budget counts);
  - ``calls``: requests sent to the worker;
  - ``sent`` and ``received``: the bytes of those requests' and replies' frames (inputs and
    outputs, encoded: autograder/wire/codec.py).
A test that is costly in ``seconds`` but not in ``student`` is costly on the trusted side (a
class pays that once per plan, not per submission); one costly in ``student`` is what every
submission pays. A benchmark, not a test: nothing here asserts a time.

The slot's zygote is warmed first, as a batch's plan warms it (autograder.sandbox.zygote's
``_warm_up``), so the rows show what a graded class pays. ``--cold`` skips that: the first
worker then pays torch's lazy imports in whichever test first needs them (the first
``backward(grad)`` imports sympy, about 0.9 s), as a slot's first fork under `course check` does.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder import catalogue  # noqa: E402


def profile(topics: list[str], *, warm: bool = True) -> list[dict]:
    """One dict per graded test of ``topics`` (name, topic, exercise, visibility, passed,
    seconds, student, calls, sent, received), in the order the tests ran; ``warm``: warm the zygote first."""
    from autograder.grading import runner
    from autograder.driver.session import Session
    from autograder.driver.slot import Slot

    rows = []
    with Slot(0) as slot:
        if warm:
            slot.warm_up()
        for topic in topics:
            source = (ROOT / "solutions" / f"{topic}.py").read_bytes()
            specs = runner.collect(topic)
            ref = runner.reference(topic)
            session = Session(slot, {topic: source})
            try:
                session.load(topic)
                for i in runner.phase_order(specs):
                    spec = specs[i]
                    waited, calls = session.student_seconds, session.live_calls
                    sent, received = session.bytes_sent, session.bytes_received
                    result = runner.run_test(session, spec, ref)
                    rows.append({"name": spec.name, "topic": topic, "exercise": spec.exercise,
                                 "visibility": spec.visibility, "passed": result.passed,
                                 "seconds": round(result.seconds, 4),
                                 "student": round(session.student_seconds - waited, 4),
                                 "calls": session.live_calls - calls,
                                 "sent": session.bytes_sent - sent,
                                 "received": session.bytes_received - received})
            finally:
                session.close()
    return rows


def render(rows: list[dict], top: int) -> str:
    """Per-topic totals, then the ``top`` costliest tests by student time."""
    def total(mine: list[dict], label: str) -> str:
        kib = sum(r["sent"] + r["received"] for r in mine) / 1024
        return (f"| {label} | {len(mine)} | {sum(r['seconds'] for r in mine):.2f} | "
                f"{sum(r['student'] for r in mine):.2f} | {sum(r['calls'] for r in mine)} | "
                f"{kib:,.0f} |")

    out = ["| topic | tests | seconds | student s | calls | KiB both ways |",
           "|---|---|---|---|---|---|"]
    for topic in dict.fromkeys(r["topic"] for r in rows):
        out.append(total([r for r in rows if r["topic"] == topic], topic))
    out.append(total(rows, "all"))
    out += ["", f"costliest {top} tests by student seconds:",
            "| student s | seconds | calls | KiB sent | KiB received | test |",
            "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r["student"])[:top]:
        flag = "" if r["passed"] else " (FAILED on the reference!)"
        out.append(f"| {r['student']:.3f} | {r['seconds']:.3f} | {r['calls']} | "
                   f"{r['sent'] / 1024:,.1f} | {r['received'] / 1024:,.1f} | "
                   f"{r['name']}{flag} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default=",".join(catalogue.topic_modules()))
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--json", type=Path, default=None, help="also write every row here")
    ap.add_argument("--cold", action="store_true",
                    help="do not warm the zygote first (a slot's first fork, as `course check`)")
    args = ap.parse_args(argv)
    try:
        topics = [catalogue.get_topic(t.strip()).module for t in args.topics.split(",")
                  if t.strip()]
    except KeyError as exc:
        ap.error(str(exc))
    rows = profile(topics, warm=not args.cold)
    print(render(rows, args.top))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
