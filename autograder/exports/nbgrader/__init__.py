"""The nbgrader course: export, the in-notebook adapter, the feedback preprocessor.
"""
