"""The README's install steps ("Running it for real"), run as written but inside a scratch root: the service user
must be able to read its configuration and password file (systemd's `ExecStartPre=… check-config` runs as that
user), and nobody else may.

What differs from a real install, and why:
- every absolute path is moved under the scratch root, so the machine's /etc and /usr stay untouched;
- the binary is the one `scripts/test` has just built (`.build/debug`), not a second, release build;
- `systemctl` is not run (no systemd here); the unit file is installed like the other files;
- the `gattway` user is created only if it does not exist yet (`useradd` refuses a second time).
The steps need root; the test fails (never skips) without it, as CI runs as root.
"""

import os
import pathlib
import pwd
import re
import shutil
import subprocess
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
USER = "gattway"


def readme_blocks_after(heading):
    text = (ROOT / "README.md").read_text()
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def install_commands():
    """Every command of the section's shell blocks, comments dropped, lines joined where they continue."""
    commands = []
    for block in readme_blocks_after("## Running it for real"):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def in_scratch(command, scratch):
    command = command.replace(".build/release/", ".build/debug/")
    command = re.sub(r"(?<![\w./])/(etc|usr)/", lambda m: f"{scratch}/{m.group(1)}/", command)
    command = command.replace("sudo ", "")
    return command


@pytest.fixture
def scratch():
    assert os.geteuid() == 0, "the install steps need root (CI runs as root)"
    # The service user must be able to walk down to the scratch root, which a 0700 temporary folder forbids.
    path = pathlib.Path(tempfile.mkdtemp(prefix="gattway-install-", dir=ROOT / ".build"))
    path.chmod(0o755)
    # Folders a Debian 12 machine with dbus and systemd already has.
    for folder in ("etc/dbus-1/system.d", "etc/systemd/system", "usr/local/bin"):
        (path / folder).mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_as(user, *argv):
    return subprocess.run(["runuser", "-u", user, "--", *argv], capture_output=True, text=True, timeout=60)


def test_readme_install_steps_give_the_service_user_and_only_it_its_files(scratch):
    binary = ROOT / ".build" / "debug" / "gattway"
    assert binary.exists(), "scripts/test builds the debug binary before the Python suites"
    commands = install_commands()
    assert any("useradd" in c for c in commands) and any("config.yaml" in c for c in commands)
    assert any("mqtt.pw" in c for c in commands), "the README shows how to install a password file"
    ran = []
    for command in commands:
        if command.startswith(("swift build", "sudo systemctl", "systemctl")):
            continue
        if "useradd" in command:
            try:
                pwd.getpwnam(USER)
                continue
            except KeyError:
                pass
        shell = in_scratch(command, scratch)
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", shell], cwd=ROOT, capture_output=True,
                                text=True, timeout=60)
        assert result.returncode == 0, f"{shell!r} failed: {result.stderr}"
        ran.append(shell)
    assert any("config.yaml" in c for c in ran)

    config = scratch / "etc" / "gattway" / "config.yaml"
    secret = scratch / "etc" / "gattway" / "mqtt.pw"
    for path in (config, secret):
        assert path.stat().st_mode & 0o007 == 0, f"{path} is readable by others"
    # The configuration names the password file, as an operator would after the README's last step.
    text = config.read_text().replace("# password_file: /etc/gattway/mqtt.pw", f"password_file: {secret}")
    assert f"password_file: {secret}" in text, "deploy/config.example.yaml shows the password_file line"
    config.write_text(text)

    installed = scratch / "usr" / "local" / "bin" / "gattway"
    check = run_as(USER, str(installed), "check-config", str(config))
    assert check.returncode == 0, check.stdout + check.stderr
    assert run_as(USER, "cat", str(secret)).stdout == "the-broker-password"
    for path in (config, secret):
        refused = run_as("nobody", "cat", str(path))
        assert refused.returncode != 0 and "Permission denied" in refused.stderr
