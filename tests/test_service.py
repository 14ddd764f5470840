"""`sidelight install service` / `uninstall service`: the watcher as a systemd user unit or a launchd
agent, in a throwaway HOME, with a fake `systemctl` / `launchctl` on PATH that records its arguments
(and with none). The platform is a parameter, so the macOS path runs on Linux too."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sidelight import install
from sidelight.install import service
from tests.test_install import backups, cli, tree
from tests.test_install import home as home  # the throwaway HOME fixture

UNIT = Path(".config") / "systemd" / "user" / service.SYSTEMD_UNIT
PLIST = Path("Library") / "LaunchAgents" / f"{service.LAUNCHD_LABEL}.plist"

# A fake service manager: records "NAME ARGS" in $FAKE_LOG; fails (exit 1, a systemctl-like message)
# when its arguments contain $FAKE_FAIL. The fake launchctl keeps whether the agent is loaded in a file,
# as launchd would: `print` fails for an agent that is not loaded.
FAKE = """#!/bin/sh
echo "{name} $*" >> "$FAKE_LOG"
if [ -n "$FAKE_FAIL" ]; then
  case "$*" in *"$FAKE_FAIL"*) echo "Failed to connect to bus: No medium found" >&2; exit 1;; esac
fi
if [ "{name}" = launchctl ]; then
  case "$1" in
    bootstrap) : > "$FAKE_LOG.loaded";;
    bootout) [ -e "$FAKE_LOG.loaded" ] || exit 3; rm -f "$FAKE_LOG.loaded";;
    print) [ -e "$FAKE_LOG.loaded" ] || exit 113;;
  esac
fi
exit 0
"""


@pytest.fixture
def managers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``systemctl`` and ``launchctl`` fakes alone on PATH; returns the log of their calls."""
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    for name in ("systemctl", "launchctl"):
        script = folder / name
        script.write_text(FAKE.format(name=name), encoding="utf-8")
        script.chmod(0o755)
    log = tmp_path / "manager.log"
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("FAKE_LOG", str(log))
    monkeypatch.delenv("FAKE_FAIL", raising=False)
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "SIDELIGHT_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SIDELIGHT_BIN", "'/opt/side light/bin/sidelight'")  # a shell word
    return log


def calls(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def messages(results: list[install.InstallResult]) -> str:
    return "\n".join(r.message for r in results)


# ---------------------------------------------------------------------------------------------------
# systemd (Linux)


def test_systemd_unit_runs_watch_by_absolute_path_and_restarts_on_failure(home: Path, managers: Path) -> None:
    results = service.install_service(platform="linux")
    path = home / UNIT
    text = path.read_text(encoding="utf-8")
    assert '\nExecStart="/opt/side light/bin/sidelight" watch\n' in text
    assert "\nRestart=on-failure\n" in text
    assert "\nWantedBy=default.target\n" in text
    assert "Environment=" not in text  # nothing set at install time, nothing passed
    assert calls(managers) == [
        "systemctl --user daemon-reload",
        f"systemctl --user enable --now {service.SYSTEMD_UNIT}",
    ]
    assert results[0].changed and results[0].path == path
    assert f"enabled and started: systemctl --user enable --now {service.SYSTEMD_UNIT}" in messages(results)


def test_systemd_unit_passes_the_state_dir_and_config_set_at_install(
    home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", "/srv/state 100%")
    monkeypatch.setenv("SIDELIGHT_CONFIG", "/etc/sidelight.toml")
    results = service.install_service(platform="linux")
    text = (home / UNIT).read_text(encoding="utf-8")
    # In a unit file a % starts a specifier: doubled, it is a plain %.
    assert 'Environment="SIDELIGHT_STATE_DIR=/srv/state 100%%"\n' in text
    assert 'Environment="SIDELIGHT_CONFIG=/etc/sidelight.toml"\n' in text
    said = messages(results)
    assert "SIDELIGHT_STATE_DIR=/srv/state 100%" in said and "SIDELIGHT_CONFIG=/etc/sidelight.toml" in said
    assert "(as set now)" in said


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_accepts_the_unit(home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", '/srv/a "quoted" $dir 100%')
    service.install_service(platform="linux")
    analyze = shutil.which("systemd-analyze", path="/usr/bin:/bin")
    assert analyze is not None
    done = subprocess.run(
        [analyze, "verify", str(home / UNIT)], capture_output=True, text=True, timeout=60, check=False
    )
    # The fake binary path does not exist: that is the only complaint allowed.
    problems = [line for line in done.stderr.splitlines() if line.strip() and "/opt/side light" not in line]
    assert problems == [], done.stderr


def test_systemd_install_twice_changes_nothing_and_a_changed_file_is_backed_up(
    home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.install_service(platform="linux")
    path = home / UNIT
    first = path.read_text(encoding="utf-8")
    again = service.install_service(platform="linux")
    assert not again[0].changed and again[0].message == f"already installed: {path}"
    assert path.read_text(encoding="utf-8") == first and backups(path) == []
    # sidelight moved: the unit is rewritten (no backup of a file sidelight wrote as it is), and the
    # running service restarted.
    monkeypatch.setenv("SIDELIGHT_BIN", "/usr/local/bin/sidelight")
    managers.unlink()
    moved = service.install_service(platform="linux")
    assert moved[0].changed and moved[0].backup is None and backups(path) == []
    assert "ExecStart=/usr/local/bin/sidelight watch\n" in path.read_text(encoding="utf-8")
    assert f"systemctl --user try-restart {service.SYSTEMD_UNIT}" in calls(managers)
    # Edited by hand since: the edit is kept in the state directory's backups before it is replaced.
    edited = path.read_text(encoding="utf-8") + "# Nice=5\n"
    path.write_text(edited, encoding="utf-8")
    monkeypatch.setenv("SIDELIGHT_BIN", "/opt/sidelight/bin/sidelight")
    replaced = service.install_service(platform="linux")
    backup = replaced[0].backup
    assert backup is not None and backups(path) == [backup] and backup.read_text(encoding="utf-8") == edited
    assert f"(backup: {backup})" in replaced[0].message


def test_systemd_honours_xdg_config_home(
    home: Path, managers: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    results = service.install_service(platform="linux")
    assert results[0].path == tmp_path / "xdg" / "systemd" / "user" / service.SYSTEMD_UNIT
    assert results[0].path.is_file() and not (home / UNIT).exists()


def test_systemd_unreachable_writes_the_file_and_says_the_command(
    home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_FAIL", "daemon-reload")
    results = service.install_service(platform="linux")
    assert (home / UNIT).is_file()
    assert calls(managers) == ["systemctl --user daemon-reload"]  # nothing enabled behind its back
    last = results[-1].message
    assert "Failed to connect to bus" in last
    assert last.endswith(
        f"run: systemctl --user daemon-reload && systemctl --user enable --now {service.SYSTEMD_UNIT}"
    )


def test_no_service_manager_on_path(home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(home))  # no systemctl, no launchctl
    linux = service.install_service(platform="linux")
    assert (home / UNIT).is_file()
    assert "systemctl is not on PATH" in linux[-1].message
    assert linux[-1].message.endswith(f"systemctl --user enable --now {service.SYSTEMD_UNIT}")
    mac = service.install_service(platform="darwin")
    assert (home / PLIST).is_file()
    assert mac[-1].message == (
        f"launchctl is not on PATH; to start the agent, run: launchctl bootstrap gui/{os.getuid()} "
        f"{home / PLIST}"
    )
    assert calls(managers) == []
    # Uninstalling without a manager still removes the file and the link `enable` had made.
    wants = home / UNIT.parent / "default.target.wants"
    wants.mkdir()
    (wants / service.SYSTEMD_UNIT).symlink_to(home / UNIT)
    removed = service.uninstall_service(platform="linux")
    assert not (home / UNIT).exists() and not (wants / service.SYSTEMD_UNIT).is_symlink()
    assert f"removed {home / UNIT}" in messages(removed)


def test_systemd_enable_that_fails_is_an_error(
    home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_FAIL", "enable")
    with pytest.raises(install.InstallError, match=r"enable --now sidelight-watch\.service failed: Failed"):
        service.install_service(platform="linux")


def test_systemd_uninstall_stops_disables_and_removes(home: Path, managers: Path) -> None:
    service.install_service(platform="linux")
    managers.unlink()
    results = service.uninstall_service(platform="linux")
    assert not (home / UNIT).exists()
    assert calls(managers) == [
        f"systemctl --user disable --now {service.SYSTEMD_UNIT}",
        "systemctl --user daemon-reload",
    ]
    assert [r.changed for r in results] == [True, True]
    again = service.uninstall_service(platform="linux")
    assert [r.changed for r in again] == [False] and again[0].message == f"not installed: {home / UNIT}"


def test_a_service_file_sidelight_did_not_write_is_left_alone(home: Path, managers: Path) -> None:
    path = home / UNIT
    path.parent.mkdir(parents=True)
    path.write_text("[Service]\nExecStart=/usr/bin/mine\n", encoding="utf-8")
    with pytest.raises(install.InstallError, match="not written by sidelight; not replacing it"):
        service.install_service(platform="linux")
    with pytest.raises(install.InstallError, match="not written by sidelight; not removing it"):
        service.uninstall_service(platform="linux")
    assert path.read_text(encoding="utf-8") == "[Service]\nExecStart=/usr/bin/mine\n"
    assert calls(managers) == []


def test_other_platforms_are_refused(home: Path) -> None:
    with pytest.raises(
        install.InstallError, match="systemd \\(Linux\\) and launchd \\(macOS\\), not 'win32'"
    ):
        service.install_service(platform="win32")


# ---------------------------------------------------------------------------------------------------
# launchd (macOS)


def test_launchd_agent_runs_watch_keeps_it_alive_and_is_bootstrapped(
    home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDELIGHT_STATE_DIR", "/srv/state & <more>")
    results = service.install_service(platform="darwin")
    path = home / PLIST
    agent = plistlib.loads(path.read_bytes())
    assert agent["Label"] == service.LAUNCHD_LABEL
    assert agent["ProgramArguments"] == ["/opt/side light/bin/sidelight", "watch"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}  # restarted when it fails, not when stopped
    assert agent["EnvironmentVariables"] == {"SIDELIGHT_STATE_DIR": "/srv/state & <more>"}
    assert agent["StandardErrorPath"] == str(home / "Library" / "Logs" / "sidelight-watch.log")
    domain = f"gui/{os.getuid()}"
    assert calls(managers) == [
        f"launchctl enable {domain}/{service.LAUNCHD_LABEL}",
        f"launchctl bootstrap {domain} {path}",
    ]
    assert results[-1].message == f"loaded and started: launchctl bootstrap {domain} {shlex.quote(str(path))}"
    assert "SIDELIGHT_STATE_DIR=/srv/state & <more> (as set now)" in messages(results)


def test_launchd_install_twice_changes_nothing_and_a_replaced_agent_is_reloaded(
    home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.install_service(platform="darwin")
    path = home / PLIST
    first = path.read_bytes()
    managers.unlink()
    again = service.install_service(platform="darwin")
    target = f"gui/{os.getuid()}/{service.LAUNCHD_LABEL}"
    assert not again[0].changed and path.read_bytes() == first and backups(path) == []
    assert (
        calls(managers) == [f"launchctl print {target}"] and again[-1].message == f"already loaded: {target}"
    )
    monkeypatch.setenv("SIDELIGHT_BIN", "/usr/local/bin/sidelight")
    managers.unlink()
    moved = service.install_service(platform="darwin")
    assert moved[0].changed and moved[0].backup is None  # sidelight's own file, as it wrote it
    assert calls(managers)[:2] == [f"launchctl bootout {target}", f"launchctl enable {target}"]
    assert calls(managers)[2].startswith("launchctl bootstrap ")


def test_launchd_falls_back_to_load_w(home: Path, managers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_FAIL", "bootstrap")
    results = service.install_service(platform="darwin")
    path = home / PLIST
    assert calls(managers)[-1] == f"launchctl load -w {path}"
    assert results[-1].message == f"loaded and started: launchctl load -w {shlex.quote(str(path))}"


def test_launchd_uninstall_boots_out_and_removes(home: Path, managers: Path) -> None:
    service.install_service(platform="darwin")
    managers.unlink()
    results = service.uninstall_service(platform="darwin")
    target = f"gui/{os.getuid()}/{service.LAUNCHD_LABEL}"
    assert calls(managers) == [f"launchctl bootout {target}"]
    assert not (home / PLIST).exists()
    assert messages(results) == (
        f"stopped and unloaded: launchctl bootout {target}\n"
        f"removed {home / PLIST}, and the folder {home / 'Library'} that install had made"
    )
    assert tree(home) == {}


# ---------------------------------------------------------------------------------------------------
# The command line


def test_cli_install_and_uninstall_service(home: Path, managers: Path, tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "FAKE_LOG": str(managers),
        "SIDELIGHT_BIN": "/opt/sidelight/bin/sidelight",
        "SIDELIGHT_STATE_DIR": str(tmp_path / "state"),
    }
    if not sys.platform.startswith("linux"):
        pytest.skip("the command line installs for this machine's platform")
    done = cli(home, "install", "service", env=env)
    assert done.returncode == 0, done.stderr
    unit = home / UNIT
    assert done.stdout.splitlines() == [
        f"installed the systemd user unit {unit}",
        "it runs: /opt/sidelight/bin/sidelight watch, "
        f"with SIDELIGHT_STATE_DIR={tmp_path / 'state'} (as set now)",
        f"enabled and started: systemctl --user enable --now {service.SYSTEMD_UNIT} "
        f"(logs: journalctl --user -u {service.SYSTEMD_UNIT})",
        "next: 'sidelight status' shows the watcher running",
    ]
    again = cli(home, "install", "service", env=env)
    assert again.returncode == 0 and again.stdout.splitlines()[0] == f"already installed: {unit}"
    gone = cli(home, "uninstall", "service", env=env)
    assert gone.returncode == 0, gone.stderr
    assert gone.stdout.splitlines()[-2:] == [
        f"removed {unit}, and the folder {home / '.config'} that install had made",
        f"sidelight's state stays in {tmp_path / 'state'} (--purge removes it)",
    ]
    assert not unit.exists()
