// Mosquitto module.
