"""What the build hook (docs/hooks/build_assets.py) adds to the pages: the measured tables that
lessons 1, 3 and 4 show, written into docs/generated/ at build time, each saying what the lesson's
prose says it says; and the typography fix that keeps inline maths with its punctuation."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from .conftest import DOCS
from .test_numbers import L1, L3, L8, lesson_text


def load_hook():
    spec = importlib.util.spec_from_file_location(
        "build_assets", DOCS / "hooks" / "build_assets.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = load_hook()


@pytest.mark.parametrize("d", hook.COSINE_DIMS)
def test_random_cosines_spread_like_one_over_sqrt_d(d):
    c = hook.random_cosines(d)
    assert len(c) == 2000  # the "2,000 pairs" of lesson 1
    assert c.std() == pytest.approx(d**-0.5, rel=0.1)


def test_random_cosines_concentrate_as_d_grows():
    spreads = [hook.random_cosines(d).std() for d in hook.COSINE_DIMS]
    assert spreads == sorted(spreads, reverse=True)
    # lesson 1: at GPT-2's width a cosine of 0.2 is far beyond chance (more than 5 spreads out)
    assert 0.2 > 5 * hook.random_cosines(768).std()
    assert 768 in hook.COSINE_DIMS and 2 in hook.COSINE_DIMS


@pytest.mark.parametrize("d", hook.SCALING_DIMS)
def test_scores_spread_like_sqrt_d_and_one_after_scaling(d):
    raw, scaled, top_raw, top_scaled = hook.score_scaling(d)
    assert raw == pytest.approx(np.sqrt(d), rel=0.1)
    assert scaled == pytest.approx(1.0, rel=0.1)
    assert top_raw > top_scaled


def test_unscaled_top_weight_grows_with_d():
    tops = [hook.score_scaling(d)[2] for d in hook.SCALING_DIMS]
    assert tops == sorted(tops) and tops[-1] > 0.9


def test_saturation_table_shrinks_the_gradient():
    rows = hook.saturation_table().splitlines()[2:]
    jac = [float(row.split("|")[-2]) for row in rows]
    assert len(jac) == len(hook.SATURATION_GAINS) and jac == sorted(jac, reverse=True)
    assert jac[-1] < 1e-6 < jac[0]


@pytest.mark.parametrize(
    "lesson, fragment",
    [(L1, "evidence-cosines.md"), (L3, "evidence-scaling.md"), (L3, "evidence-saturation.md")],
)
def test_lessons_include_the_evidence(lesson, fragment):
    text = (DOCS / "lessons" / lesson).read_text(encoding="utf-8")
    assert f'--8<-- "docs/generated/{fragment}"' in text
    assert fragment in hook.evidence_tables()
    assert "built" in lesson_text(lesson)  # the page says the table is measured at build time


def test_inline_maths_keeps_its_punctuation():
    html = '<p>so <span class="arithmatex">\\(x_1\\)</span>, then <span class="arithmatex">\\(y\\)</span></p>'
    out = hook.keep_punctuation(html)
    assert '<span class="math-punct"><span class="arithmatex">\\(x_1\\)</span>,</span>' in out
    assert out.endswith('<span class="arithmatex">\\(y\\)</span></p>')  # nothing to keep


def test_lora_update_grows_like_sqrt_r_and_rslora_keeps_it():
    """Lesson 4: r unrelated rank-one terms add up to about sqrt(r) times one; LoRALinear's
    alpha / r therefore shrinks the update as r grows, and alpha / sqrt(r) keeps it."""
    sizes = {r: hook.lora_update_size(r) for r in hook.LORA_RANKS}
    for r, (raw, by_r, by_sqrt) in sizes.items():
        assert raw == pytest.approx(np.sqrt(r), rel=0.1)
        assert by_sqrt == pytest.approx(hook.LORA_ALPHA, rel=0.1)
    by_r = [sizes[r][1] for r in hook.LORA_RANKS]
    assert by_r == sorted(by_r, reverse=True) and by_r[0] > 3 * by_r[-1]
    assert "evidence-lora-scale.md" in hook.evidence_tables()
    assert '--8<-- "docs/generated/evidence-lora-scale.md"' in (
        DOCS / "lessons" / "04-svd-lora.md"
    ).read_text(encoding="utf-8")
    assert "built" in lesson_text("04-svd-lora.md")


def test_published_flash_attention_numbers_fill_the_missing_column():
    """Lesson 8's table of the papers' numbers: the column a paper does not state is computed
    from the GPU's peak (FlashAttention-3's 740 TFLOP/s is 75 % of the H100's 989)."""
    rows = {(k, g, d): (rate, share) for k, g, d, _, rate, share, _ in hook.published_rows()}
    rate, share = rows[("FlashAttention-3", "H100", "fp16")]
    assert rate == (740,) and round(100 * share[0]) == 75
    rate, share = rows[("FlashAttention-2", "H100", "fp16")]
    assert round(rate[0]) == 346 and share == (0.35,)
    table = hook.published_table()
    assert "| 740 | about 75 % |" in table and "| about 346 | 35 % |" in table
    assert all("(20" in row[-1] for row in hook.PUBLISHED)  # every row names its source
    peaks = {row[1]: row[3] for row in hook.PUBLISHED if row[2] == "fp16"}
    assert round(peaks["H100"] / peaks["A100"]) == 3  # "about three times faster"
    assert "about three times faster (989 against 312 TFLOP/s)" in lesson_text(L8)


def test_lesson_8_includes_the_published_and_measured_tables():
    text = (DOCS / "lessons" / L8).read_text(encoding="utf-8")
    assert '--8<-- "docs/generated/published-flash-attention.md"' in text
    assert '--8<-- "docs/measured/flash-attention-gpu.md"' in text
    assert (DOCS / "measured" / "flash-attention-gpu.md").is_file()
    script = (DOCS.parent / "scripts" / "gpu_check.sh").read_text(encoding="utf-8")
    assert "docs/measured/flash-attention-gpu.md" in script  # where the GPU run writes it


def test_lesson_5_describes_the_model_its_notebook_trains():
    """Lesson 5's trained head: the sizes the prose gives are the notebook's (the notebook
    itself asserts the accuracy and the 7-back pattern each time the site is built)."""
    source = (DOCS / "notebooks" / "05-attention.py").read_text(encoding="utf-8")
    trained = source.split("[start:trained]")[1].split("[end:trained]")[0]
    assert "V, HALF, WIDTH = 16, 8, 32" in trained
    assert "range(150)" in trained and "copy_batch(64)" in trained
    assert "assert accuracy > 0.99" in trained
    assert "torch.equal(looks_at, torch.arange(1, HALF))" in trained
    text = lesson_text("05-attention.md")
    assert "8 random tokens from a vocabulary of 16" in text
    assert "embeddings of width 32" in text and "150 steps of Adam on batches of 64" in text
    assert "05-trained-head.svg" in (DOCS / "lessons" / "05-attention.md").read_text("utf-8")


def test_figures_turn_the_interpreter_on_before_any_notebook_imports_triton():
    """The notebooks share the build's process, and a torch.optim step (lesson 5's trained
    head) imports Triton: without the interpreter set first, lesson 8's kernels then fail
    ("Cannot call @triton.jit'd outside of the scope of a kernel"). Run in a fresh process,
    in that order: the hook's switch, an Adam step, then lesson 8's row-maximum kernel."""
    import subprocess
    import sys

    program = f"""
import os, sys
os.environ.pop("TRITON_INTERPRET", None)
sys.path[:0] = [{str(DOCS.parent)!r}, {str(DOCS / "hooks")!r}]
import torch
if torch.cuda.is_available():
    sys.exit(0)
import build_assets
build_assets.use_interpreter_without_gpu()
p = torch.nn.Parameter(torch.zeros(3))
opt = torch.optim.Adam([p])
p.sum().backward()
opt.step()  # imports triton
import triton, triton.language as tl
text = open({str(DOCS / "notebooks" / "08-flash-attention.py")!r}).read()
body = text.split("[start:rowmax]\\n")[1].split("# --8<-- [end:rowmax]")[0]
exec(body, {{"torch": torch, "triton": triton, "tl": tl, "device": "cpu"}})
print("row max ok")
"""
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_lesson_4_describes_the_fine_tune_its_notebook_runs():
    """Lesson 4's low-rank check: the ranks and the claims the prose makes are the ones the
    notebook measures and asserts each time the site is built."""
    source = (DOCS / "notebooks" / "04-svd-lora.py").read_text(encoding="utf-8")
    assert "for rank in (1, 2, 4, 8):" in source
    assert "assert energy(sv_update, 8) > energy(sv_random, 8) + 0.2" in source
    assert "assert lora_error[8] < 1.2 * full_error < lora_error[1]" in source
    text = lesson_text("04-svd-lora.md")
    assert "LoRA adapters of rank 1, 2, 4 and 8 on both layers" in text
    assert "an adapter of rank 8, a quarter of the layer's input width" in text
    assert "D_IN, HIDDEN, D_OUT = 32, 64, 8" in source  # rank 8 is a quarter of 32


def test_the_exercise_boxes_show_the_stub_as_given_not_the_students_file(tmp_path):
    """A student's exercises/ may be filled in, or its .py moved aside for the notebook: the
    boxes include the stub the hook makes from the solutions (docs/generated/stubs/), so a
    missing or edited exercises/ file neither breaks `make docs` nor shows up in a lesson."""
    from autograder import catalogue
    from autograder.student import reset

    topic = catalogue.get_topic(3)
    box = hook.exercise_box(topic)
    assert f'"docs/generated/stubs/{topic.module}.py:softmax"' in box
    assert '"exercises/' not in box
    assert hook.pristine_stub(topic.module) == reset.pristine_stub(topic.module)
    assert "raise NotImplementedError" in hook.pristine_stub(topic.module)


def test_inline_maths_keeps_its_opening_bracket():
    # lesson 8 broke a line between "(" and the maths
    html = '<p>training (<span class="arithmatex">\\(L = S\\)</span>) and</p>'
    out = hook.keep_punctuation(html)
    assert '<span class="math-punct">(<span class="arithmatex">\\(L = S\\)</span>)</span>' in out


def test_shapes_and_names_in_code_stay_whole_and_other_code_may_wrap():
    html = "<td><code>(12, 1024, 64)</code></td><td><code>out_proj</code></td>"
    html += "<td><code>course grade --dir x</code></td>"
    out = hook.mark_tokens(html)
    assert '<code class="token">(12, 1024, 64)</code>' in out
    assert '<code class="token">out_proj</code>' in out
    assert "<code>course grade --dir x</code>" in out


def test_figures_get_the_width_their_smallest_text_needs(tmp_path):
    # matplotlib's text: glyph paths scaled by font size / 100; 9 pt text in a 584 pt figure
    svg = '<svg width="584pt" height="181pt"><g transform="scale(0.09 -0.09)"></g>'
    svg += '<g transform="scale(0.12 -0.12)"></g></svg>'
    (tmp_path / "f.svg").write_text(svg)
    least = hook.figure_min_width("f.svg", tmp_path)
    assert least == int(np.ceil(584 * hook.MIN_FIGURE_TEXT_PX / 9))
    # the figure read from tmp_path: a fresh clone has no generated figures until a build
    html = hook.readable_figures('<img alt="a" src="../generated/figures/f.svg" />', tmp_path)
    assert "figure-scroll" in html and "min-width:" in html


@pytest.fixture(scope="module")
def lesson5():
    """Lesson 5's notebook run as the build runs it (its globals: the trained copy model)."""
    import os
    import runpy
    import tempfile

    with tempfile.TemporaryDirectory() as tmp, hook.repo_on_path(), hook.environment_kept():
        os.environ["COURSE_FIGURES"] = tmp
        yield runpy.run_path(str(DOCS / "notebooks" / "05-attention.py"), run_name="__main__")


def test_anisotropy_table_says_what_lesson_1_says(lesson5):
    rows = dict(hook.anisotropy_rows(lesson5))
    random, before, after, centred = rows.values()
    d = lesson5["model"].tok.weight.shape[1]
    # isotropic random vectors: cosines spread like 1/sqrt(d) around 0
    assert random[2] == pytest.approx(d**-0.5, rel=0.25) and abs(random[0]) < 0.05
    # lesson 1: the tiny model shows no anisotropy worth the name, before or after training
    for mean, mean_abs, std, common in (before, after):
        assert abs(mean) < 0.05  # "mean cosines near 0"
        assert mean_abs == pytest.approx(random[1], rel=0.2)  # "near the random value"
        assert common < 0.5  # "a mean vector a fraction of a typical length"
    assert centred[3] == pytest.approx(0.0, abs=1e-9)
    # "about -1/15": 16 centred vectors sum to zero
    n = lesson5["model"].tok.weight.shape[0]
    assert n == 16 and centred[0] == pytest.approx(-1 / (n - 1), abs=0.01)
    # training did change the embeddings: the table is not the initial rows twice
    assert after != before
    table = hook.anisotropy_table(lesson5)
    assert table.count("\n|") == 5 and f"d = {d}" in table
    assert '--8<-- "docs/generated/evidence-anisotropy.md"' in (DOCS / "lessons" / L1).read_text()
