"""Gattway's BlueZ simulator: a bluetoothd stand-in serving org.bluez on a private D-Bus."""
