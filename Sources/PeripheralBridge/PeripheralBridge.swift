// PeripheralBridge module.
