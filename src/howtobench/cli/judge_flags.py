"""The judge's options as flags (--no-reference, --renormalize, --samples, --tree, --from, --judge-max-tokens,
--prompt-language, and any option of the method as --judge-option KEY=VALUE), written once for `judge`, `run`
and `serve`: each command takes the ones it has as one `Judging`, whose `options(method)` is what the judge is
built with."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from howtobench.cli.options import JudgeMaxTokensOpt, PromptLanguageOpt
from howtobench.judges.options import judge_options, parse_judge_options, prompt_language_for, with_judge_options

NoReferenceOpt = Annotated[bool, typer.Option("--no-reference", help="Reference-free judging: the prompts carry "
                           "absolute score anchors and no reference text (paper Appendix B.2).")]
RenormalizeOpt = Annotated[bool, typer.Option("--renormalize", help="When a leaf fails, still compute the root over "
                           "the scored leaves (weights renormalised); such judgments are flagged 'renormalized'. "
                           "Without it a failed leaf leaves the root empty.")]
SamplesOpt = Annotated[int, typer.Option("--samples", min=1, help="Self-consistency, n samples at temperature 0.7. "
                       "tow: negotiate the edge weights n times per item and report the mean root and every "
                       "sample's root (negotiation-inconsistency analysis). single/autoplan/rubric: n judge calls "
                       "per writing (cached per sample), every sample kept, score = mean of the valid samples. "
                       "Default 1: one deterministic call.")]
FromOpt = Annotated[Path | None, typer.Option("--from", help="For --method average: the ToW judgments file "
                    "(from `howtobench judge --method tow`) whose leaves are re-aggregated with uniform weights; "
                    "its writings are the ones judged (the filters narrow them; writings of your own also need "
                    "--writings).")]
TreeOpt = Annotated[Path | None, typer.Option("--tree", help="Tree spec YAML, or a bundled tree by name: default "
                    "(the paper's judge), debiased (the same tree with a system prompt asking not to reward length; "
                    "not the paper's) or analysis-first (every leaf reasons before it scores; the authors put the "
                    "score first on logic, emotion, plots, paragraphing and impression). Add a leaf or change a scale "
                    "by editing a copy of "
                    "src/howtobench/judges/trees/default.yaml (or start it with `base: default`).")]
JudgeOptionOpt = Annotated[list[str] | None, typer.Option("--judge-option", metavar="KEY=VALUE", help="An option "
                           "of the judge method (repeatable), checked against what the method takes and converted to "
                           "its type: e.g. --judge-option samples=3. `howtobench list methods` names the methods; "
                           "each judgment records the options its judge was built with.")]


@dataclass(frozen=True)
class Judging:
    """How the judge judges, as a command's flags give it (each field is its flag: `params.bundled` reads them)."""

    no_reference: NoReferenceOpt = False
    renormalize: RenormalizeOpt = False
    samples: SamplesOpt = 1
    tree: TreeOpt = None
    from_: FromOpt = None
    judge_max_tokens: JudgeMaxTokensOpt = None
    prompt_language: PromptLanguageOpt = None
    judge_option: JudgeOptionOpt = None

    def options(self, method: str) -> dict[str, Any]:
        """The judge options of `method` (only those changed from their defaults, see `judge_options`, then each
        --judge-option); a prompt language for a method that sends no prompt is an error."""
        given = parse_judge_options(self.judge_option)
        language = self.prompt_language if self.prompt_language is not None else given.pop("prompt_language", None)
        flagged = judge_options(with_reference=not self.no_reference, renormalize=self.renormalize,
                                samples=self.samples, tree=self.tree, max_tokens=self.judge_max_tokens,
                                tow_results=self.from_, prompt_language=prompt_language_for(method, language))
        return with_judge_options(method, flagged, given)


AS_JUDGED = Judging()
"""The default of a command's `judging: Judging` parameter (what the flags' defaults make)."""
