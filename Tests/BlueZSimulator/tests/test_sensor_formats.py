"""The simulator's sensor encoders against the formats' published example packets (the same facts Gattway's
decoder tests use), and the packet counter of a sensor peripheral."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)  # the simulator's package, wherever pytest is started from

from bluezsim.scenario import load_scenario  # noqa: E402
from bluezsim.sensor_formats import SensorAdvertiser, SensorError, encode_bthome, encode_mibeacon  # noqa: E402
from bluezsim.uuids import normalize_uuid  # noqa: E402


def test_bthome_encryption_reproduces_the_published_example():
    # bthome.io's encrypted example: key, address and counter 0x33221100 give this packet for 25.06 °C, 50.55 %.
    patch = encode_bthome("54:48:E6:8F:80:A5", {"temperature": 25.06, "humidity": 50.55}, 0x33221100,
                          bytes.fromhex("231d39c1d7cc1ab1aee224cd096db932"))
    assert patch["service_data"][normalize_uuid("fcd2")].hex() == "41a47266c95f730011223378237214"


def test_mibeacon_encryption_reproduces_the_published_lywsd03mmc_packet():
    # The LYWSD03MMC example (xiaomi-ble): humidity 46.7 %, frame counter 0x50, extended counter 0x000026.
    patch = encode_mibeacon("A4:C1:38:02:83:F4", {"humidity": 46.7}, 0x2650,
                            bytes.fromhex("e9ea895fac7cca6d30532432a516f3a8"))
    assert patch["service_data"][normalize_uuid("fe95")].hex() == "58585b0550f4830238c1a495ef58763c26000097e2abb5"


def test_plain_bthome_carries_the_packet_id_and_objects_in_ascending_order():
    patch = encode_bthome("A4:C1:38:00:00:01", {"temperature": 21.5, "battery": 93}, 5, None)
    assert patch["service_data"][normalize_uuid("fcd2")].hex() == "400005015d026608"


def test_a_sensor_starts_a_new_packet_per_period_and_repeats_it_in_between():
    sensor = SensorAdvertiser("A4:C1:38:00:00:01", {
        "format": "bthome", "period_s": 1, "readings": [{"temperature": 21.5}, {"temperature": 22.0}]})
    first = sensor.advert(100.0)
    assert sensor.advert(100.5) == first
    second = sensor.advert(101.0)
    assert second != first and sensor.packets == 2
    assert second["service_data"][normalize_uuid("fcd2")].hex() == "400002029808"


def test_every_advert_with_a_step_changes_the_value_in_each_packet():
    sensor = SensorAdvertiser("A4:C1:38:00:00:01", {
        "format": "govee_h5075", "every_advert": True, "step": {"temperature": 0.1},
        "readings": [{"temperature": 20.0, "humidity": 50, "battery": 90}]})
    packets = [sensor.advert(0.0)["manufacturer_data"][0xEC88].hex() for _ in range(3)]
    # 200 tenths × 1000 + 500, then 201 and 202 tenths.
    assert packets == ["00030f345a00", "0003131c5a00", "000317045a00"]


def test_a_reading_the_format_cannot_carry_is_refused():
    with pytest.raises(SensorError):
        SensorAdvertiser("A4:C1:38:00:00:01", {"format": "pvvx", "readings": [{"temperature": 20.0}]})
    with pytest.raises(SensorError):
        SensorAdvertiser("A4:C1:38:00:00:01", {"format": "pvvx", "bindkey": "00" * 16, "readings": [
            {"temperature": 20.0, "humidity": 50, "battery": 90, "voltage": 3.0}]})


def test_the_sensor_scenarios_load():
    for name in ("sensor-formats.yaml", "sensor-crowd.yaml"):
        scenario = load_scenario(os.path.join(HERE, "scenarios", name))
        for spec in scenario.peripheral_specs():
            SensorAdvertiser(spec["address"], spec["sensor"])
