"""Linear Algebra for Transformers: the `course` tool (stubs, sandboxed grading, exports)."""

__version__ = "0.1.0"
