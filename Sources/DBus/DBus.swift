// DBus module.
