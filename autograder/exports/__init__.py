"""Exports to the systems instructors use: the student release, Gradescope, nbgrader.
"""
