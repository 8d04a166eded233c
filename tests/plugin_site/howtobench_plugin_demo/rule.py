"""Perturbation rule `reverse-paragraphs`: the paragraphs in reverse order (a structure edit a judge should see)."""

from __future__ import annotations

from howtobench.robustness.perturb import Perturbation, PerturbContext, Perturbed, rule


@rule("reverse-paragraphs")
def reverse_paragraphs(text: str, seed: int, ctx: PerturbContext) -> Perturbed:
    paragraphs = [line for line in text.splitlines() if line.strip()]
    record = Perturbation(kind="reverse-paragraphs", seed=seed, changes=({"reversed": len(paragraphs)},))
    return Perturbed("\n\n".join(reversed(paragraphs)), record)
