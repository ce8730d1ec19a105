"""Where student code runs, and the trusted code that drives it.

Trusted side (the grader's process): ``session``, ``slot``-level code, ``allowlist``, ``cgroups``,
``codec``. Untrusted side (the worker, a process that holds student code): ``zygote``,
``worker``, ``isolation``, ``probes``. The trusted side never imports the untrusted side's
modules (tests/test_architecture.py). See docs/design/grading-contract.md.
"""
