"""One registry mechanism for everything a package outside the toolkit may add: judge methods, leaf kinds of a
tree, output formats (`--format`) and perturbation rules.

Each kind of thing is one `Registry`: `register` refuses a name already taken by another module (two modules
claiming one name is a bug, never a silent overwrite), `lookup` answers an unknown name with the known ones and
a did-you-mean, `names` lists them. What the toolkit ships registers itself when its module is imported (the
registry imports `builtin_modules` on first use); an installed package adds its own through the registry's
entry-point group, read once per process:

    [project.entry-points."howtobench.judges"]         # or howtobench.leaf_kinds, howtobench.formats,
    mine = "my_package.judge"                          #    howtobench.perturbations

The entry point names a module that registers its things when imported (as the toolkit's own modules do). A
plugin that fails to import stops with its name in one line, not a traceback.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, TypeVar

from howtobench.suggest import unknown_name

T = TypeVar("T")

GROUPS: dict[str, str] = {
    "judge method": "howtobench.judges",
    "leaf kind": "howtobench.leaf_kinds",
    "output format": "howtobench.formats",
    "perturbation rule": "howtobench.perturbations",
}
"""The entry-point group of each registry, by what it holds (docs/plugins.md)."""


class Registry(Mapping[str, T], Generic[T]):
    """Names -> things of one kind, filled by the modules that define them and by installed plugins.

    `what` names the kind in messages ("judge method"); `error` is the exception an unknown or duplicate name
    raises (the kind's own: JudgeError for judges, ValueError where a pydantic validator reports it);
    `builtin_modules` are imported on first use; a missing one is skipped only when it is itself the missing
    module (an optional part whose extra is not installed), never when something it imports is missing.
    As a Mapping it reads like the dict it replaces (`name in registry`, `registry[name]`, iteration in
    registration order), every read loading the built-in modules and plugins first."""

    def __init__(self, what: str, *, error: type[Exception] = ValueError,
                 builtin_modules: tuple[str, ...] = ()) -> None:
        self.what = what
        self.group = GROUPS[what]
        self._error = error
        self._builtin_modules = builtin_modules
        self._items: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._loaded = False
        self._loading = False

    def register(self, name: str, item: T, origin: str) -> T:
        """Add `item` as `name`. `origin` is the module registering it: the same module registering the name again
        (a re-import) replaces it; another module's claim on a taken name is refused."""
        known = self._origins.get(name)
        if known is not None and known != origin:
            raise self._error(f"{self.what} {name!r} is registered twice: by {known} and by {origin}")
        self._items[name] = item
        self._origins[name] = origin
        return item

    def unregister(self, name: str) -> None:
        """Remove a name (a test's own, or a plugin's)."""
        self._items.pop(name, None)
        self._origins.pop(name, None)

    def pop(self, name: str) -> T:
        """Remove a name and return what it held (KeyError when it holds nothing), as the dict it replaces did."""
        item = self._items[name]
        self.unregister(name)
        return item

    def lookup(self, name: str, what: str | None = None) -> T:
        """The thing called `name`; an unknown name is `error` naming the known ones (sorted), with a did-you-mean
        (`what` words the kind for this use: "scorer kind of leaf x:")."""
        self.load()
        if name not in self._items:
            raise self._error(unknown_name(what or self.what, name, sorted(self._items)))
        return self._items[name]

    def names(self, key: Callable[[T], Any] | None = None) -> tuple[str, ...]:
        """Every registered name, in registration order, or sorted by `key` of the thing."""
        self.load()
        if key is None:
            return tuple(self._items)
        ordered = sorted(self._items.items(), key=lambda pair: key(pair[1]))
        return tuple(name for name, _ in ordered)

    def origin(self, name: str) -> str:
        """The module that registered `name`."""
        self.load()
        return self._origins[name]

    def load(self) -> None:
        """Import the built-in modules, then every installed plugin of the group (both once per process)."""
        if self._loaded or self._loading:
            return
        self._loading = True  # a built-in module reading the registry while it is imported sees what is there
        try:
            for module in self._builtin_modules:
                _import_optional(module)
            for entry in importlib.metadata.entry_points(group=self.group):
                try:
                    entry.load()
                except Exception as exc:  # any failure of someone else's package, said in one line
                    raise self._error(f"the {self.what} plugin {entry.name!r} ({entry.value}) failed to load: "
                                      f"{type(exc).__name__}: {exc}") from exc
            self._loaded = True
        finally:
            self._loading = False

    def reload_plugins(self) -> None:
        """Read the entry points again at the next use (a test that installs a plugin package mid-process)."""
        self._loaded = False

    # Mapping: reads load first, so `name in registry` sees plugins too
    def __getitem__(self, name: str) -> T:
        self.load()
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        self.load()
        return iter(list(self._items))

    def __len__(self) -> int:
        self.load()
        return len(self._items)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items


def _import_optional(module: str) -> None:
    """Import `module`; only its own absence (an optional part not installed) is skipped."""
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
