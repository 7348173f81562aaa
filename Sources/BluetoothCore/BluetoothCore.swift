// BluetoothCore module.
