"""The writings file of a model is named safely whatever the model's name."""

from __future__ import annotations

from howtobench.generate import safe_file_stem


def test_keeps_letters_digits_and_dash_dot_underscore_only() -> None:
    assert safe_file_stem("gpt-4o-2024-11-20") == "gpt-4o-2024-11-20"
    assert safe_file_stem("org/model:7b q4") == "org_model_7b_q4"
    assert safe_file_stem("../etc") == ".._etc"
    assert safe_file_stem("通义千问-v2.5") == "通义千问-v2.5"


def test_never_a_dot_folder_or_empty() -> None:
    assert safe_file_stem("..") == "__" and safe_file_stem(".") == "_" and safe_file_stem("") == "_"
