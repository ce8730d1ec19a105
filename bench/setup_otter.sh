#!/usr/bin/env bash
# Otter-Grader 7 for the throughput benchmark (bench/grade_throughput.py, the `otter run` row),
# in a venv of its own: bench/.otter-venv (git-ignored). Idempotent: a second run only checks.
#
# Not in .venv: Otter's pins (pandas, nbconvert, jupytext, ...) must not move the project's
# environment. The course package is not pip-installed here either: `pip install -e` would
# rewrite the checkout's egg-info (shared with whoever works in it) and drag in the project's
# whole dependency list (pytest, rich, matplotlib, watchfiles, pyseccomp) for the resolver to
# weigh against Otter's pins. A .pth file puts the repository root on this venv's sys.path
# instead: the suites, the solutions and bench/otter_bridge.py import from the checkout as is.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/bench/.otter-venv"
PY="$VENV/bin/python"
STAMP="$VENV/.installed"

CHECK="import otter, ipykernel, torch, triton, hypothesis, numpy, autograder.exports.nbgrader.adapter"
version() { "$VENV/bin/otter" --version 2>/dev/null | grep -o "Otter-Grader version: .*" || true; }

if [[ -f "$STAMP" ]] && "$PY" -c "$CHECK" 2>/dev/null; then
    echo "otter venv ready: $VENV ($(version))"
    exit 0
fi

python3 -m venv "$VENV"
"$PY" -m pip install -q --upgrade pip
# torch first and pinned (the CPU wheel on disk, as the Makefile does for .venv): left to the
# resolver an unpinned torch pulls a multi-GB CUDA build. Hypothesis in the project's range:
# autograder/authoring/suite.py patches two of its internals (tests/test_hypothesis_patches.py).
"$PY" -m pip install -q "torch==2.13.0" "triton==3.9.0"
# ipykernel: `otter run` executes the submission in a Jupyter kernel (a .py script becomes a
# one-cell notebook), yet otter-grader 7.0.0 does not depend on it; without it nbconvert finds
# no kernel ("Native kernel (python3) is not available"), or another venv's registered one.
"$PY" -m pip install -q "otter-grader==7.0.0" ipykernel numpy "hypothesis>=6.170,<6.171"
SITE="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$ROOT" > "$SITE/course_checkout.pth"
"$PY" -c "$CHECK"
touch "$STAMP"
echo "otter venv ready: $VENV ($(version))"
