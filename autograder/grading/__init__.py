"""The grading core: reading uploads, collecting tests, running them, the batch, the replay plan.
"""
