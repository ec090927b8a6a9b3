"""Target discovery through the ``svcc.targets`` entry-point group.

Built-in targets are declared in svcc's own ``pyproject.toml`` exactly as a third-party
target would be. Listing reads entry-point metadata only; a target's module is imported
when it is selected, which keeps ``svcc --help`` fast. Two distributions declaring the
same name is fatal, with both named; an unknown name gets a "did you mean".
"""

import difflib
from importlib.metadata import EntryPoint, entry_points
from typing import Final

from attrs import frozen
from svcc.compiler.errors import UsageError
from svcc.compiler.target import Target

GROUP: Final = "svcc.targets"


@frozen
class TargetEntry:
    name: str
    value: str
    distribution: str
    entry_point: EntryPoint

    def load(self) -> Target:
        try:
            obj = self.entry_point.load()
        except Exception as exc:
            raise UsageError(
                f"target {self.name!r} ({self.value}, from {self.distribution}) failed to "
                f"load: {exc}"
            ) from None
        target = obj() if isinstance(obj, type) else obj
        if not isinstance(target, Target) or target.name != self.name:
            raise UsageError(
                f"target {self.name!r} ({self.value}) is not a Target named {self.name!r}"
            )
        return target


def discover() -> dict[str, TargetEntry]:
    found: dict[str, TargetEntry] = {}
    for ep in entry_points(group=GROUP):
        dist = ep.dist.name if ep.dist is not None else "<unknown distribution>"
        entry = TargetEntry(ep.name, ep.value, dist, ep)
        previous = found.get(ep.name)
        if previous is not None:
            if (previous.value, previous.distribution) == (entry.value, entry.distribution):
                continue  # the same distribution seen twice on the path
            raise UsageError(
                f"two targets are named {ep.name!r}: {previous.value} (from "
                f"{previous.distribution}) and {entry.value} (from {entry.distribution}); "
                "uninstall one"
            )
        found[ep.name] = entry
    return dict(sorted(found.items()))


def get_target(name: str) -> Target:
    targets = discover()
    if name not in targets:
        close = difflib.get_close_matches(name, list(targets), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = ", ".join(targets) or "none installed"
        raise UsageError(f"unknown target {name!r}{hint} (known: {known})")
    return targets[name].load()
