# Two commands on a fresh clone: `make demo` and `make test`. Both create .venv and install first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# torch==2.13.0 first: on the course machines that is a CPU wheel on disk; left to the resolver,
# an unpinned torch pulls a multi-GB CUDA build. pip's constraint file (if any) stays in force.
TORCH  := torch==2.13.0
# Triton pinned beside it (topic 8; the CPU build of torch does not bring it). Linux only, as
# pyproject.toml marks it: Triton has no wheel for macOS or Windows, where topics 1-7 still run.
TRITON := triton==3.9.0

.PHONY: venv demo test test-quick docs serve stubs check clean mutation

venv: $(STAMP)

$(STAMP): pyproject.toml scripts/install_sandbox.sh
	# bubblewrap and libseccomp for the grader's sandbox, as root with apt-get (else a note).
	# Not fatal: without them the grader falls back (docs/design/threat-model.md), and the
	# tests that need them say so.
	# A line per step, and the whole time up front: a new user measured 4.5 minutes where this
	# said "about 3", with nothing printed in between (pip runs -q: quiet unless it fails).
	@echo '==> setting up $(VENV) in 5 steps: about 5 minutes the first time (pip stays quiet unless something fails)'
	@echo '==> [1/5] the sandbox packages bubblewrap and libseccomp (apt-get, as root only)'
	-bash scripts/install_sandbox.sh
	@echo '==> [2/5] creating $(VENV) with $(PYTHON)'
	$(PYTHON) -m venv $(VENV)
	@echo '==> [3/5] upgrading pip'
	$(PY) -m pip install -q --upgrade pip
	@echo '==> [4/5] installing torch $(TORCH:torch==%=%) (CPU build) and triton (Linux only): the largest step'
	$(PY) -m pip install -q $(TORCH) $$(if [ "$$(uname -s)" = Linux ]; then echo '$(TRITON)'; fi)
	@echo '==> [5/5] installing the course and its tools (pytest, hypothesis, nbgrader, mkdocs, ...)'
	$(PY) -m pip install -q -e '.[dev]'
	# rfc3987-syntax adds ~2 s to every nbformat/jsonschema import (docs/design/measured-facts.md) and nothing we use needs it
	-$(PY) -m pip uninstall -q -y rfc3987-syntax
	touch $(STAMP)
	@echo '==> $(VENV) is ready: source $(VENV)/bin/activate'

demo: $(STAMP)
	$(VENV)/bin/course demo

test: $(STAMP)
	$(PY) -m pytest -n auto --dist loadgroup --no-loadscope-reorder -q --durations=25

# The inner loop (<= 5 minutes on 2 cores): everything but the slow end-to-end and browser
# tests, and a sample of the bank variants (tests/test_banks.py: QUICK_SAMPLE, PLAN_SAMPLE).
test-quick: $(STAMP)
	$(PY) -m pytest -n auto --dist loadgroup --no-loadscope-reorder -q -m "not slow and not browser" -x

# The hidden suites' mutation score (bench/mutation.py; hours on 2 cores, not part of `make test`).
mutation: $(STAMP)
	$(PY) bench/mutation.py

docs: $(STAMP)
	bash scripts/setup_docs.sh
	$(VENV)/bin/mkdocs build --strict

serve: $(STAMP)
	bash scripts/setup_docs.sh
	$(VENV)/bin/mkdocs serve

stubs: $(STAMP)
	$(VENV)/bin/course stubs

check: $(STAMP)
	$(VENV)/bin/course check

clean:
	rm -rf $(VENV) site build
