#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (written by
# `course gradescope`). Choose a base image whose python3 the course supports (3.10 or newer).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# No recommends (a compiler, python3-dev: ~150 packages): every dependency comes as a wheel, and
# the venv brings its own pip.
apt-get install -y -q --no-install-recommends python3 python3-venv
# The workers' sandbox: bubblewrap's allow-list view where the container lets it make
# namespaces (else the grader falls back, as the course's threat model says), libseccomp
# for the keyring filter.
apt-get install -y -q --no-install-recommends bubblewrap libseccomp2
# The venv lives outside /autograder: grading workers may not read anything under /autograder.
python3 -m venv @{venv}
@{venv}/bin/python -m pip install -q --upgrade pip
# torch first, pinned, from PyTorch's CPU index: left to the resolver, an unpinned torch pulls a
# multi-GB CUDA build that Gradescope's CPU machines cannot use. TORCH_INDEX_URL overrides the
# index (a mirror, or PyPI plus PIP_FIND_LINKS/PIP_CONSTRAINT naming a local CPU wheel, as
# scripts/gradescope_root_check.sh does where download.pytorch.org cannot be reached).
TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
@{venv}/bin/python -m pip install -q "torch==2.13.0" --index-url "$TORCH_INDEX_URL"
# The course itself, with its pinned dependencies: among them triton==3.9.0 (a 286 MB wheel from
# PyPI), whose interpreter runs topic 8's kernels on Gradescope's CPUs (TRITON_INTERPRET=1 is set
# by the grader for its workers, not here).
@{venv}/bin/python -m pip install -q -e /autograder/source
# rfc3987-syntax (pulled in by jupyter-events) slows every nbformat import by ~2 s; unused.
@{venv}/bin/python -m pip uninstall -q -y rfc3987-syntax || true
# The grading plan (the reference graded once, every test's requests and replies kept): each
# run_autograder replays it instead of grading call by call, the same grades in a few seconds.
# If it fails, runs grade call by call (slower, same grades): the image is still good.
@{venv}/bin/python -m autograder.exports.gradescope prepare || true
# Byte-compile the grader once here: run_autograder and the sandbox's zygotes run with
# PYTHONDONTWRITEBYTECODE=1, so every module prepare did not import (the zygote's, the result
# writers') was compiled again in each submission's run, twice for the zygote's.
@{venv}/bin/python -m compileall -q /autograder/source/autograder /autograder/source/solutions \
    > /dev/null || true
