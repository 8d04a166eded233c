"""howtobench: the HoWToBench writing benchmark and the Tree-of-Writing judge."""

__version__ = "0.1.0"
