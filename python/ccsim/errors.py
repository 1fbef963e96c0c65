# SPDX-License-Identifier: MIT
"""The exceptions of ccsim, declared once in the compiled core and re-exported here.

- ``Error``: the base of every ccsim error;
- ``ScenarioError``: the scenario is invalid and nothing ran; ``.path`` names the field
  (``links.bottleneck.rate``) and ``.reason`` says what is wrong with it;
- ``SimulationError``: the run itself failed.
"""

from ccsim._core import Error, ScenarioError, SimulationError

__all__ = ["Error", "ScenarioError", "SimulationError"]
