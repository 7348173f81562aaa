// MQTTCore module.
