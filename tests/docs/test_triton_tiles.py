"""Lesson 8's two-dimensional tiles: the scores kernel the lesson shows (a snippet section of its
notebook, run here exactly as shown) against ``q @ k.T``, through Triton's interpreter.

``TRITON_INTERPRET=1`` is set before ``triton`` is imported: Triton reads it when a kernel is
defined, and without a GPU only the interpreter can run one.
"""

from __future__ import annotations

import contextlib
import io
import os

os.environ["TRITON_INTERPRET"] = "1"

import pytest
import torch
import triton
import triton.language as tl

from .test_numbers import L8, NOTEBOOK8, lesson_text


def run_section(name: str, capture: io.StringIO | None = None) -> dict:
    """Run section ``name`` of lesson 8's notebook on the CPU; its namespace afterwards."""
    text = NOTEBOOK8.read_text(encoding="utf-8")
    body = text.split(f"# --8<-- [start:{name}]\n")[1].split(f"# --8<-- [end:{name}]")[0]
    namespace = {"torch": torch, "triton": triton, "tl": tl, "device": "cpu"}
    with contextlib.redirect_stdout(capture or io.StringIO()):
        exec(compile(body, f"{NOTEBOOK8.name}:{name}", "exec"), namespace)  # noqa: S102
    return namespace


@pytest.fixture(scope="module")
def scores_and_row_max():
    return run_section("tiles2d")["scores_and_row_max"]


@pytest.mark.parametrize(
    "B, H, L, S, E, block_m, block_n",
    [
        (1, 1, 16, 16, 16, 16, 16),  # one tile exactly
        (2, 3, 20, 37, 16, 16, 16),  # ragged in both directions, several heads
        (1, 2, 5, 70, 32, 16, 32),  # fewer queries than one block, a wider E
        (1, 1, 33, 1, 16, 32, 16),  # a single key: every tile but one column masked
        (2, 1, 40, 40, 16, 32, 64),  # one key block wider than S
    ],
)
def test_scores_kernel_matches_q_kT(scores_and_row_max, B, H, L, S, E, block_m, block_n):
    gen = torch.Generator().manual_seed(L * S + E)
    q = torch.randn(B, H, L, E, generator=gen).half()
    k = torch.randn(B, H, S, E, generator=gen).half()
    s, m = scores_and_row_max(q, k, block_m=block_m, block_n=block_n)
    expected = q.float() @ k.float().transpose(-1, -2)  # exact products of fp16 in float32
    assert s.shape == (B, H, L, S) and s.dtype == torch.float32
    torch.testing.assert_close(s, expected, atol=1e-4, rtol=1e-5)
    torch.testing.assert_close(m, expected.amax(dim=-1), atol=1e-4, rtol=1e-5)


def test_masked_keys_never_win_the_row_maximum(scores_and_row_max):
    """Keys past S load as zeros and would score 0; with every real score negative a kernel
    that forgot the -inf would report a maximum of 0."""
    q = torch.ones(1, 1, 16, 16).half()
    k = -torch.ones(1, 1, 5, 16).half()  # every real score is -16
    _, m = scores_and_row_max(q, k)
    assert torch.equal(m, torch.full((1, 1, 16), -16.0))


def test_peek_prints_the_pointer_offsets():
    out = io.StringIO()
    run_section("peek", out)
    text = out.getvalue()
    assert "offsets of the q tile" in text and "row sums" in text
    assert "255" in text  # the last element's offset, 15 * 16 + 15


def test_lesson_shows_the_tiles_before_the_forward_kernel():
    text = lesson_text(L8)
    assert text.index("Two-dimensional tiles") < text.index("The forward kernel")
