# SPDX-License-Identifier: MIT
"""The verdict scale every claim is judged on, in report.md, the site and the explorer alike.

A claim is checked at several points (a figure's x values, a grid's rows, a table's lines, a
grid's cells). At each point the evidence is *judged* when it has an interval: at least two
independent replicates (runs that differ; identical runs are one sample, see
:data:`DETERMINISTIC`). A judged point is significant in the claimed direction, significant in
the opposite direction, or neither. With ``share`` the share of judged points the claim asks
for (``min_significant_share``)::

    contradicted    the opposite direction significant at >= share of the judged points
    holds           the claimed direction significant at >= share, the opposite at none
    partly holds    the claimed direction significant at >= share / 2, the opposite at none
    does not hold   anything else (too few significant points, or some significant the
                    other way)
    not judged      no judged point (the reason is said: one run, identical runs, no runs)

A headline claim (the paper's main result) reads the same verdict in a paper's words:
reproduced, partly reproduced, not reproduced, contradicted, not judged.
"""

from __future__ import annotations

HOLDS = "holds"
PARTLY = "partly holds"
DOES_NOT_HOLD = "does not hold"
CONTRADICTED = "contradicted"
NOT_JUDGED = "not judged"

#: Every verdict, in the order a reader scans them (a longer word before its prefix, so that a
#: text is matched by its own verdict: "partly holds" before "holds").
VERDICTS = (CONTRADICTED, PARTLY, DOES_NOT_HOLD, HOLDS, NOT_JUDGED)

#: The same verdicts said of a paper's main result.
HEADLINE_WORDS = {
    HOLDS: "reproduced",
    PARTLY: "partly reproduced",
    DOES_NOT_HOLD: "not reproduced",
    CONTRADICTED: "contradicted",
    NOT_JUDGED: "not judged",
}

#: Why a point has no interval although it ran several seeds: every run came out the same.
DETERMINISTIC = "deterministic: {n} identical runs"


def scale(judged: int, claimed: int, opposite: int, share: float) -> str:
    """The verdict of a claim with ``judged`` points that have an interval, of which
    ``claimed`` are significant in the claimed direction and ``opposite`` in the other one,
    when the claim asks for ``share`` of them (in (0, 1])."""
    if not 0 < share <= 1:
        raise ValueError(f"share {share!r} is not in (0, 1]")
    if judged <= 0:
        return NOT_JUDGED
    if opposite / judged >= share:
        return CONTRADICTED
    if opposite == 0 and claimed / judged >= share:
        return HOLDS
    if opposite == 0 and claimed / judged >= share / 2:
        return PARTLY
    return DOES_NOT_HOLD


def verdict_of(text: str) -> str:
    """The verdict a claim's text starts with ("holds: ..."); :data:`NOT_JUDGED` if none."""
    low = text.strip().lower()
    for v in VERDICTS:
        if low.startswith(v):
            return v
    return NOT_JUDGED


def headline_word(verdict: str) -> str:
    """A verdict as said of a paper's main result ("holds" -> "reproduced")."""
    return HEADLINE_WORDS[verdict]
