// BridgeCore module.
