"""Home Assistant MQTT discovery against a real Home Assistant (2024.3.3, in Tests/HomeAssistant/.venv): the demo
world (simulated strap, lock and BTHome thermometer), a real mosquitto and the built gattway binary. Home Assistant
must show the entities with their classes, units and numeric states, follow the simulator's values, turn a
text.set_value into a GATT write on the lock, and mark entities unavailable when the strap leaves the air or
Gattway stops. Every daemon is required: a missing one fails the test."""

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
import uuid

import paho.mqtt.client as mqtt
import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = pathlib.Path(__file__).resolve().parent / ".venv"
STRAP, LOCK, THERMOMETER = "C4:7C:8D:6A:3E:11", "D0:0D:10:C4:00:01", "A4:C1:38:00:00:01"
SIM = ("org.gattway.Simulator1", "/org/gattway/simulator", "org.gattway.Simulator1")
# Home Assistant's start on a shared 2-core machine takes 20-60 s; the deadline is far above.
START_DEADLINE = 240
STEP_DEADLINE = 90


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, condition, deadline=STEP_DEADLINE, interval=0.5):
    """Polls `condition` until it returns something truthy; fails with `what` and the last value at the deadline."""
    end = time.monotonic() + deadline
    last = None
    while time.monotonic() < end:
        last = condition()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def require(tool):
    path = shutil.which(tool)
    assert path, f"{tool} is not installed: the Home Assistant test needs it (scripts/setup installs it)"
    return path


class World:
    """The simulator, mosquitto, Home Assistant and gattway, each a child process of the test."""

    def __init__(self, work: pathlib.Path):
        self.work = work
        self.children = []
        self.gattway = None

    def spawn(self, name, args, **kwargs):
        log = open(self.work / f"{name}.log", "w")
        child = subprocess.Popen(args, stdout=kwargs.pop("stdout", log), stderr=log, start_new_session=True, **kwargs)
        self.children.append(child)
        return child

    def log(self, name):
        path = self.work / f"{name}.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self):
        for child in reversed(self.children):
            if child.poll() is None:
                child.terminate()
        for child in reversed(self.children):
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    # The simulator's control interface, through busctl (a real D-Bus client).
    def sim(self, member, signature, *args):
        result = subprocess.run(
            [require("busctl"), f"--address={self.bus}", "--json=short", "call", *SIM, member, signature,
             *[str(a) for a in args]], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, f"{member} failed: {result.stderr}"
        return json.loads(result.stdout)["data"] if result.stdout.strip() else None


class HomeAssistant:
    def __init__(self, port, token=None):
        self.base = f"http://127.0.0.1:{port}"
        self.token = token

    def request(self, method, path, body=None, form=False):
        data = None
        headers = {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            if form:
                data = "&".join(f"{k}={urllib.request.quote(str(v))}" for k, v in body.items()).encode()
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            else:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
        with urllib.request.urlopen(
                urllib.request.Request(self.base + path, data=data, headers=headers, method=method), timeout=30) as r:
            text = r.read().decode()
            # /api/template answers with the rendered text, everything else with JSON.
            return json.loads(text) if text and r.headers.get_content_type() == "application/json" else text

    def state(self, entity_id):
        try:
            return self.request("GET", f"/api/states/{entity_id}")
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    def mqtt_entities(self):
        text = self.request("POST", "/api/template", {"template": "{{ integration_entities('mqtt') | join(',') }}"})
        return [e for e in text.split(",") if e]


def home_assistant_config(config_dir: pathlib.Path, http_port: int, broker_port: int):
    (config_dir / ".storage").mkdir(parents=True)
    (config_dir / "configuration.yaml").write_text(
        "homeassistant:\n  name: Gattway test\n  unit_system: metric\n  time_zone: UTC\n"
        "  latitude: 0\n  longitude: 0\n  elevation: 0\n  country: DE\n"
        f"http:\n  server_host: 127.0.0.1\n  server_port: {http_port}\n"
        "api:\nonboarding:\nlogger:\n  default: warning\n")
    # Since 2023.4 the broker is set up through a config entry only (no YAML broker keys).
    entry = {
        "entry_id": uuid.uuid4().hex, "version": 1, "minor_version": 1, "domain": "mqtt", "title": "mosquitto",
        "data": {"broker": "127.0.0.1", "port": broker_port, "discovery": True}, "options": {},
        "pref_disable_new_entities": False, "pref_disable_polling": False, "source": "user", "unique_id": None,
        "disabled_by": None,
    }
    (config_dir / ".storage" / "core.config_entries").write_text(json.dumps(
        {"version": 1, "minor_version": 1, "key": "core.config_entries", "data": {"entries": [entry]}}))


class Broker:
    """A paho client that keeps the last message of every topic it hears."""

    def __init__(self, port):
        self.last = {}
        self.lock = threading.Lock()
        self.client = mqtt.Client(client_id=f"ha-test-{uuid.uuid4().hex[:8]}")
        self.client.on_message = self.on_message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe("#")
        self.client.loop_start()

    def on_message(self, client, userdata, message):
        with self.lock:
            self.last[message.topic] = message.payload.decode(errors="replace")

    def get(self, topic):
        with self.lock:
            return self.last.get(topic)

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture
def world(tmp_path):
    require("mosquitto")
    require("busctl")
    hass = VENV / "bin" / "hass"
    assert hass.exists(), f"Home Assistant is not installed in {VENV}: run scripts/setup"
    gattway = ROOT / ".build" / "debug" / "gattway"
    assert gattway.exists(), "the gattway binary is not built: run swift build"
    w = World(tmp_path)
    try:
        sim = w.spawn("sim", [str(ROOT / "Tests/BlueZSimulator/bluez-sim"), "--scenario",
                              str(ROOT / "Tests/BlueZSimulator/scenarios/demo.yaml")], stdout=subprocess.PIPE, text=True)
        line = sim.stdout.readline().strip()
        assert line.startswith("DBUS_SYSTEM_BUS_ADDRESS="), f"the simulator did not start: {line!r} {w.log('sim')}"
        w.bus = line.split("=", 1)[1]

        w.broker_port = free_port()
        (tmp_path / "mosquitto.conf").write_text(
            f"listener {w.broker_port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
        w.spawn("mosquitto", [require("mosquitto"), "-c", str(tmp_path / "mosquitto.conf")])
        w.mqtt = wait_for("mosquitto to listen", lambda: _try_broker(w.broker_port), deadline=30)

        # Home Assistant, headless, in its own config directory; its birth message says it is ready.
        http_port = free_port()
        home_assistant_config(tmp_path / "ha", http_port, w.broker_port)
        w.spawn("ha", [str(hass), "--config", str(tmp_path / "ha"), "--skip-pip", "--log-no-color"])
        wait_for("Home Assistant's MQTT birth message (homeassistant/status online)",
                 lambda: w.mqtt.get("homeassistant/status") == "online" or _dead(w, "ha"), deadline=START_DEADLINE)
        w.ha = onboard(http_port)

        config = (ROOT / "schemas/examples/valid/demo.yaml").read_text().replace(
            "mqtt://127.0.0.1:1883", f"mqtt://127.0.0.1:{w.broker_port}")
        config = config.replace("scan: { duplicates: true }",
                                "scan: { duplicates: true }\n  reconnect: { initial: 0.5, max: 2 }")
        (tmp_path / "gattway.yaml").write_text(config + f"\nstate_dir: {tmp_path / 'state'}\n")
        w.gattway = w.spawn("gattway", [str(gattway), "run", "--config", str(tmp_path / "gattway.yaml")],
                            env={**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": w.bus})
        yield w
    except BaseException:
        for name in ("gattway", "ha", "sim"):
            print(f"--- {name} log ---\n{w.log(name)}")
        raise
    finally:
        if getattr(w, "mqtt", None):
            w.mqtt.close()
        w.stop()


def _try_broker(port):
    try:
        return Broker(port)
    except OSError:
        return None


def _dead(world, name):
    if "Activating recovery mode" in world.log(name):
        raise AssertionError(f"Home Assistant started in recovery mode (a requirement is missing): {world.log(name)}")
    for c in world.children:
        if c.poll() is not None:
            raise AssertionError(f"a daemon exited early ({c.args[0]}): {world.log(name)}")
    return False


def onboard(port):
    """Creates the owner through Home Assistant's onboarding API and signs in with the authorization code it gives."""
    ha = HomeAssistant(port)
    client_id = f"http://127.0.0.1:{port}/"
    created = ha.request("POST", "/api/onboarding/users", {
        "client_id": client_id, "name": "Owner", "username": "owner", "password": "gattway-test", "language": "en"})
    token = ha.request("POST", "/auth/token", {
        "grant_type": "authorization_code", "code": created["auth_code"], "client_id": client_id}, form=True)
    return HomeAssistant(port, token["access_token"])


def numeric(state):
    try:
        return float(state["state"])
    except (TypeError, ValueError, KeyError):
        return None


def test_home_assistant_sees_controls_and_follows_the_demo_devices(world):
    ha = world.ha

    # Entities appear with device classes, units and numeric states.
    heart = wait_for("the heart rate sensor with a numeric state",
                     lambda: (s := ha.state("sensor.chest_strap_heart_rate")) and numeric(s) is not None and s)
    assert heart["attributes"]["unit_of_measurement"] == "bpm"
    assert heart["attributes"]["state_class"] == "measurement"
    temperature = wait_for("the thermometer's temperature with a numeric state",
                           lambda: (s := ha.state("sensor.thermometer_temperature")) and numeric(s) is not None and s)
    assert temperature["attributes"]["device_class"] == "temperature"
    assert temperature["attributes"]["unit_of_measurement"] == "°C"
    battery = wait_for("the thermometer's battery", lambda: (s := ha.state("sensor.thermometer_battery")) and
                       numeric(s) is not None and s)
    assert battery["attributes"]["device_class"] == "battery" and numeric(battery) == 93
    rssi = wait_for("the strap's RSSI", lambda: (s := ha.state("sensor.chest_strap_rssi")) and numeric(s) is not None and s)
    assert rssi["attributes"]["device_class"] == "signal_strength" and rssi["attributes"]["unit_of_measurement"] == "dBm"
    assert wait_for("the strap's connectivity on",
                    lambda: (s := ha.state("binary_sensor.chest_strap_connectivity")) and s["state"] == "on")
    assert wait_for("the gateway's version", lambda: (s := ha.state("sensor.gattway_version")) and
                    s["state"] not in ("unknown", "unavailable") and s)
    wait_for("three tracked devices", lambda: numeric(ha.state("sensor.gattway_tracked_devices") or {}) == 3)
    wait_for("two connected devices", lambda: numeric(ha.state("sensor.gattway_connected_devices") or {}) == 2)
    assert wait_for("the lock's control as a text entity", lambda: ha.state("text.lock_control"))

    # The heart rate follows the simulator: its own pattern stops, then two known values are notified.
    world.sim("StartNotifying", "ssdus", STRAP, "2a37", 0, 0, "heart-rate")
    def notified(bpm):
        # Sent again on every poll: a notification that raced the pattern's end is not lost.
        world.sim("Notify", "ssay", STRAP, "2a37", 2, 0, bpm)
        return numeric(ha.state("sensor.chest_strap_heart_rate") or {}) == bpm
    for bpm in (151, 97):
        wait_for(f"the strap to deliver {bpm} bpm", lambda: notified(bpm), interval=1)

    # The BTHome temperature follows the advertisement (new packet ids, so none is taken for a repeat).
    for packet, raw, celsius in ((0x17, 2345, 23.45), (0x18, 1890, 18.9)):
        data = f"4000{packet:02x}015d02{raw & 0xff:02x}{raw >> 8:02x}"
        world.sim("UpdateAdvert", "ss", THERMOMETER, json.dumps({"service_data": {"fcd2": data}}))
        wait_for(f"the temperature {celsius}", lambda: numeric(ha.state("sensor.thermometer_temperature") or {}) == celsius)

    # A text.set_value from Home Assistant becomes the GATT write on the lock.
    ha.request("POST", "/api/services/text/set_value", {"entity_id": "text.lock_control", "value": "unlock"})
    writes = wait_for("the lock to receive unlock", lambda: [
        w for w in world.sim("GetWrites", "ss", LOCK, "0000fff1-0000-1000-8000-00805f9b34fb")[0]
        if bytes(w[0]) == b"unlock"])
    assert writes[0][2] == "request", f"a write with response was expected: {writes}"
    # The simulated lock reflects the accepted command into its state characteristic, which it notifies.
    wait_for("the lock's state sensor to follow", lambda: (ha.state("sensor.lock_state") or {}).get("state") == "unlock")

    # The strap leaves the air: its entities become unavailable; it comes back and so do they.
    strap_entities = ["sensor.chest_strap_heart_rate", "sensor.chest_strap_rssi"]
    world.sim("RemovePeripheral", "s", STRAP)
    wait_for("the strap's entities to become unavailable",
             lambda: all((ha.state(e) or {}).get("state") == "unavailable" for e in strap_entities))
    assert (ha.state("binary_sensor.chest_strap_connectivity") or {}).get("state") == "off"
    assert numeric(ha.state("sensor.thermometer_temperature")) is not None, "only the strap's entities go"
    scenario = yaml.safe_load((ROOT / "Tests/BlueZSimulator/scenarios/demo.yaml").read_text())
    strap = next(p for p in scenario["peripherals"] if p["address"] == STRAP)
    world.sim("AddPeripheral", "s", json.dumps(strap))
    wait_for("the strap's heart rate to come back",
             lambda: numeric(ha.state("sensor.chest_strap_heart_rate") or {}) is not None, deadline=120)
    assert (ha.state("binary_sensor.chest_strap_connectivity") or {}).get("state") == "on"

    # Gattway stops: every entity it announced becomes unavailable, and the gateway shows it is disconnected.
    entities = [e for e in ha.mqtt_entities() if e != "binary_sensor.gattway_connectivity"]
    assert len(entities) >= 12, entities
    world.gattway.send_signal(signal.SIGTERM)
    assert world.gattway.wait(timeout=60) == 0
    still_available = lambda: [e for e in entities if (ha.state(e) or {}).get("state") != "unavailable"]
    remaining = []

    def all_unavailable():
        remaining[:] = still_available()
        return not remaining
    try:
        wait_for("every entity to become unavailable", all_unavailable)
    except AssertionError as error:
        raise AssertionError(f"{error}; still available: {remaining}") from None
    assert ha.state("binary_sensor.gattway_connectivity")["state"] == "off"
