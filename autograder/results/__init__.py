"""What a graded submission becomes on disk: results JSON, grades.csv, feedback, report.
"""
