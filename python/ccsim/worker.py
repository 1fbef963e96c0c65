# SPDX-License-Identifier: MIT
"""The start of a sweep's pool worker, in a module that imports nothing beyond the standard
library, so that its loading cannot fail where :mod:`ccsim.sweep`'s can.

Under the ``spawn`` and ``forkserver`` start methods (Python 3.14's default on Linux) each
worker is a new interpreter that imports ccsim and its packages again, after the command's
first run has started. A package removed or upgraded meanwhile (``pip install -U`` during a
sweep) failed the worker as it loaded ``ccsim.sweep``, the module of its initializer, before
any of ccsim's code ran in it: the worker printed its ModuleNotFoundError traceback, and the
sweep said "a worker process died, exit status 1" (the install-change matrix, campaign 43,
issue 32). Here the worker imports what its runs need inside a ``try``, and ends quietly with
:data:`PACKAGE_GONE`; the command names the package (``sweep._death_of``)."""

from __future__ import annotations

import os

#: A worker's exit status when what its runs need cannot be imported (sysexits' EX_CONFIG).
PACKAGE_GONE = 78


def start(parent: int) -> None:
    """The pool's initializer: load the worker's modules, then :func:`ccsim.sweep._init_worker`.
    The stop signals are blocked while this runs (the parent starts its workers so), so an
    interruption meanwhile waits for the worker's own handlers."""
    try:
        from ccsim import sweep
    except ImportError:
        os._exit(PACKAGE_GONE)
    sweep._init_worker(parent)
