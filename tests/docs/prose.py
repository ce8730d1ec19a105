"""Reading the numbers out of a lesson's prose (its markdown minus code, includes and markup)."""

from __future__ import annotations

import re

# A number as prose writes it: 0.876, 12,288 (or LaTeX's 12{,}288), 65504, 3.4 (in 3.4 × 10^38).
NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?!\w)|(?<![\w.,])\d+(?:\.\d+)?(?!\w)")


def prose_of(markdown: str) -> str:
    """The lesson's text without code blocks, snippet includes, attribute lists and links."""
    text = re.sub(r"^```.*?^```", " ", markdown, flags=re.MULTILINE | re.DOTALL)  # fenced code
    text = re.sub(r"^\s*--8<--.*$", " ", text, flags=re.MULTILINE)  # snippet includes
    text = re.sub(r"\{[#:][^}]*\}|\{ width=\"\d+\" \}", " ", text)  # {#anchor}, { width }
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    text = re.sub(r"`[^`\n]*`", " ", text)  # inline code
    return text.replace("{,}", ",")  # 12{,}288 -> 12,288


def numbers_in_prose(markdown: str) -> list[str]:
    """Every decimal number and every number of three or more digits in the prose."""
    found = NUMBER.findall(prose_of(markdown))
    return [n for n in found if "." in n or len(n.replace(",", "")) >= 3]
