"""Hostile and broken submissions for the grader's own tests (see ``attacks.py``)."""
