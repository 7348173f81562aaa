"""Command line: starts a private system-bus-like dbus-daemon (or joins one) and serves org.bluez on it."""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile

from .adapter import parse_adapter_names
from .core import Simulator

log = logging.getLogger("bluezsim")

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow eavesdrop="true"/>
  </policy>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
  <limit name="max_message_size">33554432</limit>
  <limit name="max_replies_per_connection">50000</limit>
</busconfig>
"""

DAEMON_START_TIMEOUT = 10.0
SHUTDOWN_TIMEOUT = 5.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bluez-sim", description="Gattway's simulated bluetoothd")
    p.add_argument("--scenario", help="scenario YAML file (see scenario.schema.json)")
    p.add_argument("--bluez-version", default="5.66", help="BlueZ version to mimic (default 5.66)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--with-bus", action="store_true", default=True,
                       help="start a private dbus-daemon (default)")
    group.add_argument("--address", help="use an existing bus at this D-Bus address instead")
    p.add_argument("--gatt-cache", choices=["always", "yes", "no"], default="always",
                   help="main.conf [GATT] Cache mode")
    p.add_argument("--adapters", help="comma-separated adapters, e.g. hci0,hci1,hci2 (default: the scenario's "
                   "`adapters`, else hci0,hci1)")
    p.add_argument("--log-level", default=os.environ.get("BLUEZ_SIM_LOG", "WARNING"))
    return p.parse_args(argv)


def _die_with_parent() -> None:
    """In the child: the private bus must not outlive the simulator, even if it is SIGKILLed."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def start_dbus_daemon(workdir: str) -> tuple[subprocess.Popen, str]:
    """Starts dbus-daemon with a system-bus-like config on a private socket; returns (process, address)."""
    exe = shutil.which("dbus-daemon")
    if exe is None:
        raise SystemExit("bluez-sim: dbus-daemon not found in PATH (install the 'dbus' package)")
    socket_path = os.path.join(workdir, "system_bus_socket")
    config = os.path.join(workdir, "system.conf")
    with open(config, "w") as f:
        f.write(BUS_CONFIG.format(socket=socket_path))
    proc = subprocess.Popen([exe, "--config-file", config, "--nofork", "--nopidfile", "--print-address=1"],
                            stdout=subprocess.PIPE, stderr=sys.stderr, text=True, preexec_fn=_die_with_parent)
    assert proc.stdout is not None
    # dbus-daemon prints its address once it listens; guard the read against a daemon that dies instead.
    address = ""
    import select

    ready, _, _ = select.select([proc.stdout], [], [], DAEMON_START_TIMEOUT)
    if ready:
        address = proc.stdout.readline().strip()
    if not address:
        proc.kill()
        raise SystemExit(f"bluez-sim: dbus-daemon did not report its address within {DAEMON_START_TIMEOUT}s")
    return proc, address


async def run(args: argparse.Namespace) -> int:
    from . import gatt_server
    from .control import Control
    from .scenario import ScenarioError, load_scenario

    # A missing or invalid scenario is refused before anything starts.
    scenario = load_scenario(args.scenario) if args.scenario else None
    adapters = args.adapters.split(",") if args.adapters else scenario.adapter_names() if scenario else None
    if adapters is not None:
        try:
            parse_adapter_names(adapters)
        except ValueError as e:
            raise ScenarioError(f"adapters: {e}") from None
    workdir = tempfile.mkdtemp(prefix="bluez-sim-")
    daemon = None
    try:
        if args.address:
            address = args.address
        else:
            daemon, address = start_dbus_daemon(workdir)
        sim = Simulator(address, args.bluez_version, adapters)
        sim.gatt_cache = args.gatt_cache
        sim.add_extension(gatt_server.extension())
        await sim.start()
        Control(sim).install()
        if scenario is not None:
            try:
                scenario.apply(sim)
            except ScenarioError:
                await asyncio.wait_for(sim.stop(), SHUTDOWN_TIMEOUT)
                raise
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        sys.stdout.write(f"DBUS_SYSTEM_BUS_ADDRESS={address}\n")
        sys.stdout.flush()
        await stop.wait()
        try:
            await asyncio.wait_for(sim.stop(), SHUTDOWN_TIMEOUT)
        except asyncio.TimeoutError:
            log.error("shutdown did not finish within %ss; exiting anyway", SHUTDOWN_TIMEOUT)
        return 0
    finally:
        if daemon is not None:
            daemon.terminate()
            try:
                daemon.wait(timeout=5)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # A parent may hand us SIGTERM/SIGINT blocked (Foundation's Process does): unblock them, or the stop request of
    # whoever started the simulator would never reach its handler.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="bluez-sim %(levelname)s %(name)s: %(message)s")
    from .scenario import ScenarioError

    try:
        code = asyncio.run(run(args))
    except ScenarioError as e:
        # One line for the person who typed the command, no traceback.
        sys.stderr.write(f"bluez-sim: {' '.join(str(e).split())}\n")
        code = 2
    sys.stdout.flush()
    # Leftover background tasks were cancelled by asyncio.run; skip interpreter teardown of extension
    # threads so a stuck client connection can never keep the process alive.
    os._exit(code)
