"""Where student code runs, and the trusted code that drives it.

Trusted side (the grader's process): ``session`` (one submission), ``pipeline`` (a batch's
calls sent ahead), ``slot`` (a zygote, its uid and cgroup), ``protocol`` (requests and the one
reply interpreter), ``errors`` (the faults and what a hidden test may say of them), ``allowlist``
and ``cgroups``. Shared by both sides: ``frames`` (the u64 framing), ``codec`` (plain data),
``tensor_tags``, ``host``. Untrusted side (only in the zygote or a worker, next to student code):
``zygote``, ``worker``, ``interpreter``, ``isolation``, ``probes``. The trusted side never
imports the untrusted side's modules (tests/test_boundaries.py). See
docs/design/grading-contract.md.
"""
