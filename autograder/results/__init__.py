"""What a graded submission becomes on disk: results JSON, grades.csv, feedback, report.

``model`` (the one result type, written and read back), ``writers`` (the files, atomically),
``report`` (report.html, from ``templates/``), ``text`` (escaping of student text per output),
``version`` (the grader version and the files it digests).
"""
