"""mkdocs hook: make the lesson site's figures, tables, exercise boxes and notebooks from code.

Runs before every build (``on_pre_build``) and writes into ``docs/generated/`` (git-ignored):

- ``figures/*.svg``: every figure of every lesson, drawn by running the companion notebooks'
  sources (``docs/notebooks/NN-*.py``, jupytext percent scripts) with ``COURSE_FIGURES`` set,
  so the pictures on the site are exactly the ones a reader's notebook draws, from the solutions;
- ``gpt2-matmuls.md``: GPT-2 small's matmul catalogue, built by ``transformer_matmuls``;
- ``evidence-*.md``: the small tables of measured numbers that lessons 1, 3 and 4 show (random
  cosines, the √d_k scaling, softmax saturating, LoRA's update against its rank), computed
  with the solutions' functions; ``evidence-anisotropy.md`` (lesson 1) measures the token
  embeddings of the model lesson 5's notebook trains, reused from that notebook's run;
- ``published-flash-attention.md``: lesson 8's table of the FlashAttention papers' reported
  speeds, each paired with its GPU's peak (the column a paper does not state is computed);
- ``exercise-exNN_*.md``: each lesson's closing exercise box, read from the one catalogue
  (``autograder/catalogue.toml``), with the stubs included by their snippet sections;
- ``notebooks/NN-*.ipynb``: the companion notebooks, for download.

Each page's HTML also passes through ``on_page_content``, which keeps inline maths and the
punctuation around it on one line, keeps shapes and names in code unbroken, and gives each figure a
minimum width at which its text stays readable (scrolling sideways in a narrow column).

Files are rewritten only when their bytes change (``mkdocs serve`` watches ``docs/``), and the
whole step is skipped when none of its inputs changed since the last run.

A student release (``course release``) has no ``solutions/``: the figures and the GPT-2 table
cannot be made there (drawn from the stubs they would fail, or worse, show a student's bugs as
the course's pictures). ``course release`` therefore runs this generation with the solutions
(``python docs/hooks/build_assets.py --out RELEASE/docs/generated``) and ships the result; in a
repository without ``solutions/`` the hook regenerates nothing and only checks that every
generated file the pages use is there.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import runpy
import sys
import tempfile
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GENERATED = DOCS / "generated"
NOTEBOOKS = DOCS / "notebooks"
CATALOGUE = ROOT / "autograder" / "catalogue.toml"

# GPT-2 small, as the lesson on projections quotes it; the context length is GPT-2's 1024.
GPT2_SMALL = {"d_model": 768, "n_heads": 12, "d_ff": 3072, "vocab_size": 50257, "seq_len": 1024}
GPT2_LAYERS = 12

log = logging.getLogger("mkdocs.hooks.build_assets")


# ----------------------------------------------------------------------------- helpers
def write_if_changed(path: Path, data: bytes | str) -> bool:
    """Write ``data`` to ``path`` unless it already holds exactly that; True if written."""
    if isinstance(data, str):
        data = data.encode()
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return True


def inputs_digest() -> str:
    """A hash of everything the generated files depend on."""
    files = [Path(__file__), CATALOGUE]
    for folder in ("solutions", "exercises"):
        files += sorted((ROOT / folder).glob("*.py"))
    files += sorted(NOTEBOOKS.glob("*.py")) + sorted((DOCS / "lessons").glob("*.md"))
    h = hashlib.sha256()
    for f in files:
        if f.exists():
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def load_catalogue() -> list:
    """The topics of the one catalogue, read through ``autograder.catalogue``."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from autograder import catalogue

    return list(catalogue.topics())


def notebook_for(topic) -> Path:
    """The companion notebook source of a topic: same stem as its lesson page."""
    return NOTEBOOKS / Path(topic.lesson_page).with_suffix(".py").name


@contextlib.contextmanager
def repo_on_path():
    """Run with the repository as cwd and first on sys.path (``import solutions.ex01_…``)."""
    old_cwd, old_path = os.getcwd(), list(sys.path)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path


# ----------------------------------------------------------------------------- tables
def fmt_shape(shape: tuple[int, ...]) -> str:
    return "`(" + ", ".join(str(n) for n in shape) + ")`"


def gpt2_matmul_rows() -> list[dict]:
    """GPT-2 small's matmuls for one layer of one 1024-token sequence, from the solutions."""
    from solutions.ex02_projections import transformer_matmuls

    rows = []
    for m in transformer_matmuls(**GPT2_SMALL):
        # Only the products with a learned matrix on the right hold parameters; scores and
        # aggregate multiply two activations (that is what makes attention depend on the input).
        weight = m.name not in ("scores", "aggregate")
        params = m.b_shape[0] * m.b_shape[1] if weight else 0
        rows.append(
            {
                "name": m.name,
                "a": m.a_shape,
                "b": m.b_shape,
                "out": m.out_shape,
                "flops": m.flops,
                "params": params,
            }
        )
    return rows


def gpt2_matmul_table() -> str:
    rows = gpt2_matmul_rows()
    lines = [
        "| matmul | input | weight or second input | output | parameters | GFLOP |",
        "|---|---|---|---|--:|--:|",
    ]
    for r in rows:
        params = f"{r['params']:,}" if r["params"] else "none"
        if r["name"] == "unembed":
            params += " (tied)"
        lines.append(
            f"| `{r['name']}` | {fmt_shape(r['a'])} | {fmt_shape(r['b'])} | "
            f"{fmt_shape(r['out'])} | {params} | {r['flops'] / 1e9:,.2f} |"
        )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- evidence tables
# Seeded, so the site shows the same numbers on every build; sizes kept small so the whole
# set takes well under a second.
EVIDENCE_SEED = 0
COSINE_DIMS = (2, 64, 768)
SCALING_DIMS = (16, 64, 256)
SATURATION_GAINS = (1, 2, 4, 8, 16)
LOGITS = (2.0, 1.0, 0.1)  # lesson 3's example logits


def random_cosines(d: int, pairs: int = 2000, seed: int = EVIDENCE_SEED):
    """Cosines of ``pairs`` pairs of independent Gaussian vectors in d dimensions, (pairs,)."""
    import numpy as np

    from solutions.ex01_vectors import normalize_rows

    rng = np.random.default_rng(seed)
    u, v = normalize_rows(rng.normal(size=(pairs, d))), normalize_rows(rng.normal(size=(pairs, d)))
    return (u * v).sum(axis=-1)


def cosine_table() -> str:
    lines = [
        (
            "| dimension $d$ | mean $\\lvert\\cos\\rvert$ | std of $\\cos$ | $1/\\sqrt d$ "
            "| pairs with $\\lvert\\cos\\rvert > 0.5$ |"
        ),
        "|--:|--:|--:|--:|--:|",
    ]
    for d in COSINE_DIMS:
        c = random_cosines(d)
        share = 100 * float((abs(c) > 0.5).mean())
        lines.append(
            f"| {d} | {abs(c).mean():.3f} | {c.std():.3f} | {d**-0.5:.3f} | {share:.1f} % |"
        )
    return "\n".join(lines) + "\n"


def score_scaling(d: int, n: int = 400, keys: int = 16, seed: int = EVIDENCE_SEED):
    """Raw and scaled scores of n unit-variance queries against n keys, and the mean largest
    softmax weight over the first ``keys`` keys: (std raw, std scaled, top raw, top scaled)."""
    import numpy as np

    from solutions.ex02_projections import attention_scores
    from solutions.ex03_softmax import softmax

    rng = np.random.default_rng(seed + d)
    Q, K = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    raw, scaled = attention_scores(Q, K, scale=1.0), attention_scores(Q, K)
    top = [float(softmax(s[:, :keys], axis=-1).max(axis=-1).mean()) for s in (raw, scaled)]
    return float(raw.std()), float(scaled.std()), top[0], top[1]


def scaling_table() -> str:
    lines = [
        (
            "| $d_k$ | $\\sqrt{d_k}$ | std of $q \\cdot k$ | std of $q \\cdot k / \\sqrt{d_k}$ "
            "| top weight over 16 keys, unscaled | scaled |"
        ),
        "|--:|--:|--:|--:|--:|--:|",
    ]
    for d in SCALING_DIMS:
        raw, scaled, top_raw, top_scaled = score_scaling(d)
        lines.append(
            f"| {d} | {d**0.5:g} | {raw:.2f} | {scaled:.3f} | {top_raw:.3f} | {top_scaled:.3f} |"
        )
    return "\n".join(lines) + "\n"


def saturation_table() -> str:
    import numpy as np

    from solutions.ex03_softmax import softmax, softmax_jacobian

    lines = [
        "| logits | largest probability | the rest, together | largest $\\lvert J_{ij} \\rvert$ |",
        "|---|--:|--:|--:|",
    ]
    for gain in SATURATION_GAINS:
        z = gain * np.array(LOGITS)
        p = softmax(z)
        shown = ", ".join(f"{v:g}" for v in z)
        jac = abs(softmax_jacobian(p)).max()
        # the rest as 1 - max would cancel to 0 in float64; summing the small entries does not
        lines.append(f"| [{shown}] | {p.max():.4f} | {np.sort(p)[:-1].sum():.1e} | {jac:.1e} |")
    return "\n".join(lines) + "\n"


def cosine_stats(rows) -> tuple[float, float, float, float]:
    """Cosines between the distinct rows of ``rows`` (n, d), with the course's
    ``normalize_rows``: (mean, mean absolute value, std, length of the mean row over the mean
    row length). The last is 0 for rows centred on the origin and 1 for identical rows."""
    import numpy as np

    from solutions.ex01_vectors import normalize_rows

    rows = np.asarray(rows, dtype=np.float64)
    unit = normalize_rows(rows)
    cos = (unit @ unit.T)[~np.eye(len(rows), dtype=bool)]
    common = np.linalg.norm(rows.mean(axis=0)) / np.linalg.norm(rows, axis=1).mean()
    return float(cos.mean()), float(abs(cos).mean()), float(cos.std()), float(common)


def anisotropy_rows(lesson5: dict) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Lesson 1's anisotropy evidence: the token embeddings of the copy model that lesson 5's
    notebook trains (its globals ``lesson5``: ``model``, ``CopyModel``), before and after
    training, against isotropic Gaussian vectors of the same number and width.

    The untrained model is rebuilt as the notebook builds it (``torch.manual_seed(0)`` then
    ``CopyModel()``), so its embedding rows are the ones training started from.
    """
    import numpy as np
    import torch

    trained = lesson5["model"].tok.weight.detach().double().numpy()
    torch.manual_seed(0)
    start = lesson5["CopyModel"]().tok.weight.detach().double().numpy()
    rng = np.random.default_rng(EVIDENCE_SEED)
    n, d = trained.shape
    return [
        (f"isotropic: {n} Gaussian vectors, $d = {d}$", cosine_stats(rng.normal(size=(n, d)))),
        ("lesson 5's model, token embeddings before training", cosine_stats(start)),
        ("the same after training", cosine_stats(trained)),
        ("after training, mean embedding subtracted", cosine_stats(trained - trained.mean(0))),
    ]


def anisotropy_table(lesson5: dict) -> str:
    """The Markdown table of :func:`anisotropy_rows`."""
    d = lesson5["model"].tok.weight.shape[1]
    lines = [
        (
            "| vectors | mean $\\cos$ | mean $\\lvert\\cos\\rvert$ | std of $\\cos$ "
            "| length of the mean vector / mean length |"
        ),
        "|---|--:|--:|--:|--:|",
    ]
    for label, (mean, mean_abs, std, common) in anisotropy_rows(lesson5):
        lines.append(f"| {label} | {mean:+.3f} | {mean_abs:.3f} | {std:.3f} | {common:.2f} |")
    lines.append("")
    lines.append(f"For comparison, $1/\\sqrt d = {d**-0.5:.3f}$ at $d = {d}$.")
    return "\n".join(lines) + "\n"


LORA_RANKS = (4, 8, 16, 64)
LORA_ALPHA = 16
LORA_WIDTH = 512


def lora_update_size(r: int, alpha: float = LORA_ALPHA, d: int = LORA_WIDTH, seed: int = 0):
    """The RMS entry of a LoRA update ``layer(x) − base(x)`` for random factors, from the
    solutions' ``LoRALinear`` (its factor α/r), as (no factor, α/r, α/√r).

    ``A`` has rows of length about 1 (std 1/√d) and ``B`` unit entries: r independent
    directions standing in for trained ones, so ``x Aᵀ Bᵀ`` has entries of size about √r.
    """
    import torch

    from solutions.ex04_svd_lora import LoRALinear

    gen = torch.Generator().manual_seed(seed + r)
    base = torch.nn.Linear(d, d, bias=False)
    layer = LoRALinear(base, r=r, alpha=alpha)
    with torch.no_grad():
        layer.lora_A.copy_(torch.randn(r, d, generator=gen) / d**0.5)
        layer.lora_B.copy_(torch.randn(d, r, generator=gen))
        x = torch.randn(256, d, generator=gen)
        scaled = float((layer(x) - base(x)).pow(2).mean().sqrt())  # with the layer's α/r
    raw = scaled / layer.scaling
    return raw, scaled, raw * alpha / r**0.5


def lora_scale_table() -> str:
    lines = [
        (
            "| rank $r$ | $\\alpha / r$ | $\\alpha / \\sqrt r$ | update, no factor "
            "| with $\\alpha / r$ | with $\\alpha / \\sqrt r$ |"
        ),
        "|--:|--:|--:|--:|--:|--:|",
    ]
    for r in LORA_RANKS:
        raw, by_r, by_sqrt = lora_update_size(r)
        lines.append(
            f"| {r} | {LORA_ALPHA / r:g} | {LORA_ALPHA / r**0.5:.2f} | {raw:.2f} "
            f"| {by_r:.2f} | {by_sqrt:.1f} |"
        )
    return "\n".join(lines) + "\n"


# What the FlashAttention papers report, forward and backward together, at head dimensions 64
# and 128. Each row gives what its paper states, a rate in TFLOP/s or a share of the GPU's
# peak, and the table computes the other from the peak. Peaks are NVIDIA's data sheets, dense
# (no sparsity): A100 SXM4 312 TFLOP/s fp16/bf16; H100 SXM5 989 fp16/bf16, 1,979 fp8.
PUBLISHED = (
    # (kernel, GPU, dtype, peak TFLOP/s, reported TFLOP/s or None, reported share or None, source)
    ("FlashAttention", "A100", "fp16", 312, None, (0.25, 0.40), "Dao (2023), section 1"),
    ("FlashAttention-2", "A100", "fp16", 312, None, (0.50, 0.73), "Dao (2023), abstract"),
    ("FlashAttention-2", "H100", "fp16", 989, None, (0.35,), "Shah et al. (2024), abstract"),
    ("FlashAttention-3", "H100", "fp16", 989, (740,), None, "Shah et al. (2024), abstract"),
    ("FlashAttention-3", "H100", "fp8", 1979, (1200,), None, "Shah et al. (2024), abstract"),
    # (the paper's fp8 figure is "close to 1.2 PFLOPs/s")
)


def published_rows() -> list[tuple[str, str, str, int, tuple[float, ...], tuple[float, ...], str]]:
    """:data:`PUBLISHED` with both columns filled: (kernel, GPU, dtype, peak, TFLOP/s range,
    share range, source); a one-element range is a single value."""
    rows = []
    for kernel, gpu, dtype, peak, rate, share, source in PUBLISHED:
        if rate is None:
            rate = tuple(s * peak for s in share)
        else:
            share = tuple(r / peak for r in rate)
        rows.append((kernel, gpu, dtype, peak, rate, share, source))
    return rows


def published_table() -> str:
    lines = [
        "| kernel | GPU | dtype | peak TFLOP/s | reached TFLOP/s | share of peak | source |",
        "|---|---|---|--:|--:|--:|---|",
    ]
    for stated, (kernel, gpu, dtype, peak, rate, share, source) in zip(
        (row[4] for row in PUBLISHED), published_rows()
    ):
        # the column the paper states is plain; the computed one is marked "about"
        rate_s = "–".join(f"{r:,.0f}" for r in rate)
        share_s = "–".join(f"{100 * s:.0f}" for s in share) + " %"
        if stated is None:
            rate_s = "about " + rate_s
        else:
            share_s = "about " + share_s
        lines.append(f"| {kernel} | {gpu} | {dtype} | {peak:,} | {rate_s} | {share_s} | {source} |")
    return "\n".join(lines) + "\n"


def evidence_tables() -> dict[str, str]:
    """The evidence fragments by file name, each computed with the solutions."""
    return {
        "evidence-cosines.md": cosine_table(),
        "evidence-scaling.md": scaling_table(),
        "evidence-saturation.md": saturation_table(),
        "evidence-lora-scale.md": lora_scale_table(),
        "published-flash-attention.md": published_table(),
    }


# ----------------------------------------------------------------------------- exercise boxes
def lesson_headings(page: Path) -> dict[str, str]:
    """Map each ``{#anchor}`` id of a lesson's headings to the heading's text."""
    found = re.findall(
        r"^#{2,6}\s+(.+?)\s*\{#([\w-]+)\}\s*$", page.read_text(encoding="utf-8"), flags=re.MULTILINE
    )
    return {anchor: title for title, anchor in found}


def exercise_box(topic) -> str:
    """The admonition that closes a lesson: file, functions, points, command, stubs."""
    module, number = topic.module, topic.number
    nb = notebook_for(topic).stem
    out = [
        f'!!! example "Exercise {number}: `exercises/{module}.py` ({topic.points} points)"',
        "",
        f"    Open `exercises/{module}.py`, replace each `raise NotImplementedError` with your",
        "    code, and check your work with the topic's public tests:",
        "",
        "    ```bash",
        f"    course check {number}",
        "    ```",
        "",
        "    | exercise | points | the idea is in |",
        "    |---|--:|---|",
    ]
    headings = lesson_headings(DOCS / topic.lesson_page)
    for ex in topic.exercises:
        section = headings.get(ex.anchor.lstrip("#"), "this section")
        out.append(f"    | [`{ex.name}`][{ex.qualname}] | {ex.points} | [{section}]({ex.anchor}) |")
    out += [
        "",
        (
            f"    Stuck? `course hint {topic.exercises[0].qualname}` gives a nudge, and"
            " `--level 2` adds the key idea."
        ),
        (
            f"    The [companion notebook](../generated/notebooks/{nb}.ipynb)"
            f" ([plain-text source](../notebooks/{nb}.py)) reruns this lesson's examples and figures."
        ),
        "",
    ]
    for ex in topic.exercises:
        out += [
            f'    ??? abstract "The stub of `{ex.name}`"',
            "",
            "        ```python",
            f'        --8<-- "docs/generated/stubs/{module}.py:{ex.name}"',
            "        ```",
            "",
        ]
    return "\n".join(out)


def reference_modules(topics: list) -> str:
    """The API reference's table of modules, from the catalogue."""
    lines = ["| module | lesson | exercises | points |", "|---|---|--:|--:|"]
    for t in topics:
        lines.append(
            f"| [{t.module}]({t.module}.md) | [{t.number}. {t.title}]"
            f"(../{t.lesson_page}) | {len(t.exercises)} | {t.points} |"
        )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- figures
@contextlib.contextmanager
def environment_kept():
    """Undo, on exit, whatever a notebook set in ``os.environ``.

    The figures' run turns on ``TRITON_INTERPRET=1`` when there is no GPU (Triton reads it when
    it is first imported; see :func:`use_interpreter_without_gpu`); that choice belongs to the
    figures, not to the rest of the mkdocs process.
    """
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def use_interpreter_without_gpu() -> None:
    """Without CUDA, set ``TRITON_INTERPRET=1`` before any notebook runs.

    Triton decides when it is first imported whether its library functions (``tl.max``,
    ``tl.sum``, ...) belong to the interpreter, and the notebooks share this process: an
    earlier one may import it without the variable (a ``torch.optim`` step does), and lesson
    8's kernels would then fail in the interpreter ("Cannot call @triton.jit'd outside of the
    scope of a kernel"), although lesson 8's notebook sets the variable before its own import.

    Raises:
        mkdocs.exceptions.PluginError: Triton was imported before this point without the
            interpreter and no GPU can run its kernels.
    """
    import torch

    if torch.cuda.is_available() or os.environ.get("TRITON_INTERPRET") == "1":
        return
    if "triton" in sys.modules:
        from mkdocs.exceptions import PluginError

        raise PluginError(
            "triton was imported before the notebooks ran, without TRITON_INTERPRET=1 and "
            "with no GPU: lesson 8's kernels cannot run; set TRITON_INTERPRET=1 for the build"
        )
    os.environ["TRITON_INTERPRET"] = "1"


def draw_figures(staging: Path, topics: list) -> dict[int, dict]:
    """Run every companion notebook as a script, its figures saved as SVG into ``staging``.

    Returns each notebook's globals by topic number, so that a table can reuse what a notebook
    computed (lesson 1's anisotropy table reads the model lesson 5's notebook trains).
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    with environment_kept():
        os.environ["COURSE_FIGURES"] = str(staging)
        use_interpreter_without_gpu()
        namespaces = {}
        for topic in topics:
            script = notebook_for(topic)
            with (
                repo_on_path(),
                environment_kept(),
                open(os.devnull, "w") as quiet,
                contextlib.redirect_stdout(quiet),
                warnings.catch_warnings(),
            ):
                warnings.simplefilter("ignore")
                namespaces[topic.number] = runpy.run_path(str(script), run_name="__main__")
            plt.close("all")
    return namespaces


def write_notebooks(topics: list, dest: Path = GENERATED) -> None:
    import jupytext

    for topic in topics:
        script = notebook_for(topic)
        nb = jupytext.read(script)
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nb.metadata.pop("jupytext", None)
        text = jupytext.writes(nb, fmt="ipynb")
        write_if_changed(dest / "notebooks" / f"{script.stem}.ipynb", text)


def sync_dir(staging: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    fresh = {p.name for p in staging.iterdir()}
    for p in staging.iterdir():
        write_if_changed(dest / p.name, p.read_bytes())
    for p in dest.iterdir():
        if p.name not in fresh:
            p.unlink()


def pristine_stub(module: str) -> str:
    """``module``'s stub as :mod:`autograder.authoring.stubs` makes it from the solutions (the
    exercise boxes show it, whatever the student's ``exercises/`` holds).

    Raises:
        FileNotFoundError: no solution of ``module`` to make it from.
    """
    load_catalogue()  # the repository on sys.path
    from autograder.student import reset

    stub = reset.pristine_stub(module)
    if stub is None:
        raise FileNotFoundError(f"no stub of {module} can be made: solutions/ lacks it")
    return stub


def has_solutions() -> bool:
    """True in the instructor's repository; False in a student release (no ``solutions/``)."""
    return (ROOT / "solutions").is_dir()


def missing_shipped(dest: Path = GENERATED) -> list[str]:
    """The generated files that the pages use but ``dest`` lacks (empty: all there).

    "Used" means named as ``generated/…`` (a figure, a notebook, an included fragment) in any
    Markdown page of ``docs/``, the generated fragments included; plus the GPT-2 table, the
    reference table and each topic's exercise box and notebook, which the pages need whatever
    their wording.
    """
    topics = load_catalogue()
    wanted = {"gpt2-matmuls.md", "reference-modules.md"}
    wanted |= {f"exercise-{t.module}.md" for t in topics}
    wanted |= {f"notebooks/{notebook_for(t).stem}.ipynb" for t in topics}
    wanted |= {f"stubs/{t.module}.py" for t in topics}
    pages = [p for p in DOCS.rglob("*.md") if GENERATED not in p.parents]
    pages += sorted(dest.glob("*.md"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        wanted |= set(re.findall(r"generated/([\w][\w./-]*\.(?:svg|png|md|ipynb))", text))
    return sorted(w for w in wanted if not (dest / w).is_file())


def use_shipped(dest: Path = GENERATED) -> None:
    """In a release: keep the shipped ``dest`` as it is, after checking nothing is missing.

    Raises:
        mkdocs.exceptions.PluginError: a generated file the pages use is missing (it can only
            be made where the solutions are, so the message says where to get it).
    """
    missing = missing_shipped(dest)
    if missing:
        from mkdocs.exceptions import PluginError

        raise PluginError(
            f"no solutions/ folder, so {dest}/ cannot be regenerated, and it "
            f"lacks {', '.join(missing)}: restore it from the release (`git checkout -- "
            f"docs/generated`) or ask the instructor for a fresh `course release`"
        )
    log.info("no solutions/ folder: using the figures and tables shipped in docs/generated/")


def generate(force: bool = False, dest: Path = GENERATED) -> None:
    """Write every generated file into ``dest`` (default ``docs/generated/``).

    Without ``solutions/`` (a student release) nothing is generated: the shipped files are
    checked instead (:func:`use_shipped`). Otherwise the step is skipped when the inputs'
    digest matches ``dest/.stamp`` (unless ``force``).
    """
    if not has_solutions():
        use_shipped(dest)
        return
    stamp = dest / ".stamp"
    digest = inputs_digest()
    if not force and stamp.exists() and stamp.read_text() == digest:
        return
    topics = load_catalogue()
    with repo_on_path():
        write_if_changed(dest / "gpt2-matmuls.md", gpt2_matmul_table())
        for name, table in evidence_tables().items():
            write_if_changed(dest / name, table)
    for topic in topics:
        write_if_changed(dest / f"exercise-{topic.module}.md", exercise_box(topic))
        # The stub as given, not the student's exercises/ file: that may be filled in, or moved
        # aside for the notebook (a new user's `make docs` then failed on a missing snippet).
        write_if_changed(dest / "stubs" / f"{topic.module}.py", pristine_stub(topic.module))
    write_if_changed(dest / "reference-modules.md", reference_modules(topics))
    write_notebooks(topics, dest)
    with tempfile.TemporaryDirectory() as tmp:
        namespaces = draw_figures(Path(tmp), topics)
        sync_dir(Path(tmp), dest / "figures")
    with repo_on_path():
        write_if_changed(dest / "evidence-anisotropy.md", anisotropy_table(namespaces[5]))
    write_if_changed(stamp, digest)


# ----------------------------------------------------------------------------- typography
# Inline maths and the punctuation around it: "$x$," or "($x$" would otherwise let the browser
# wrap the comma or the bracket away from the maths, since MathJax renders it as an inline block.
MATH_WITH_PUNCTUATION = re.compile(r'([(\[]*)(<span class="arithmatex">[^<]*</span>)([.,;:!?)\]]*)')


def keep_punctuation(html: str) -> str:
    """Wrap each inline maths span and the brackets before it or the punctuation after it in
    one unbreakable span (styled ``white-space: nowrap`` by ``docs/stylesheets/extra.css``)."""

    def wrap(m: re.Match) -> str:
        if not m.group(1) and not m.group(3):
            return m.group(0)
        return f'<span class="math-punct">{m.group(0)}</span>'

    return MATH_WITH_PUNCTUATION.sub(wrap, html)


# A shape such as (12, 1024, 64), or a short name such as out_proj, in code reads as one token:
# the stylesheet keeps it unbroken (a narrow table column broke "out_proj" into "out_pro j").
TOKEN_CODE = re.compile(r"<code>(\(\d+(?:, \d+)*,?\)|[\w.]{1,24})</code>")


def mark_tokens(html: str) -> str:
    """Give each ``<code>`` that holds only a shape or a short name the class ``token`` (no
    line break inside); longer code, such as a command, may still wrap."""
    return TOKEN_CODE.sub(r'<code class="token">\1</code>', html)


# The smallest figure text a reader is asked to read, in CSS pixels (tests/docs/layout_checks.py
# checks the same floor in a browser, at 1280 and 390 px).
MIN_FIGURE_TEXT_PX = 8.0
FIGURE_IMG = re.compile(r'<img\b[^>]*\bsrc="([^"]*generated/figures/([\w.-]+\.svg))"[^>]*>')


def svg_text_size(svg: str) -> tuple[float, float] | None:
    """(width in pt, smallest font size in pt) of a matplotlib SVG, or None if it has no text.

    Matplotlib draws text as glyph paths, each run scaled by ``font size / 100``.
    """
    width = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', svg)
    sizes = [100 * float(x) for x in re.findall(r"scale\(([\d.]+) -\1\)", svg)]
    if not width or not sizes:
        return None
    return float(width.group(1)), min(sizes)


def figure_min_width(name: str, figures: Path = GENERATED / "figures") -> int | None:
    """The narrowest width in CSS px at which figure ``name`` still shows its smallest text at
    :data:`MIN_FIGURE_TEXT_PX`; None for a figure with no text (or not generated)."""
    path = figures / name
    if not path.is_file():
        return None
    found = svg_text_size(path.read_text(encoding="utf-8"))
    if found is None:
        return None
    width_pt, font_pt = found
    # rendered at w px, text of f pt in a figure W pt wide is f * w / W px
    return int(-(-width_pt * MIN_FIGURE_TEXT_PX // font_pt))


def readable_figures(html: str, figures: Path = GENERATED / "figures") -> str:
    """Give each generated figure a minimum width (its text stays readable on a phone), in a
    box that scrolls sideways when that is wider than the column, and link it to the SVG
    itself, so that a tap opens it full size. ``figures``: where the SVGs are read."""

    def fix(m: re.Match) -> str:
        least = figure_min_width(m.group(2), figures)
        if least is None:
            return m.group(0)
        img = m.group(0).replace("<img ", f'<img style="min-width: {least}px" ', 1)
        return f'<span class="figure-scroll"><a href="{m.group(1)}">{img}</a></span>'

    return FIGURE_IMG.sub(fix, html)


# ----------------------------------------------------------------------------- mkdocs events
def on_pre_build(config, **kwargs) -> None:
    generate()


def on_page_content(html: str, **kwargs) -> str:
    return readable_figures(mark_tokens(keep_punctuation(html)))


def on_post_build(config, **kwargs) -> None:
    # Belt and braces: no solution file may ever reach the published site.
    site = Path(config["site_dir"])
    leaked = [p for p in site.rglob("*.py") if "BEGIN SOLUTION" in p.read_text(errors="ignore")]
    if leaked:
        for p in leaked:
            p.unlink()
        log.warning("removed solution code from the site: %s", ", ".join(map(str, leaked)))


if __name__ == "__main__":
    # python docs/hooks/build_assets.py [--out DIR]: regenerate by hand, or (`course release`)
    # into another folder, leaving this repository's docs/generated/ alone.
    import argparse

    parser = argparse.ArgumentParser(description="generate the lesson site's assets")
    parser.add_argument("--out", type=Path, default=GENERATED, help="default: docs/generated")
    args = parser.parse_args()
    if not has_solutions():
        sys.exit(f"{ROOT}: no solutions/ folder: the figures are made from the solutions")
    generate(force=True, dest=args.out.resolve())
