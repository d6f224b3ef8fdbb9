"""How many test labels ``align`` needs to show a given gain in agreement with 80% power.

The test split's agreement difference is McNemar's test on paired outcomes (candidate
right and baseline wrong, or the reverse). With a discordant share ``psi`` and a true
gain ``delta`` (``p10 - p01``), Connor's (1987) sample size for a two-sided test at level
``alpha`` and power ``1 - beta`` is

    n = (z_{1-alpha/2} sqrt(psi) + z_{1-beta} sqrt(psi - delta^2))^2 / delta^2.

Without a guess of ``psi`` it assumes the two judges err independently of each other,
``psi = pb (1 - pc) + pc (1 - pb)`` with ``pc = pb + delta``; judges that err on the
same items (one model, two prompts) discord less and need fewer labels, so this is on
the safe side for them. Checked against a simulation of the exact test in
``tests/unit/test_align_power.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from judgekit.errors import InputError


@dataclass(frozen=True)
class GainPlan:
    """Test labels needed, and the assumptions they rest on."""

    labels_needed: int
    baseline_agreement: float
    gain: float
    discordant: float
    power: float
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        return {"labels_needed": self.labels_needed, "baseline_agreement": self.baseline_agreement,
                "gain": self.gain, "discordant": self.discordant, "power": self.power,
                "confidence_level": self.confidence_level,
                "formula": "Connor (1987), McNemar's test on paired agreement"}

    def sentence(self) -> str:
        return (f"{self.labels_needed} labels in the test split detect an agreement gain of "
                f"{self.gain:g} "
                f"over a baseline at {self.baseline_agreement:g} with {self.power:.0%} power "
                f"({self.confidence_level:.0%} two-sided McNemar test, discordant share "
                f"{self.discordant:.3f}); at the default 35% test split that is about "
                f"{math.ceil(self.labels_needed / 0.35)} labeled items in all")


def labels_for_gain(baseline_agreement: float, gain: float, *, power: float = 0.8,
                       confidence_level: float = 0.95,
                       discordant: float | None = None) -> GainPlan:
    """Connor's sample size (module docstring); each argument checked with a clear message."""
    from scipy.special import ndtri  # the normal quantile, without importing scipy.stats

    if not 0 < baseline_agreement < 1:
        raise InputError(f"--baseline-agreement must be between 0 and 1, got {baseline_agreement}")
    if not 0 < gain < 1 - baseline_agreement:
        raise InputError(f"--test-gain must be above 0 and leave the candidate's agreement below "
                         f"1, got {gain} over {baseline_agreement}")
    if not 0 < power < 1 or not 0 < confidence_level < 1:
        raise InputError("--power and --confidence must be between 0 and 1")
    pb, pc = baseline_agreement, baseline_agreement + gain
    psi = pb * (1 - pc) + pc * (1 - pb) if discordant is None else discordant
    if not gain**2 < psi <= 1 or psi < gain:
        raise InputError(f"--discordant must be at least the gain ({gain}) and at most 1, "
                         f"got {psi}")
    za = float(ndtri(1 - (1 - confidence_level) / 2))
    zb = float(ndtri(power))
    n = (za * math.sqrt(psi) + zb * math.sqrt(psi - gain**2)) ** 2 / gain**2
    return GainPlan(math.ceil(n), pb, gain, psi, power, confidence_level)
