"""The watcher as a service: a systemd user unit (Linux,
``$XDG_CONFIG_HOME/systemd/user/sidelight-watch.service``) or a launchd agent (macOS,
``~/Library/LaunchAgents/dev.sidelight.watch.plist``) that runs ``sidelight watch``, restarts it when it
fails, and is started at once when the service manager answers (``sidelight install service``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from sidelight.agents import AGENT_FOLDER_VARIABLES
from sidelight.install.command import shell_line, sidelight_command
from sidelight.install.ledger import InstallError, Ledger, with_folders
from sidelight.records import InstallerSpec, InstallResult

__all__ = [
    "INSTALLER",
    "LAUNCHD_LABEL",
    "SERVICE_ENVIRONMENT",
    "SERVICE_MARKER",
    "SYSTEMD_UNIT",
    "install_service",
    "launchd_plist",
    "service_path",
    "systemd_unit",
    "uninstall_service",
]

#: The systemd user unit's name.
SYSTEMD_UNIT = "sidelight-watch.service"
#: The launchd agent's label (and its plist's name).
LAUNCHD_LABEL = "dev.sidelight.watch"
#: Every service file sidelight writes carries this marker, so uninstall removes only its own.
SERVICE_MARKER = "sidelight-watch-service"
#: The variables passed on to the service when set at install time: where the state, the config and the
#: agents' sessions are (and those a plugin's resolver declares). The watcher must use the state
#: directory the hooks use (its snapshot, its socket), and find the sessions they find; a service does
#: not inherit the shell's environment.
SERVICE_ENVIRONMENT = ("SIDELIGHT_STATE_DIR", "SIDELIGHT_CONFIG", *AGENT_FOLDER_VARIABLES)
#: Seconds a ``systemctl`` or ``launchctl`` call may take.
SERVICE_MANAGER_TIMEOUT = 30


def _service_platform(platform: str | None) -> str:
    """``linux`` (systemd) or ``darwin`` (launchd); anything else is refused."""
    name = sys.platform if platform is None else platform
    if name.startswith("linux"):
        return "linux"
    if name == "darwin":
        return "darwin"
    raise InstallError(f"sidelight install service knows systemd (Linux) and launchd (macOS), not {name!r}")


def service_path(platform: str | None = None, *, home: Path | None = None) -> Path:
    """Where the service file goes: ``$XDG_CONFIG_HOME/systemd/user/sidelight-watch.service`` (default
    ``~/.config``) or ``~/Library/LaunchAgents/<label>.plist``."""
    home = home or Path(os.environ.get("HOME") or Path.home())
    if _service_platform(platform) == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    config = os.environ.get("XDG_CONFIG_HOME", "").strip()
    base = Path(config) if config and Path(config).is_absolute() else home / ".config"
    return base / "systemd" / "user" / SYSTEMD_UNIT


def _service_environment() -> dict[str, str]:
    """:data:`SERVICE_ENVIRONMENT` and the resolvers' ``variables`` (a plugin agent's folder), as set."""
    from sidelight.plugins import get_plugins

    declared = (v for r in get_plugins().resolvers().values() for v in r.variables)
    names = dict.fromkeys((*SERVICE_ENVIRONMENT, *sorted(declared)))
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def _systemd_quote(value: str, *, always: bool = False) -> str:
    """A word of a unit file: ``%`` (a specifier) and ``$`` (a variable in ``ExecStart``) doubled; in
    double quotes, with backslashes and quotes escaped, when it holds a space or a quote (or
    ``always``)."""
    escaped = value.replace("%", "%%").replace("$", "$$")
    if not always and escaped and not re.search(r"[\s\"'\\;]", escaped):
        return escaped
    escaped = escaped.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def systemd_unit(command: list[str], environment: dict[str, str]) -> str:
    """The systemd user unit that runs ``command watch`` and restarts it when it fails."""
    lines = [
        f"# {SERVICE_MARKER}: written by `sidelight install service`; `uninstall service` removes it.",
        "[Unit]",
        "Description=sidelight watch: follows the agents' sessions (sidelight status, hooks answered warm)",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(_systemd_quote(part) for part in [*command, "watch"]),
        "Restart=on-failure",
        "RestartSec=5",
    ]
    lines += [f"Environment={_systemd_quote(f'{k}={v}', always=True)}" for k, v in environment.items()]
    lines += ["", "[Install]", "WantedBy=default.target", ""]
    return "\n".join(lines)


def launchd_plist(command: list[str], environment: dict[str, str], log: Path) -> str:
    """The launchd agent that runs ``command watch`` at login and again when it exits with an error."""
    import plistlib

    agent: dict[str, Any] = {
        "Label": LAUNCHD_LABEL,
        "Comment": f"{SERVICE_MARKER}: written by `sidelight install service`",
        "ProgramArguments": [*command, "watch"],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 5,
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
    }
    if environment:
        agent["EnvironmentVariables"] = environment
    return plistlib.dumps(agent, sort_keys=False).decode("utf-8")


def _manager(name: str, args: list[str]) -> tuple[bool, str]:
    """Runs ``name args`` (found on ``PATH``): whether it succeeded, and its last line of output or why
    it could not run."""
    import subprocess

    found = shutil.which(name)
    if found is None:
        return False, f"{name} is not on PATH"
    try:
        done = subprocess.run(
            [found, *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=SERVICE_MANAGER_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return False, f"{name} {' '.join(args)}: {error}"
    said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return done.returncode == 0, said[-1] if said else f"exit status {done.returncode}"


def install_service(*, platform: str | None = None, home: Path | None = None) -> list[InstallResult]:
    """Writes the service that runs ``sidelight watch`` (systemd user unit or launchd agent) and starts
    it when the service manager answers; else says the one command that starts it."""
    system = _service_platform(platform)
    path = service_path(system, home=home)
    command = sidelight_command()
    environment = _service_environment()
    if system == "darwin":
        log = (
            (home or Path(os.environ.get("HOME") or Path.home())) / "Library" / "Logs" / "sidelight-watch.log"
        )
        text = launchd_plist(command, environment, log)
    else:
        text = systemd_unit(command, environment)
    current = None
    if path.exists():
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InstallError(f"{path}: cannot read it ({error}); nothing was changed") from None
        if SERVICE_MARKER not in current:
            raise InstallError(f"{path} was not written by sidelight; not replacing it")
    results: list[InstallResult] = []
    if current == text:
        results.append(InstallResult("service", path, False, f"already installed: {path}"))
    else:
        what = "launchd agent" if system == "darwin" else "systemd user unit"
        ours = lambda text: SERVICE_MARKER in text  # noqa: E731
        results.append(
            Ledger("service", path).save(path, text, f"installed the {what}", ours=ours, whole=True)
        )
    changed = results[0].changed
    runs = f"it runs: {shell_line([*command, 'watch'])}"
    if environment:
        runs += ", with " + ", ".join(f"{k}={v}" for k, v in environment.items()) + " (as set now)"
    results.append(InstallResult("service", path, changed, runs))
    how = "unchanged" if not changed else ("new" if current is None else "replaced")
    start = _start_launchd(path, how) if system == "darwin" else _start_systemd(how)
    results.append(InstallResult("service", path, changed, start))
    return results


def _start_systemd(how: str) -> str:
    """``systemctl --user daemon-reload`` and ``enable --now`` (``how`` the file was written: ``new``,
    ``replaced``, then also ``try-restart``: a running unit keeps its old command line, or
    ``unchanged``); the command to run instead when the user's service manager cannot be reached."""
    enable = ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT]
    by_hand = f"systemctl --user daemon-reload && {shell_line(enable)}"
    ok, said = _manager("systemctl", ["--user", "daemon-reload"])
    if not ok:
        return f"the user's systemd cannot be reached ({said}); to start the service, run: {by_hand}"
    ok, said = _manager("systemctl", enable[1:])
    if not ok:
        raise InstallError(f"{shell_line(enable)} failed: {said}")
    if how == "replaced":
        ok, said = _manager("systemctl", ["--user", "try-restart", SYSTEMD_UNIT])
        if not ok:
            raise InstallError(f"systemctl --user try-restart {SYSTEMD_UNIT} failed: {said}")
    return f"enabled and started: {shell_line(enable)} (logs: journalctl --user -u {SYSTEMD_UNIT})"


def _start_launchd(path: Path, how: str) -> str:
    """``launchctl bootstrap gui/UID PLIST`` (after ``bootout`` of the agent's old definition when its
    file was ``replaced``), else ``launchctl load -w``; the command to run when neither works. An agent
    already loaded from an ``unchanged`` file is left as it is."""
    domain = f"gui/{os.getuid()}"
    target = f"{domain}/{LAUNCHD_LABEL}"
    bootstrap = ["launchctl", "bootstrap", domain, str(path)]
    if shutil.which("launchctl") is None:
        return f"launchctl is not on PATH; to start the agent, run: {shell_line(bootstrap)}"
    if how == "unchanged" and _manager("launchctl", ["print", target])[0]:
        return f"already loaded: {target}"
    if how == "replaced":
        _manager("launchctl", ["bootout", target])  # not loaded is fine
    _manager("launchctl", ["enable", target])  # as `load -w` does: a disabled agent would not start
    ok, said = _manager("launchctl", bootstrap[1:])
    if ok:
        return f"loaded and started: {shell_line(bootstrap)}"
    ok, _legacy = _manager("launchctl", ["load", "-w", str(path)])
    if ok:
        return f"loaded and started: launchctl load -w {shlex.quote(str(path))}"
    return f"launchd did not load the agent ({said}); to start it, run: {shell_line(bootstrap)}"


def uninstall_service(*, platform: str | None = None, home: Path | None = None) -> list[InstallResult]:
    """Stops and disables the service sidelight installed, and removes its file."""
    system = _service_platform(platform)
    path = service_path(system, home=home)
    if not path.exists():
        return [InstallResult("service", path, False, f"not installed: {path}")]
    if SERVICE_MARKER not in path.read_text(encoding="utf-8", errors="replace"):
        raise InstallError(f"{path} was not written by sidelight; not removing it")
    stopped = _stop_launchd(path) if system == "darwin" else _stop_systemd(path)
    path.unlink()
    ledger = Ledger("service", path)
    wants = path.parent / "default.target.wants"
    if str(path.parent) in ledger.folders:
        # systemctl enable made it in the folder install made; disable leaves it empty.
        with contextlib.suppress(OSError):
            wants.rmdir()
    results = [with_folders(InstallResult("service", path, True, f"removed {path}"), ledger.forget())]
    if stopped:
        results.insert(0, InstallResult("service", path, True, stopped))
    if system == "linux":
        _manager("systemctl", ["--user", "daemon-reload"])  # forget the removed unit (if it answers)
    return results


def _stop_systemd(path: Path) -> str:
    disable = ["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT]
    ok, said = _manager("systemctl", disable[1:])
    if ok:
        return f"stopped and disabled: {shell_line(disable)}"
    # No user manager to ask: take out the link `enable` made, so a later manager does not look for the
    # removed file; a service can only be running under a manager, which would have answered.
    link = path.parent / "default.target.wants" / SYSTEMD_UNIT
    if link.is_symlink():
        link.unlink()
        return f"the user's systemd cannot be reached ({said}); removed the link {link}"
    return f"the user's systemd cannot be reached ({said})"


def _stop_launchd(path: Path) -> str:
    target = f"gui/{os.getuid()}/{LAUNCHD_LABEL}"
    ok, said = _manager("launchctl", ["bootout", target])
    if ok:
        return f"stopped and unloaded: launchctl bootout {target}"
    ok, _legacy = _manager("launchctl", ["unload", "-w", str(path)])
    if ok:
        return f"stopped and unloaded: launchctl unload -w {shlex.quote(str(path))}"
    return f"launchd did not unload the agent ({said}); it may not have been loaded"


#: ``sidelight install service`` (and ``uninstall``), registered by the template ``installers``.
INSTALLER = InstallerSpec(
    name="service",
    install=lambda scope: install_service(),
    uninstall=lambda scope: uninstall_service(),
    description="a systemd user unit (Linux) or launchd agent (macOS) running 'sidelight watch'",
    scopes=("user",),
)
