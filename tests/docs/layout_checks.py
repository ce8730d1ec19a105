"""The layout check every page of the site gets in Chromium (``LAYOUT``), at the desktop width
and at a phone's (tests/docs/test_browser.py, both in its one visit of each page).

Three kinds of layout fault:

- a table wider than its text column: at the desktop width it must fit (a scroll wrapper there
  hides the last columns from a reader who does not think to scroll: lesson 2's GFLOP column
  was found that way); at the phone width it may scroll, inside a scrolling wrapper only;
- display maths cut off: wider than its box and hidden by an ancestor (``overflow: hidden`` or
  ``clip``), sticking out of the text column with nothing to scroll it, or scrollable without
  a sign that it is (a background gradient, the scroll shadow of ``docs/stylesheets/extra.css``:
  a phone shows no scroll bar, so an equation cut at the screen's edge reads as cut short);
- a figure drawn smaller than its text can be read: the smallest text in the figure's SVG
  (matplotlib draws text as paths scaled by ``font size / 100``), times the rendered width over
  the SVG's width, must come to :data:`MIN_TEXT_PX` CSS pixels; a figure wider than the column
  must sit in a scrolling box that shows it scrolls (a faded edge, as for maths: a gradient
  background or mask).
"""

from __future__ import annotations

DESKTOP, PHONE = 1280, 390
# The smallest figure text a reader is asked to read, in CSS pixels: the tick labels of a
# matplotlib figure at 8 pt shown at its natural size are 10.7 px; 8 px is the floor.
MIN_TEXT_PX = 8.0

LAYOUT = """async ([minText, desktop]) => {
  const main = document.querySelector('.md-content article') || document.querySelector('.md-content');
  const col = main.getBoundingClientRect();
  const scroller = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === 'auto' || o === 'scroll') return a;
      if (o === 'hidden' || o === 'clip') return null;
    }
    return null;
  };
  // a sign that a box scrolls: a scroll shadow (background) or a faded edge (mask)
  const signals = (box) => {
    const s = getComputedStyle(box);
    return [s.backgroundImage, s.maskImage, s.webkitMaskImage].some(v => (v || '').includes('gradient'));
  };
  const faults = [];
  for (const t of main.querySelectorAll('table')) {
    if (t.closest('details:not([open])')) continue;
    const w = t.getBoundingClientRect().width;
    if (w <= col.width + 1) continue;
    const head = t.rows[0] ? t.rows[0].textContent.replace(/\\s+/g, ' ').trim().slice(0, 50) : '';
    if (desktop) faults.push(`table ${Math.round(w)} px wide in a ${Math.round(col.width)} px column: ${head}`);
    else if (!scroller(t)) faults.push(`table ${Math.round(w)} px wide with nothing to scroll it: ${head}`);
  }
  for (const m of main.querySelectorAll('mjx-container[display="true"]')) {
    if (m.closest('details:not([open])')) continue;
    const r = m.getBoundingClientRect();
    const tex = m.parentElement.textContent.slice(0, 40);
    let cut = null;
    for (let a = m.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a);
      const o = s.overflowX;
      if ((o === 'auto' || o === 'scroll')) {
        if (a.scrollWidth > a.clientWidth + 1 && !signals(a))
          cut = 'scrolls with no sign that it does';
        break;
      }
      if ((o === 'hidden' || o === 'clip') && a.scrollWidth > a.clientWidth + 1) {
        cut = `hidden by ${a.tagName.toLowerCase()}.${a.className}`;
        break;
      }
      if (a === main) {
        if (r.right > col.right + 1 || r.left < col.left - 1) cut = 'outside the column';
        break;
      }
    }
    if (cut) faults.push(`display maths ${Math.round(r.width)} px ${cut}: ${tex}`);
  }
  for (const img of main.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    if (!src.endsWith('.svg')) continue;
    const svg = await (await fetch(img.src)).text();
    const width = parseFloat((svg.match(/<svg[^>]*\\swidth="([\\d.]+)pt"/) || [])[1]);
    const scales = [...svg.matchAll(/scale\\(([\\d.]+) -\\1\\)/g)].map(x => 100 * parseFloat(x[1]));
    const r = img.getBoundingClientRect();
    if (scales.length && width) {
      const px = Math.min(...scales) * r.width / width;
      if (px < minText - 0.05)
        faults.push(`figure ${src.split('/').pop()} at ${Math.round(r.width)} px: its ${Math.min(...scales)} pt text is ${px.toFixed(1)} px`);
    }
    const box = scroller(img);
    if (r.right > col.right + 1 && !box)
      faults.push(`figure ${src.split('/').pop()} sticks out of the column with nothing to scroll it`);
    else if (box && box.scrollWidth > box.clientWidth + 1 && !signals(box))
      faults.push(`figure ${src.split('/').pop()} scrolls with no sign that it does`);
  }
  return faults;
}"""


def layout_faults(page, width: int) -> list[str]:
    """The layout faults of the open ``page`` at viewport ``width`` (CSS px), one line each."""
    return page.evaluate(LAYOUT, [MIN_TEXT_PX, width >= 1000])
