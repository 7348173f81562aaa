"""The README's first command, `scripts/demo`, as a newcomer runs it: it must bridge the simulated devices to MQTT
(the live view shows values, the thermometer decoded and a lock command's result) and stop everything cleanly on Ctrl-C."""

import os
import pathlib
import queue
import signal
import subprocess
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def read_lines(stream, lines):
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def describe_stuck_demo(demo, errors):
    """What a demo that did not stop on Ctrl-C was still doing: its processes (its own session and the daemons it
    started in sessions of their own, found by its work directory), what it printed, and the end of gattway's log."""
    printed = []
    while True:
        try:
            line = errors.get_nowait()
        except queue.Empty:
            break
        if line is None:
            break
        printed.append(line)
    running = subprocess.run(["pgrep", "-a", "-s", str(demo.pid)], capture_output=True, text=True).stdout
    logs = [line.split("gattway log: ", 1)[1] for line in printed if "gattway log: " in line]
    log_tail = ""
    if logs:
        work = logs[0].rsplit("/", 1)[0]
        running += subprocess.run(["pgrep", "-a", "-f", work], capture_output=True, text=True).stdout
        try:
            log_tail = "\n".join(pathlib.Path(logs[0]).read_text(errors="replace").splitlines()[-30:])
        except OSError as error:
            log_tail = f"(unreadable: {error})"
    return (f"still running:\n{running}\nthe demo printed:\n" + "\n".join(printed[-20:])
            + f"\ngattway's log ends:\n{log_tail}")


def test_demo_bridges_the_devices_and_stops_on_ctrl_c():
    # Simulators of this checkout's demo scenario already running (another suite's) are not the demo's doing.
    earlier = set(subprocess.run(["pgrep", "-f", f"{ROOT}/Tests/BlueZSimulator/scenarios/demo.yaml"],
                                 capture_output=True, text=True).stdout.split())
    # A terminal's shell leaves Ctrl-C at its default, but a runner started in the background without job control
    # ignores SIGINT, and bash cannot trap a signal ignored on entry: the demo gets the terminal's disposition.
    demo = subprocess.Popen(
        [str(ROOT / "scripts" / "demo")], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines, errors = queue.Queue(), queue.Queue()
    threading.Thread(target=read_lines, args=(demo.stdout, lines), daemon=True).start()
    threading.Thread(target=read_lines, args=(demo.stderr, errors), daemon=True).start()
    wanted = {
        "bridge online": lambda l: l == "gattway/bridge/state online",
        "a heart rate": lambda l: l.startswith('gattway/chest-strap/heart_rate {"bpm":'),
        "a thermometer advert": lambda l: l.startswith("gattway/thermometer/advert {"),
        # The BTHome thermometer decoded: its battery and one of the temperatures the simulator sends.
        "the thermometer decoded": lambda l: l.startswith('gattway/thermometer/state {"battery":93,"temperature":2')
        and l.endswith(',"format":"bthome"}'),
        "the lock's command result": lambda l: l == 'gattway/lock/control/set/result {"ok":true,"transaction":"demo"}',
    }
    seen, shown = set(), []
    deadline = time.monotonic() + 120  # the first lock command goes out 15 s after the start (plus a build check)
    try:
        while len(seen) < len(wanted) and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            shown.append(line)
            seen |= {name for name, matches in wanted.items() if matches(line)}
        assert seen == set(wanted), f"missing {set(wanted) - seen}; the live view showed: {shown[-20:]}"
    finally:
        # Ctrl-C reaches the whole foreground process group.
        os.killpg(demo.pid, signal.SIGINT)
        try:
            demo.wait(timeout=30)
        except subprocess.TimeoutExpired:
            stuck = describe_stuck_demo(demo, errors)
            os.killpg(demo.pid, signal.SIGKILL)
            raise AssertionError(f"the demo did not stop within 30 s of Ctrl-C\n{stuck}") from None
    stderr = []
    while (line := errors.get(timeout=5)) is not None:
        stderr.append(line)
    assert "demo stopped" in stderr, "\n".join(stderr[-20:])
    # gattway was stopped first, so the live view saw it say goodbye.
    while (line := lines.get(timeout=5)) is not None:
        shown.append(line)
    assert "gattway/bridge/state offline" in shown, f"the live view ended with: {shown[-10:]}"
    # Nothing the demo started is left behind: the daemons run in sessions of their own, so look for the demo's
    # work directory and scenario in every command line (children finishing their shutdown get a few seconds).
    work = next(line.split("gattway log: ", 1)[1].rsplit("/", 1)[0] for line in stderr if "gattway log: " in line)
    # Only this checkout's scenario path: other checkouts on the machine may run simulators of their own.
    pattern = f"{work}|{ROOT}/Tests/BlueZSimulator/scenarios/demo.yaml"
    leftovers = []
    for _ in range(50):
        leftovers = [line for line in subprocess.run(["pgrep", "-a", "-f", pattern], capture_output=True,
                                                     text=True).stdout.splitlines() if line.split()[0] not in earlier]
        leftovers += subprocess.run(["pgrep", "-a", "-s", str(demo.pid)], capture_output=True, text=True).stdout.splitlines()
        if not leftovers:
            break
        time.sleep(0.1)
    assert leftovers == [], f"processes the demo left behind: {leftovers}"
