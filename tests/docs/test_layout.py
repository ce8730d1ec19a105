"""Every page of the built site fits a phone (390 px), in Chromium.

The faults looked for are :mod:`tests.docs.layout_checks`'s; the desktop width (1280 px) is
checked by ``test_browser.py`` in the same visit of each page that checks it renders offline
(one tour of the site at that width, not two). Debian's chromium through Playwright, as
``test_browser.py``; ``DOCS_SITE=path`` checks a site built elsewhere; the browser fixtures are
in ``tests/docs/conftest.py``.
"""

from __future__ import annotations

import pytest

from .layout_checks import PHONE, layout_faults
from .test_browser import Watch, open_typeset, site_pages

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_every_page_fits_a_phone(built_site, server, browser):
    context = browser.new_context(viewport={"width": PHONE, "height": 900})
    watch = Watch(context)
    faults = []
    for path in site_pages(built_site):
        page = open_typeset(context, watch, server, path)
        faults += [f"{path or '/'}: {f}" for f in layout_faults(page, PHONE)]
        page.close()
    context.close()
    assert not faults, f"{len(faults)} layout faults at {PHONE} px:\n" + "\n".join(faults)
