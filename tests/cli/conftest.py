"""Fixtures of the CLI tests."""

from cli_invoke import invoke

__all__ = ["invoke"]
