# SPDX-License-Identifier: MIT
"""Where the browser tests (and the screenshot script) find Chromium, and how they start it.

They drive the system's Chromium (Debian's ``chromium`` package) through Playwright's Python API
with ``executable_path``: Playwright's own browser download is never used. ``CCSIM_CHROMIUM``
names another binary.
"""

from __future__ import annotations

import os
import shutil

#: Headless, sandbox off (containers run as root), and nothing that talks to the network on
#: its own (updates, sync, field trials): the pages under test are local.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """``$CCSIM_CHROMIUM``, else the first of chromium, chromium-browser, google-chrome on
    PATH, else /usr/bin/chromium if present; None when there is none."""
    named = os.environ.get("CCSIM_CHROMIUM")
    if named:
        return named if os.path.exists(named) else shutil.which(named)
    for name in _NAMES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None
