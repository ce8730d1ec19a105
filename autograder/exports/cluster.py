"""`course cluster slurm|kubernetes|github`: the file that has a cluster engine grade a class
in shards (:mod:`autograder.grading.shards`), filled in from templates/cluster/.

- ``slurm``: a bash script to run on a login node; it submits an array job
  (``sbatch --array=0-(N-1)``, one ``course grade --shard K/N`` per task) and a report job
  that depends on it (``--dependency=afterany``), which runs ``course report``.
- ``kubernetes``: an Indexed Job manifest (``completionMode: Indexed``); each pod grades the
  shard of its ``JOB_COMPLETION_INDEX``, then tries ``course report`` (the last one writes it).
- ``github``: a GitHub Actions workflow, a matrix of N shard jobs that upload their outputs as
  artifacts, and a report job that merges them and runs ``course report``.

No engine is contacted here: the file is printed, to be read and submitted by the instructor.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from autograder import templating
from autograder.grading.shards import MAX_SHARDS

__all__ = ["ENGINES", "ClusterError", "course_command", "render"]

#: Engine name -> its template (templates/cluster/).
ENGINES = {"slurm": "cluster/slurm.sh", "kubernetes": "cluster/kubernetes.yaml",
           "github": "cluster/github.yml"}

#: The image the Kubernetes manifest names unless told otherwise (one the instructor builds).
DEFAULT_IMAGE = "course-grader:latest"


class ClusterError(ValueError):
    """A value that cannot go into the file (the message names the option)."""


def course_command() -> str:
    """The ``course`` executable beside this interpreter (a virtual environment's), so that a
    compute node runs the same installation; ``"course"`` (from PATH) when there is none."""
    beside = Path(sys.executable).parent / "course"
    return str(beside.absolute()) if beside.is_file() else "course"


def _checked(option: str, value: str) -> str:
    """``value`` when it is a usable path text: not empty, no control character (a newline
    would end a shell or YAML line early)."""
    if not value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ClusterError(f"{option} must be a non-empty path without control characters, "
                           f"not {value!r}")
    return value


def render(engine: str, class_dir: str, out: str, shards: int, *, jobs: int = 1,
           image: str = DEFAULT_IMAGE, course: str | None = None) -> str:
    """The text of ``engine``'s file grading ``class_dir`` into ``out`` in ``shards`` shards,
    ``jobs`` worker slots (and CPUs) each.

    Paths are used as the engine's machines see them: for ``slurm`` made absolute (compute
    nodes start elsewhere), for ``kubernetes`` as seen inside the pod (under /grading), for
    ``github`` relative to the repository. Every value is quoted for the shell (``shlex``) and,
    where it stands alone in YAML, as a JSON string (valid YAML).

    Raises:
        ClusterError: ``engine`` is not one of :data:`ENGINES`, ``shards`` is not between 1
            and :data:`~autograder.grading.shards.MAX_SHARDS`, ``jobs`` is below 1, or a path
            is empty or holds a control character.
    """
    if engine not in ENGINES:
        raise ClusterError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    if not 1 <= shards <= MAX_SHARDS:
        raise ClusterError(f"--shards must be between 1 and {MAX_SHARDS}, not {shards}")
    if jobs < 1:
        raise ClusterError(f"--jobs must be at least 1, not {jobs}")
    class_dir, out = _checked("--class", class_dir), _checked("--out", out)
    image = _checked("--image", image)
    if engine == "slurm":
        class_dir, out = str(Path(class_dir).absolute()), str(Path(out).absolute())
    return templating.fill(
        "autograder.exports", ENGINES[engine], shards=shards, last=shards - 1, jobs=jobs,
        class_dir=shlex.quote(class_dir), out=shlex.quote(out), out_yaml=json.dumps(out),
        course=shlex.quote(course or course_command()), image=json.dumps(image),
        shard_list=", ".join(str(k) for k in range(shards)),
        # a pod that failed is started again this often in all (Kubernetes' backoffLimit)
        retries=2 * shards)
