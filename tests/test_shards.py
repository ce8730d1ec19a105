"""Grading in shards: the split, `course grade --shard`, `course report`, `course cluster`.

The end-to-end test grades a small class (four submissions of topic 1) once unsharded and once
in three shards into one output folder, and asks for the same bytes (except execution_time).
The same on a real Slurm cluster is scripts/slurm_check.sh (opt-in: it installs Slurm).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from autograder.exports import cluster
from autograder.grading import shards
from tests.helpers import course, course_env, finish, solution_source, spawn, stub_source

# ---------------------------------------------------------------- the split


@pytest.mark.parametrize("text, want", [("0/1", (0, 1)), ("3/4", (3, 4)), (" 2 / 5 ", (2, 5))])
def test_parse_reads_k_of_n(text, want):
    assert tuple(shards.parse(text)) == want


@pytest.mark.parametrize("text, says", [("4/4", "below N=4"), ("1/0", "between 1"),
                                        ("1", "must be K/N"), ("-1/3", "must be K/N"),
                                        ("a/b", "must be K/N"), ("0/10001", "between 1")])
def test_parse_refuses_what_no_shard_is(text, says):
    with pytest.raises(ValueError, match=says):
        shards.parse(text)


def test_select_splits_by_sorted_id_balanced_disjoint_and_whole(tmp_path):
    ids = ["zed", "b", "a.zip", "ç", "A", "m", "c"]
    paths = [tmp_path / i for i in ids]
    parts = [shards.select(list(reversed(paths)), shards.Shard(k, 3)) for k in range(3)]
    assert sorted(len(p) for p in parts) == [2, 2, 3]
    assert sorted(p for part in parts for p in part) == sorted(paths)
    # sorted by id (a zip's id is its stem): A a b c m zed ç -> shard 0 gets A, c, ç
    assert [p.name for p in parts[0]] == ["A", "c", "ç"]
    assert parts == [shards.select(paths, shards.Shard(k, 3)) for k in range(3)]


def test_a_shard_with_no_submission_is_empty(tmp_path):
    assert shards.select([tmp_path / "a"], shards.Shard(1, 2)) == []


def test_a_shard_removes_only_its_own_stale_temp_files(tmp_path):
    """Shards share --out: another shard's temp file is a write in progress, never removed."""
    import tempfile

    from autograder.results import writers

    for sub in ("results", "feedback"):
        (tmp_path / sub).mkdir()
    temps = {name: Path(tempfile.mkstemp(dir=tmp_path / sub, prefix=f".{name}.",
                                         suffix=".tmp")[1])
             for sub, name in [("results", "a.json"), ("feedback", "a.md"),
                               ("results", "a.json.json"), ("results", "b.json")]}
    writers.remove_stale_temps(tmp_path, ["a"])
    assert sorted(n for n, p in temps.items() if p.exists()) == ["a.json.json", "b.json"]
    writers.remove_stale_temps(tmp_path)  # an unsharded batch owns the folder: all go
    assert not any(p.exists() for p in temps.values())


# ---------------------------------------------------------------- course cluster


def _rendered(engine: str, shards_: int = 4) -> str:
    return cluster.render(engine, "class dir", "/grading/out", shards_, jobs=2,
                          course="/opt/venv/bin/course")


def test_slurm_script_submits_an_array_and_a_dependent_report(tmp_path):
    text = _rendered("slurm")
    script = tmp_path / "grade.sh"
    script.write_text(text)
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert "--array=0-$((SHARDS - 1))" in text and "SHARDS=4" in text
    assert '--dependency="afterany:$array"' in text
    assert f"CLASS='{Path('class dir').absolute()}'" in text  # absolute, shell-quoted
    assert "COURSE=/opt/venv/bin/course" in text


def test_slurm_script_runs_against_a_fake_sbatch(tmp_path):
    """The script's sbatch calls, run through a stand-in that records them: each wrapped
    command, run by /bin/sh as Slurm would, is the grade and report commands exactly."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "sbatch").write_text(
        "#!/bin/sh\nfor a in \"$@\"; do case $a in --wrap=*) printf '%s\\n' \"${a#--wrap=}\" "
        f">> {tmp_path}/wraps;; esac; done\necho 17\n")
    (bin_ / "sbatch").chmod(0o755)
    (bin_ / "show").write_text("#!/bin/sh\nfor a in \"$@\"; do printf '<%s>' \"$a\"; done\n")
    (bin_ / "show").chmod(0o755)
    text = cluster.render("slurm", str(tmp_path / "my class"), str(tmp_path / "o'ut"), 3,
                          course=str(bin_ / "show"))
    (tmp_path / "grade.sh").write_text(text)
    env = {**course_env(), "PATH": f"{bin_}:/usr/bin:/bin"}
    ran = subprocess.run(["bash", str(tmp_path / "grade.sh")], env=env, capture_output=True,
                         text=True, check=True)
    assert "report job: 17" in ran.stdout
    grade, report = (tmp_path / "wraps").read_text().splitlines()
    shown = [subprocess.run(["sh", "-c", w], env={**env, "SLURM_ARRAY_TASK_ID": "2"},
                            capture_output=True, text=True, check=True).stdout
             for w in (grade, report)]
    assert shown[0] == (f"<grade><--class><{tmp_path}/my class><--out><{tmp_path}/o'ut>"
                        "<--jobs><1><--shard><2/3>")
    assert shown[1] == f"<report><{tmp_path}/o'ut><--class><{tmp_path}/my class>"


def test_kubernetes_manifest_is_an_indexed_job():
    doc = yaml.safe_load(_rendered("kubernetes"))
    spec = doc["spec"]
    assert doc["kind"] == "Job" and spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == 4
    (box,) = spec["template"]["spec"]["containers"]
    assert '--shard "$JOB_COMPLETION_INDEX/4"' in box["args"][0]
    assert box["env"] == [{"name": "COURSE_PHASE_LOCK",
                           "value": "/run/lock/node/course-grading-phases.lock"}]
    assert {"name": "node-lock", "hostPath": {"path": "/run/lock", "type": "Directory"}} in \
        spec["template"]["spec"]["volumes"]
    assert "--class 'class dir'" in box["args"][0]


def test_github_workflow_is_a_matrix_and_a_report_job():
    doc = yaml.safe_load(_rendered("github", 3))
    assert doc["jobs"]["grade"]["strategy"]["matrix"]["shard"] == [0, 1, 2]
    assert doc["jobs"]["report"]["needs"] == "grade"
    runs = [s.get("run", "") for s in doc["jobs"]["report"]["steps"]]
    assert ".venv/bin/course report /grading/out --class 'class dir'" in runs


@pytest.mark.parametrize("kw, says", [({"shards_": 0}, "--shards"), ({"class_dir": "a\nb"},
                                                                      "--class")])
def test_cluster_refuses_values_the_file_cannot_hold(kw, says):
    args = {"class_dir": "c", "out": "o", "shards_": 2, **kw}
    with pytest.raises(cluster.ClusterError, match=says):
        cluster.render("slurm", args["class_dir"], args["out"], args["shards_"])


# ---------------------------------------------------------------- end to end


def _class(folder: Path) -> Path:
    """Four submissions of topic 1 alone (the other topics missing: cheap to grade)."""
    # A wrong dot that prints: a batch's plan runs calls a test stopped at its first failure
    # never makes, so the output it keeps differs with and without one (batch.PLAN_MIN).
    wrong = solution_source("ex01_vectors").replace(
        "    return float(", "    print('dot called')\n    return 1.0 + float(", 1)
    assert wrong != solution_source("ex01_vectors")
    for sid, text in {"ann": solution_source("ex01_vectors"), "bob": stub_source("ex01_vectors"),
                      "cy": wrong, "dee": "print('hello')\n" + solution_source("ex01_vectors")
                      }.items():
        (folder / sid).mkdir(parents=True)
        (folder / sid / "ex01_vectors.py").write_text(text, encoding="utf-8")
    return folder


def _results(out: Path) -> dict[str, dict]:
    docs = {}
    for p in sorted((out / "results").glob("*.json")):
        doc = json.loads(p.read_text("utf-8"))
        doc.pop("execution_time")
        docs[p.name] = doc
    return docs


@pytest.mark.slow
def test_shards_merged_are_byte_identical_to_one_unsharded_run(tmp_path):
    cls = _class(tmp_path / "class")
    whole, merged = tmp_path / "whole", tmp_path / "merged"
    run = course("grade", "--class", str(cls), "--out", str(whole), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]

    first = course("grade", "--class", str(cls), "--out", str(merged), "--shard", "0/3",
                   timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "shard 0/3: 2 of the class's 4 submissions" in first.stderr
    assert sorted(p.name for p in (merged / "results").iterdir()) == ["ann.json", "dee.json"]
    assert not (merged / "grades.csv").exists() and not (merged / "report.html").exists()

    early = course("report", str(merged), "--class", str(cls))
    assert early.returncode == 1
    assert "2 of 4 submissions have no result yet: bob (no result), cy (no result)" in early.stderr
    assert not (merged / "grades.csv").exists()

    # The other two shards at once, into the same folder.
    rest = [spawn("grade", "--class", str(cls), "--out", str(merged), "--shard", f"{k}/3")
            for k in (1, 2)]
    for proc in rest:
        done = finish(proc, 600)
        assert done.returncode == 0, done.stderr[-3000:]
    final = course("report", str(merged), "--class", str(cls))
    assert final.returncode == 0, final.stderr
    for name in ("grades.csv", "report.html"):
        assert (merged / name).read_bytes() == (whole / name).read_bytes(), name
    for sid in ("ann", "bob", "cy", "dee"):
        md = f"feedback/{sid}.md"
        assert (merged / md).read_bytes() == (whole / md).read_bytes(), md
    assert _results(merged) == _results(whole)
    (merged / "grades.csv").unlink()
    every = course("report", str(merged))  # without --class: every result in the folder
    assert every.returncode == 0, every.stderr
    assert (merged / "grades.csv").read_bytes() == (whole / "grades.csv").read_bytes()

    # A shard run again (as after a kill) regrades only what it had not written.
    (merged / "results" / "dee.json").unlink()
    again = course("grade", "--class", str(cls), "--out", str(merged), "--shard", "0/3",
                   timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 unchanged, not regraded" in again.stdout
    assert _results(merged) == _results(whole)


def test_report_without_results_is_a_usage_error(tmp_path):
    got = course("report", str(tmp_path))
    assert got.returncode == 2 and "no results/ folder" in got.stderr


def test_shards_and_the_report_name_an_upload_by_the_id_it_is_graded_under(tmp_path):
    """`dup.zip` beside `dup.ZIP` are graded under derived ids (grading/ids.py): the split and
    `course report --class` must use those, or the report waits for two results named `dup`
    that no shard writes (a new user's class never completed)."""
    import zipfile

    from autograder.grading import ids

    cls = tmp_path / "class"
    cls.mkdir()
    for name in ("dup.zip", "dup.ZIP"):
        with zipfile.ZipFile(cls / name, "w") as zf:
            zf.writestr("ex01_vectors.py", "")
    (cls / "bob").mkdir()
    paths = sorted(cls.iterdir())
    graded = sorted(shards.graded_id(p) for p in paths)
    assert graded == sorted(ids.identify(p)[0] for p in paths)
    assert "bob" in graded and "dup" not in graded and len(set(graded)) == 3
    gaps = shards.missing(tmp_path / "out", paths)
    assert sorted(g.id for g in gaps) == graded
