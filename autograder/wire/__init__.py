"""What both sides of the trust boundary share: the wire format between the grader and a worker.

``frames`` (the u64-length framing, one parser), ``codec`` (plain data and arrays, never a
pickle) and ``tensor_tags`` (the closed sets of dtype and device tags). The grader's process
(:mod:`autograder.driver`) and the worker (:mod:`autograder.sandbox`) both import these, and
nothing else of each other; the rest both sides read is the host's facts (:mod:`autograder.host`,
:mod:`autograder.limits`, :mod:`autograder.paths`). See docs/design/wire-format.md.
"""
