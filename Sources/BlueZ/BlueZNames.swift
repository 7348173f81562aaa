/// BlueZ's D-Bus names, in one place.
package enum BlueZName {
    package static let service = "org.bluez"
    package static let adapter = "org.bluez.Adapter1"
    package static let device = "org.bluez.Device1"
    package static let gattService = "org.bluez.GattService1"
    package static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    package static let gattDescriptor = "org.bluez.GattDescriptor1"
    package static let gattManager = "org.bluez.GattManager1"
    package static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    package static let advertisement = "org.bluez.LEAdvertisement1"
    package static let objectManager = "org.freedesktop.DBus.ObjectManager"
    package static let properties = "org.freedesktop.DBus.Properties"

    /// Error names BlueZ replies with (doc/org.bluez.*.rst, src/error.c).
    package enum Error {
        package static let failed = "org.bluez.Error.Failed"
        package static let inProgress = "org.bluez.Error.InProgress"
        package static let notReady = "org.bluez.Error.NotReady"
        package static let notPermitted = "org.bluez.Error.NotPermitted"
        package static let notSupported = "org.bluez.Error.NotSupported"
        package static let notConnected = "org.bluez.Error.NotConnected"
        package static let alreadyExists = "org.bluez.Error.AlreadyExists"
        package static let doesNotExist = "org.bluez.Error.DoesNotExist"
        package static let invalidArguments = "org.bluez.Error.InvalidArguments"
    }
}
