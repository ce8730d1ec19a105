"""Grade bank variants under one OpenBLAS kernel: ``python -m tests.kernels CORETYPE [KEY...]``.

numpy's OpenBLAS picks its kernels (and so the rounding of every matrix product, eigensolver and
SVD) from the processor it runs on; ``OPENBLAS_CORETYPE`` forces one. The grader's zygote keeps
that variable (autograder/driver/slot.py, ``_clean_env``), so setting it in this process's
environment before numpy loads makes the trusted side, the reference and every worker compute
with that kernel. ``tests/test_kernels.py`` runs this module under two or three kernels and holds
each variant's verdicts to the one stored in tests/golden/banks.json: a verdict that follows the
kernel is a golden (and a grade) that only one CPU family reproduces
(docs/design/measured-facts.md, "The same grades on every BLAS kernel").

``--torch-isa default|avx2|avx512`` forces torch's kernels as well (``ATEN_CPU_CAPABILITY`` and
``MKL_ENABLE_INSTRUCTIONS``, which the zygote keeps likewise).

Prints one JSON object: ``{"corename": ..., "torch_isa": ..., "digests": {key: digest}}``; a
digest is :func:`tests.golden.verdicts_digest` of the variant graded with the batch plan, as
tests/test_banks.py grades it. No KEY: every variant of every topic but topic 8 (its 64 take
about 7 minutes more: ``--topic ex08_flash_attention``). ``--topic T`` (repeatable): only T's
variants.
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import json
import os
import sys

#: ATen's CPU capability -> the MKL instruction set forced with it (``--torch-isa``): torch's
#: own vectorised kernels and its BLAS (MKL) at the same level. Both variables are kept by the
#: zygote too.
TORCH_ISAS = {"default": "SSE4_2", "avx2": "AVX2", "avx512": "AVX512"}


def corename() -> str:
    """The kernel numpy's bundled OpenBLAS chose (``Haswell``, ``SkylakeX``, ``Katmai``...), as
    ``openblas_get_corename`` reports it; ``"unknown"`` where numpy links another BLAS.

    The OpenBLAS that numpy's wheels bundle (scipy-openblas) prefixes its symbols; a system
    OpenBLAS does not. threadpoolctl reports the same name, but is not a dependency here.
    """
    import numpy

    libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "*openblas*.so*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                       "openblas_get_corename64_", "openblas_get_corename"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return fn().decode()
    return "unknown"


def digests(keys: list[str] | None, topics: list[str] | None) -> dict[str, str]:
    """Key -> verdicts digest of each selected bank variant graded with the batch plan (the
    plan recorded here, under this process's kernel, on the selected topics only)."""
    from autograder.grading import plan
    from autograder.grading import runner
    from autograder.driver.slot import Slot
    from tests import banks, golden
    from tests.helpers import grade_sources, with_replacement

    chosen = [(k, t, v) for k, t, v in banks.all_variants()
              if (k in keys if keys else t in topics if topics else t != "ex08_flash_attention")]
    missing = sorted(set(keys or ()) - {k for k, _, _ in chosen})
    if missing:
        raise SystemExit(f"unknown bank variant(s): {', '.join(missing)}")
    wanted = sorted({t for _, t, _ in chosen})
    found = {}
    with Slot(0) as slot:
        specs = {t: runner.collect(t) for t in wanted}
        sources = {t: s for t, s in plan.reference_sources().items() if t in wanted}
        plans = plan.record(slot, specs, sources)
        for key, topic, v in chosen:
            got = grade_sources(slot, {topic: with_replacement(topic, v.code)}, [topic],
                                plans=plans)
            found[key] = golden.verdicts_digest(got, v.unsettled)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.kernels")
    ap.add_argument("coretype", help="the OPENBLAS_CORETYPE to force (Haswell, SkylakeX, "
                                     "Sandybridge, Prescott...), or '' for the machine's own")
    ap.add_argument("keys", nargs="*", metavar="KEY", help="bank variants (default: all but ex08)")
    ap.add_argument("--topic", action="append", default=[], help="only this topic's variants")
    ap.add_argument("--torch-isa", choices=sorted(TORCH_ISAS),
                    help="also force torch's kernels: ATen's CPU capability and MKL's "
                         "instruction set (default: SSE4.2)")
    args = ap.parse_args()
    if "numpy" in sys.modules:  # OpenBLAS reads the variable once, when it loads
        raise SystemExit("numpy was imported before the kernel was chosen")
    if args.coretype:
        os.environ["OPENBLAS_CORETYPE"] = args.coretype
    else:
        os.environ.pop("OPENBLAS_CORETYPE", None)
    if args.torch_isa:
        os.environ["ATEN_CPU_CAPABILITY"] = args.torch_isa
        os.environ["MKL_ENABLE_INSTRUCTIONS"] = TORCH_ISAS[args.torch_isa]
    print(json.dumps({"corename": corename(), "torch_isa": args.torch_isa,
                      "digests": digests(args.keys, args.topic)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
