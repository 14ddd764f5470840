"""Codex's tools as sidelight's hooks name them (the agent and its installer share them)."""

from __future__ import annotations

__all__ = ["WRITE_TOOLS"]

#: Codex's tool that writes files (their paths are in the patch text): its ``PreToolUse`` hook, matched
#: to it, is the stale-write guard's (docs/guard.md).
WRITE_TOOLS = ("apply_patch",)
