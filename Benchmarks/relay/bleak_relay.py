"""What a user writes instead of Gattway: bleak subscribes to one characteristic, paho-mqtt publishes each value
at QoS 0, unchanged. `gattway-bench compare` runs it with the BlueZ simulator's venv (bleak, paho-mqtt).

    bleak_relay.py start|acquire ADAPTER ADDRESS CHAR_UUID HOST PORT TOPIC

`start` uses StartNotify (bleak's default), `acquire` AcquireNotify (bluez={"use_start_notify": False}).
The adapter is named because bleak picks its default at random when there are several (the simulator has two).
Prints "relay: ready" once subscribed; exits on SIGTERM.
"""

import asyncio
import signal
import sys

import paho.mqtt.client as mqtt
from bleak import BleakClient


async def main() -> None:
    mode, adapter, address, uuid, host, port, topic = sys.argv[1:8]
    broker = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bleak-relay")
    broker.connect(host, int(port))
    broker.loop_start()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)

    def relay(_characteristic, value: bytearray) -> None:
        broker.publish(topic, bytes(value), qos=0)

    async with BleakClient(address, timeout=30, bluez={"adapter": adapter}) as client:
        await client.start_notify(uuid, relay, bluez={"use_start_notify": mode == "start"})
        print("relay: ready", flush=True)
        await stop.wait()
    broker.loop_stop()
    broker.disconnect()


if __name__ == "__main__":
    if len(sys.argv) != 8 or sys.argv[1] not in ("start", "acquire"):
        sys.exit("usage: bleak_relay.py start|acquire ADAPTER ADDRESS CHAR_UUID HOST PORT TOPIC")
    asyncio.run(main())
