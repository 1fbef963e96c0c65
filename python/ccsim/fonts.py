# SPDX-License-Identifier: MIT
"""The fonts that draw Korean: every paper ccsim reproduces is Korean (its citation; any label a
plan writes in Hangul), and a font without Hangul draws each syllable as the same empty box.

- Web pages (the report site, the explorer) name :data:`CSS_FONT_FAMILY`: the system's own
  interface font for Latin text, then the CJK fonts that Debian and Ubuntu
  (``fonts-noto-cjk``: Noto Sans CJK KR), Google Fonts (Noto Sans KR), macOS (Apple SD Gothic
  Neo) and Windows (Malgun Gothic) install, so a browser takes Hangul from the first it has.
- matplotlib (the PNG and SVG figures) draws only from the fonts in its own list, which it
  caches at its first use (``~/.cache/matplotlib``): a CJK font installed after that, as
  ``scripts/test`` installs ``fonts-noto-cjk``, is unseen until the list is built again.
  :func:`matplotlib_cjk_family` looks in that list, and when none is there adds the system's
  CJK font files to it for this process (the cache is not rewritten). The figures keep
  DejaVu Sans for Latin text and fall back to that family for Hangul (matplotlib >= 3.6
  takes each glyph from the first family of ``font.family`` that has it).
- With no CJK font at all, a figure with Hangul says so once, as a :class:`MissingFontWarning`
  naming the package to install, instead of matplotlib's warning per missing glyph.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: The font stack of every page: CSS ``font-family``.
CSS_FONT_FAMILY = (
    'system-ui, "Noto Sans CJK KR", "Noto Sans KR", "Apple SD Gothic Neo", "Malgun Gothic", '
    "sans-serif"
)

#: Families with Hangul that matplotlib may know, in order of preference: the four of the CSS
#: stack, the other faces of the same Noto CJK files (each draws Hangul), and Debian's Nanum.
CJK_FAMILIES = (
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "Apple SD Gothic Neo",
    "Malgun Gothic",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans CJK TC",
    "Source Han Sans KR",
    "NanumGothic",
)

#: How those families' files are named (lower case, without spaces, dashes or underscores):
#: NotoSansCJK-Regular.ttc, NotoSansKR-Regular.otf, AppleSDGothicNeo.ttc, malgun.ttf, ...
_CJK_FILES = ("notosanscjk", "notosanskr", "applesdgothicneo", "malgun", "sourcehansans",
              "nanumgothic")  # fmt: skip

#: Hangul (Jamo, compatibility Jamo, syllables) and the CJK ideographs, kana and punctuation.
_CJK = re.compile("[\u1100-\u11ff\u3000-\u30ff\u3130-\u318f\u3400-\u9fff\uac00-\ud7a3]")

#: matplotlib's warning for a glyph its fonts lack: "Glyph 51652 (...) missing from font(s) ...".
_GLYPH = re.compile(r"Glyph (\d+) .*missing from font")

#: What the missing font's warning tells the reader to install.
INSTALL_HINT = (
    "install a font with Hangul: Debian and Ubuntu `apt-get install fonts-noto-cjk` "
    "(Fedora google-noto-sans-cjk-fonts; macOS and Windows have one)"
)


class MissingFontWarning(UserWarning):
    """No font with Hangul is installed: Korean text in the figures is drawn as boxes."""


_found: list[str | None] = []  # the family found, once per process
_warned: list[bool] = []  # the missing font said, once per process


def has_cjk(text: str) -> bool:
    """Whether ``text`` has a character that only a CJK font draws (Hangul, kana, ideographs)."""
    return _CJK.search(text) is not None


def matplotlib_cjk_family() -> str | None:
    """The first of :data:`CJK_FAMILIES` matplotlib can draw with, after adding the system's
    CJK font files to its list when its cached list has none; None when the system has none.
    Looked up once per process."""
    if not _found:
        _found.append(_find_family())
    return _found[0]


def _find_family() -> str | None:
    from matplotlib import font_manager

    def known() -> str | None:
        names = {f.name for f in font_manager.fontManager.ttflist}
        return next((fam for fam in CJK_FAMILIES if fam in names), None)

    family = known()
    if family is not None:
        return family
    for path in font_manager.findSystemFonts():
        name = re.sub(r"[\s_-]", "", path.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower())
        if name.startswith(_CJK_FILES):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue  # a damaged or unreadable font file: another may serve
    return known()


def configure_matplotlib(rc: Any) -> None:
    """Set matplotlib's ``rc`` (its rcParams) to draw Latin text in its default sans-serif font
    (DejaVu Sans) and Hangul in the CJK family found, when there is one."""
    family = matplotlib_cjk_family()
    rc["font.family"] = ["sans-serif", family] if family else ["sans-serif"]


@contextmanager
def missing_glyphs_said_once() -> Iterator[None]:
    """Around drawing figures: matplotlib's warning for each CJK glyph its fonts lack (one per
    syllable, at layout and again at saving) becomes, when the system has no CJK font, one
    :class:`MissingFontWarning` per process naming the package to install. Every other warning
    passes through as it was raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    boxes = False
    for w in caught:
        glyph = _GLYPH.match(str(w.message))
        if glyph and has_cjk(chr(int(glyph.group(1)))) and matplotlib_cjk_family() is None:
            boxes = True
            continue
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    if boxes and not _warned:
        _warned.append(True)
        warnings.warn(
            "the figures' Korean text is drawn as empty boxes: no font with Hangul is "
            f"installed; {INSTALL_HINT}",
            MissingFontWarning,
            stacklevel=3,
        )
