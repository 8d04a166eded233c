"""A plugin package as someone outside the toolkit would write it (issue 36 point 2): one judge method, one leaf
kind, one output format and one perturbation rule, each in its own module named by an entry point of its group.
tests/test_plugins.py installs it through a temporary dist-info and drives the CLI with it."""
