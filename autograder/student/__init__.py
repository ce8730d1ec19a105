"""The student's loop: check, list, watch, reset, submit.
"""
