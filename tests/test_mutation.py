"""The mutation harness (bench/mutation.py) on a small sample: the mutants of
``ex01_vectors.dot`` (24, ~15 s), so that the harness cannot rot while `make mutation` is not run.

Seen failing once, on purpose: with ``failing_tests`` patched to grade the reference instead of
the mutant (every mutant then survives), test_dot_mutants_are_graded_and_classified failed where
``u.ndim != 1`` -> ``u.ndim != 2`` must be killed (it came out "equivalent", being listed).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.helpers import ROOT, solution_source

pytest.importorskip("cosmic_ray", reason="cosmic-ray is in the dev extra (pip install -e .[dev])")

TOPIC = "ex01_vectors"


def _load_harness():
    spec = importlib.util.spec_from_file_location("bench_mutation", ROOT / "bench" / "mutation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


mutation = _load_harness()


@pytest.fixture(scope="module")
def dot_mutants():
    return mutation.enumerate_mutants(TOPIC, functions={"dot"})


def test_dot_mutants_are_made_and_attributed_to_dot(dot_mutants):
    assert len(dot_mutants) >= 10
    assert {m.function for m in dot_mutants} == {"dot"}
    assert {m.exercise for m in dot_mutants} == {"dot"}
    assert len({m.id for m in dot_mutants}) == len(dot_mutants)
    lines = solution_source(TOPIC).splitlines()
    for m in dot_mutants:
        assert lines[m.line - 1].strip() == m.diff.split("  ->  ")[0], m
        assert m.source != solution_source(TOPIC)


def test_a_spliced_mutant_is_the_one_cosmic_ray_makes_of_the_whole_file(dot_mutants):
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code

    source = solution_source(TOPIC)
    for m in dot_mutants:
        operator = cosmic_ray.plugins.get_operator(m.operator)()
        assert mutate_code(source, operator, m.occurrence) == m.source, m.id


def test_every_mutant_of_a_topic_has_a_distinct_id():
    made = mutation.enumerate_mutants(TOPIC, ["NumberReplacer"])
    assert made and len({m.id for m in made}) == len(made)
    assert all(m.id.startswith(f"{TOPIC}:core/NumberReplacer:") for m in made)


def test_the_reference_passes_its_suites(slot, plans):
    assert mutation.failing_tests(slot, plans, TOPIC, solution_source(TOPIC)) == []
    mutation.check_reference(slot, plans, TOPIC)


def test_dot_mutants_are_graded_and_classified(slot, plans, dot_mutants, tmp_path):
    # `u.shape is v.shape` is never true for two arrays' shapes: a length mismatch then reaches
    # np.dot, whose own ValueError names both shapes. Listed as equivalent (here only), with an
    # id of no mutant and a mutant that dies, both of which must be reported.
    obvious = next(m for m in dot_mutants if m.diff.endswith("if u.ndim != 2 or v.ndim != 1 or "
                                                             "u.shape != v.shape:"))
    listed = next(m for m in dot_mutants if m.diff.endswith("u.shape is v.shape:"))
    stale = f"{TOPIC}:core/NumberReplacer:9999:deadbeef"
    reviewed = tmp_path / "equivalent.toml"
    reviewed.write_text("".join(f'[[equivalent]]\nid = "{mid}"\nreason = "test"\n'
                                for mid in (listed.id, obvious.id, stale)))
    unkillable = tmp_path / "unkillable.toml"
    unkillable.write_text(f'[[unkillable]]\nid = "{stale}0"\nreason = "test"\n')
    verdicts, notes = mutation.run([TOPIC], functions={"dot"}, equivalent_path=reviewed,
                                   unkillable_path=unkillable, slot=slot, plans=plans,
                                   log=lambda line: None)
    by_id = {v.mutant.id: v for v in verdicts}
    assert set(by_id) == {m.id for m in dot_mutants}
    assert by_id[obvious.id].status == "killed" and by_id[obvious.id].own
    assert any(f.startswith(f"{TOPIC}.dot: ") for f in by_id[obvious.id].failing)
    assert by_id[listed.id].status == "equivalent" and by_id[listed.id].reason == "test"
    assert any(n.startswith(stale) and "no such mutant" in n and "equivalent.toml" in n
               for n in notes)
    assert any(n.startswith(stale + "0") and "no such mutant" in n and "unkillable.toml" in n
               for n in notes)
    assert any(n.startswith(obvious.id) and "killed" in n for n in notes)

    rows = {r["function"]: r for r in mutation.table(verdicts)}
    assert set(rows) == {"dot", "total"}
    dot = rows["dot"]
    killed = dot["killed (own)"] + dot["killed (other only)"]
    assert dot["made"] == len(dot_mutants) == killed + dot["survived"] + dot["equivalent"]
    assert dot["equivalent"] == 1 and dot["score"] == round(killed / (dot["made"] - 1), 3)
    text = mutation.render(verdicts, notes)
    assert "| dot " in text and f"survivors not yet explained ({dot['survived']})" in text
    assert listed.id not in text.split("survivors")[1].split("warning")[0]


def test_a_survivor_listed_as_unkillable_still_counts_as_survived_and_shows_its_reason(
        dot_mutants, tmp_path):
    """Listing explains a survivor, it does not excuse it: the score is unchanged, and the
    report shows it apart from the survivors nobody has explained, with its reason."""
    a, b = dot_mutants[:2]
    verdicts = [mutation.Verdict(a, "survived", reason="correct code raises TypeError here"),
                mutation.Verdict(b, "survived")]
    row = next(r for r in mutation.table(verdicts) if r["function"] == "total")
    assert row["survived"] == 2 and row["score"] == 0.0
    text = mutation.render(verdicts, [])
    unexplained, listed = text.split("survivors listed as unkillable (1")
    assert "survivors not yet explained (1)" in unexplained
    assert b.id in unexplained and a.id not in unexplained
    assert a.id in listed and "correct code raises TypeError here" in listed
    both = tmp_path / "both.toml"
    both.write_text(f'[[equivalent]]\nid = "{a.id}"\nreason = "x"\n'
                    f'[[unkillable]]\nid = "{a.id}"\nreason = "y"\n')
    with pytest.raises(ValueError, match="both as equivalent and as unkillable"):
        mutation.run([TOPIC], functions={"dot"}, equivalent_path=both, unkillable_path=both,
                     slot=object(), plans={}, log=lambda line: None)


def test_a_reviewed_entry_needs_an_id_and_a_one_line_reason(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[equivalent]]\nid = "x"\n')
    with pytest.raises(ValueError, match="one-line reason"):
        mutation.load_equivalent(bad)
    bad.write_text('[[equivalent]]\nid = "x"\nreason = "a"\n[[equivalent]]\nid = "x"\nreason = "b"\n')
    with pytest.raises(ValueError, match="twice"):
        mutation.load_equivalent(bad)
    assert mutation.load_equivalent(tmp_path / "absent.toml") == {}
    # the reviewed files in the repository parse
    assert isinstance(mutation.load_equivalent(), dict)
    assert isinstance(mutation.load_unkillable(), dict)


def test_annotation_only_mutants_are_recognised_and_nothing_else():
    """The harness counts a mutant that changes only a (postponed) annotation as equivalent by
    itself: such mutants were a third of the reviewed file's entries, each with the same reason."""
    original = ("from __future__ import annotations\n\n"
                "def f(x: int | None = 3) -> float | None:\n    y: int | None = x\n    return y\n")
    assert mutation.annotation_only(original, original.replace("int | None = 3", "int & None = 3"))
    assert mutation.annotation_only(original, original.replace("-> float | None", "-> float ^ None"))
    assert mutation.annotation_only(original, original.replace("y: int | None", "y: int & None"))
    assert not mutation.annotation_only(original, original.replace("= 3", "= 4"))
    assert not mutation.annotation_only(original, original.replace("return y", "return -y"))
    evaluated = original.replace("from __future__ import annotations\n", "")
    assert not mutation.annotation_only(evaluated, evaluated.replace("int | None = 3",
                                                                     "int & None = 3"))


def test_at_risk_picks_the_mutants_only_changed_tests_killed():
    """After a cost cut only the mutants that the rewritten tests alone killed need grading
    again: one also killed by an untouched test, a survivor and an equivalent one do not."""
    previous = {"mutants": [
        {"id": "a", "status": "killed", "failing": ["t.dot: blocks"]},
        {"id": "b", "status": "killed", "failing": ["t.dot: blocks", "t.dot: scale"]},
        {"id": "c", "status": "killed", "failing": ["t.dot: blocks", "t.dot: ragged"]},
        {"id": "d", "status": "survived", "failing": []},
        {"id": "e", "status": "equivalent", "failing": []},
    ]}
    assert mutation.at_risk(previous, ["blocks"]) == {"a"}
    assert mutation.at_risk(previous, ["blocks", "scale"]) == {"a", "b"}
    assert mutation.at_risk(previous, ["nothing"]) == set()
