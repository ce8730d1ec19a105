"""The trusted side that drives the sandbox, in the grader's process.

``slot`` (a zygote in bubblewrap's allow-list view, ``allowlist``, with its uid and its control
group, ``cgroups``), ``session`` (one submission on a slot: its files, a worker forked on demand,
calls with limits and a deadline), ``pipeline`` (a batch's recorded calls sent at once),
``protocol`` (requests and the one reply interpreter) and ``errors`` (the faults, and what a
hidden test may say of them). Nothing here imports :mod:`autograder.sandbox`, the untrusted side
(tests/test_boundaries.py); both speak :mod:`autograder.wire`. See
docs/design/grading-contract.md.
"""
