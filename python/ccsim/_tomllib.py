# SPDX-License-Identifier: MIT
"""Python's TOML 1.0 reader, wherever it comes from: the standard library's ``tomllib`` from
Python 3.11 (PEP 680), the ``tomli`` package (the same code, a dependency below 3.11) before.
Every reader of plans, stored scenarios and tags imports it from here."""

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["tomllib"]
