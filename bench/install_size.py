"""What `pip install howtobench` puts on disk: the site-packages of a fresh venv with the core install only (what a
trainer image that needs `serve` and the RL adapters gets), the largest distributions first.

    python bench/install_size.py [--source DIR] [--extras plots,metrics] [--keep DIR] [--top 15]

Builds a venv in a temporary folder (or --keep DIR), runs `pip install SOURCE[EXTRAS]` (a non-editable install
of the working tree by default, as a user's `pip install howtobench` would be), then prints the size of
site-packages in MiB (file sizes), whole and without what the venv brings before any install (pip, setuptools)
and without howtobench itself (the measure of issue 36: what `pip install howtobench` adds as dependencies), the
number of distributions, and the largest ones with their share. The goal (issue 36): at most 250 MiB for the
core install. `--keep DIR` leaves the venv there (e.g. to collect the tests of a partial install).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import venv
from collections import defaultdict
from importlib.metadata import PathDistribution
from pathlib import Path

MIB = 1024 * 1024
VENV_OWN = ("pip", "setuptools")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the project to install (default: this working tree)")
    parser.add_argument("--extras", default="", help="comma-separated extras to add (default: none, the core)")
    parser.add_argument("--keep", type=Path, default=None, help="build the venv here and leave it")
    parser.add_argument("--top", type=int, default=15, help="how many of the largest distributions to list")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="howtobench-size-") as tmp:
        root = args.keep or Path(tmp) / "venv"
        site = install(root, args.source, args.extras)
        report(site, args.top, args.extras)


def install(root: Path, source: Path, extras: str) -> Path:
    """A fresh venv at `root` with `source[extras]` installed; returns its site-packages."""
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    python = root / "bin" / "python"
    target = f"{source.resolve()}[{extras}]" if extras else str(source.resolve())
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-cache-dir", target], check=True)
    found = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           check=True, capture_output=True, text=True)
    return Path(found.stdout.strip())


def report(site: Path, top: int, extras: str) -> None:
    """Total size of site-packages, and per distribution (its RECORD's files; what no RECORD names: 'other')."""
    total = sum(p.stat().st_size for p in site.rglob("*") if p.is_file() and not p.is_symlink())
    owned: dict[str, int] = defaultdict(int)
    counted: set[Path] = set()
    infos = sorted(site.glob("*.dist-info"))
    for info in infos:
        dist = PathDistribution(info)
        for file in dist.files or ():
            path = (site / file).resolve()
            if path not in counted and path.is_file():
                counted.add(path)
                owned[dist.metadata["Name"]] += path.stat().st_size
    owned["other (not in any RECORD: caches, the venv's own)"] = total - sum(owned.values())
    installer = sum(owned.get(name, 0) for name in VENV_OWN)
    print(f"install: howtobench{f'[{extras}]' if extras else ''} into a fresh venv (python {sys.version.split()[0]})")
    print(f"site-packages: {total / MIB:.1f} MiB in {len(infos)} distributions")
    print(f"  without pip and setuptools (the venv's own): {(total - installer) / MIB:.1f} MiB")
    print(f"  without them and howtobench itself (its dependencies): "
          f"{(total - installer - owned.get('howtobench', 0)) / MIB:.1f} MiB in {len(infos) - 3} distributions")
    for name, size in sorted(owned.items(), key=lambda pair: -pair[1])[:top]:
        print(f"  {size / MIB:8.1f} MiB  {100 * size / total:5.1f}%  {name}")


if __name__ == "__main__":
    main()
