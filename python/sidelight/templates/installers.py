"""Built-in installers: ``sidelight install NAME`` for the hosts sidelight ships (:mod:`sidelight.install`
does the work), registered through ``sidelight_installers`` as a plugin's are.

``sidelight install skill`` is not here: it takes a folder (``--dir``), and the reader owns it.
"""

from __future__ import annotations

from sidelight._fast._hookimpl import hookimpl
from sidelight.records import InstallerSpec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from sidelight.records import InstallResult

#: Each built-in target, the scopes it can be set up in, and what it sets up (``sidelight install --help``).
TARGETS: dict[str, tuple[tuple[str, ...], str]] = {
    "claude-code": (("user", "project"), "hooks in settings.json (user: ~/.claude, project: ./.claude)"),
    "codex": (("user",), "~/.codex/hooks.json and [features] hooks = true in config.toml"),
    "pi": (("user",), "the extension ~/.pi/agent/extensions/sidelight.ts"),
    "gemini": (("user",), "hooks in ~/.gemini/settings.json (run only in a folder Gemini trusts)"),
    "qwen": (("user",), "hooks in ~/.qwen/settings.json"),
    "copilot": (("user",), "~/.copilot/hooks/sidelight.json"),
    "opencode": (
        ("user", "project"),
        "the plugin ~/.config/opencode/plugin/sidelight.ts (project: ./.opencode/plugin)",
    ),
    "service": (("user",), "a systemd user unit (Linux) or launchd agent (macOS) running 'sidelight watch'"),
}


def _step(target: str, *, install: bool) -> Callable[[str], list[InstallResult]]:
    def run(scope: str) -> list[InstallResult]:
        from sidelight import install as installer  # the work, only when it is asked for

        return (installer.install if install else installer.uninstall)(target, scope=scope)

    return run


@hookimpl
def sidelight_installers() -> Iterator[InstallerSpec]:
    for target, (scopes, description) in TARGETS.items():
        yield InstallerSpec(
            name=target,
            install=_step(target, install=True),
            uninstall=_step(target, install=False),
            description=description,
            scopes=scopes,
        )
