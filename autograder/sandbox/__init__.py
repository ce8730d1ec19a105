"""Where student code runs: the untrusted side of the trust boundary.

Everything in this folder runs only in a slot's zygote or in a worker, next to student code:
``zygote`` (the pre-warmed process that forks workers), ``worker`` (serves requests by running
student code), ``isolation``, ``host_counters``, ``libc`` and ``seccomp_filter`` (what a worker
does to itself before it runs student code), ``interpreter`` (the finders), ``tracebacks``,
``probes`` and ``triton_warm``. It imports only :mod:`autograder.wire` and the host's facts
(:mod:`autograder.host`, :mod:`autograder.limits`, :mod:`autograder.paths`); the grader's side,
:mod:`autograder.driver`, never imports it (tests/test_boundaries.py; the one crossing, the
nbgrader adapter, says why there). See docs/design/threat-model.md.
"""
