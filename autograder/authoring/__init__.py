"""What a suite author uses: ``graded`` tests, ``expect_*`` checks, shared strategies, stubs.
"""
