"""The toolkit's version, in a module of its own below everything: the outputs that record which howtobench made
them (judgment files, manifests, leaderboard signatures, calibration files) read it here, while the package's face
(`howtobench/__init__.py`) hands on the public API from above everything."""

__version__ = "0.1.0"
