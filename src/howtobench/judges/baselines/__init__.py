"""The LLM-judge baselines of the paper's Table 3, one module each, registered on import.

    single     one call, one 1-10 score against instruction and reference
    autoplan   one call: the judge picks its own sub-dimensions, scores them and combines them itself
    rubric     one call with the genre's elaborated rubric: per-dimension scores and an overall score
    average    ToW without the plan: stored ToW leaves aggregated with uniform weights (no call)

Every LLM baseline takes `samples=n` (self-consistency at temperature > 0, every sample kept). Every module of
this package is imported with it, so a new baseline is one module that calls `register_judge` (plus its templates).
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
