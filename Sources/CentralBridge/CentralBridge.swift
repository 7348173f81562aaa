// CentralBridge module.
