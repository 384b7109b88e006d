"""The published tree of a build against the chosen hosts' limits (a walk of the
tree: only when a chosen host has such limits)."""

from __future__ import annotations

from . import chosen_tree_limits
from .limits import measure, tree_warnings

__all__ = ["published_tree_warnings"]


def published_tree_warnings(config) -> list[str]:
    limits = chosen_tree_limits(config.hosts)
    if not limits or not config.output.exists():
        return []
    return tree_warnings(limits, measure(config.output))
