// swift-tools-version: 6.2
import PackageDescription

// Exclusive access to class properties and globals is checked at run time in debug builds, which the whole suite
// runs; release builds check it at compile time only, as the Swift standard library is built: the run-time check
// cost about 1,250 instructions per notification on the hot path (15 checks, each a lookup in a thread-local access
// set). scripts/fuzz builds in release with the run-time check kept (GATTWAY_RUNTIME_EXCLUSIVITY).
let releaseExclusivity =
    Context.environment["GATTWAY_RUNTIME_EXCLUSIVITY"] == nil ? ["-enforce-exclusivity=unchecked"] : []

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
    // Release builds carry the Swift runtime and FoundationEssentials in the binary (see the gattway target).
    // Each function in a section of its own, so that the linker can lay the daemon's code out in Link/gattway.order.
    .unsafeFlags(
        ["-static-stdlib", "-Xfrontend", "-function-sections"] + releaseExclusivity,
        .when(platforms: [.linux], configuration: .release)),
]

let package = Package(
    name: "gattway",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gattway", targets: ["gattway"]),
        .executable(name: "gattway-bench", targets: ["gattway-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The Prometheus endpoint: swift-prometheus renders, a plain NIOHTTP1 handler serves.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    ],
    targets: [
        // C is caged here: only DBus imports CDBus, only Mosquitto imports CMosquitto, only Polling imports CEpoll,
        // only YAML imports CYAML.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),

        // The configuration file's YAML: libyaml parses, a strict and bounded composer and a Decoder sit on top
        // (no Foundation, so the daemon does not link ICU for its configuration).
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .target(name: "YAML", dependencies: ["CYAML"], swiftSettings: swiftSettings),
        .testTarget(name: "YAMLTests", dependencies: ["YAML"], swiftSettings: swiftSettings),

        // What the daemon does with its own address space once it runs: its libraries' dynamic-linking tables
        // dropped from its resident set.
        .target(name: "ProcessMemory", dependencies: ["BridgeCore"], swiftSettings: swiftSettings),
        .testTarget(name: "ProcessMemoryTests", dependencies: ["ProcessMemory"], swiftSettings: swiftSettings),

        // One thread polling sockets, running timers and jobs: the loop the D-Bus connection, the MQTT client and the
        // notification sockets of the hot path share.
        .systemLibrary(name: "CEpoll"),
        .target(
            name: "Polling",
            dependencies: [
                "CEpoll",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "DBus",
            dependencies: ["CDBus", "Polling", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "MQTTCore",
            dependencies: ["Polling"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Mosquitto",
            dependencies: [
                "CMosquitto", "MQTTCore", "Polling",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BluetoothCore",
            dependencies: ["Polling"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BlueZ",
            dependencies: [
                "DBus", "BluetoothCore", "Polling",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BridgeCore",
            dependencies: [
                "MQTTCore", "BluetoothCore", "YAML",
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CentralBridge",
            dependencies: [
                "BridgeCore", "MQTTCore", "BluetoothCore", "Polling",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PeripheralBridge",
            dependencies: [
                "BridgeCore", "MQTTCore", "BluetoothCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // AES-CCM for encrypted advertisements: only AESCCM imports COpenSSL, and BridgeCore's decoders take it
        // as an injected function, so BridgeCore stays free of C.
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "AESCCM", dependencies: ["COpenSSL"], swiftSettings: swiftSettings),
        .testTarget(
            name: "AESCCMTests",
            dependencies: ["AESCCM", "BridgeCore", "BluetoothCore"],
            swiftSettings: swiftSettings
        ),

        .executableTarget(
            name: "gattway",
            dependencies: [
                "BridgeCore", "CentralBridge", "PeripheralBridge", "Mosquitto", "MQTTCore", "BlueZ", "DBus", "AESCCM",
                "BluetoothCore", "ProcessMemory",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            resources: [.embedInCode("Resources/config.schema.json")],
            swiftSettings: swiftSettings,
            // The release daemon carries the Swift runtime and FoundationEssentials itself: linked statically, it
            // maps only the code it uses and resolves their calls at link time, where the shared libraries cost
            // a few MiB of resident pages and a relocation of their data each. It exports no symbols (a resident
            // table of 23,000 otherwise), and lld packs its relative relocations (DT_RELR, glibc 2.36): 13 KiB
            // instead of 1.5 MiB of records read at every start. The functions the daemon runs come first, packed
            // (Link/gattway.order, made by scripts/link-order): spread among those it never runs, their 1.6 MiB
            // kept 10.8 MiB of code resident. Its symbols are bound at start (-z now, full RELRO): nothing reads the
            // libraries' symbol tables later, so the daemon can drop them from memory once it runs (ProcessMemory).
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-Xlinker", "--no-export-dynamic", "-use-ld=lld", "-Xlinker", "-z",
                        "-Xlinker", "pack-relative-relocs", "-Xlinker", "-z", "-Xlinker", "now", "-Xlinker",
                        "--symbol-ordering-file=\(Context.packageDirectory)/Link/gattway.order", "-Xlinker",
                        "--no-warn-symbol-ordering", "-Xlinker", "-T", "-Xlinker",
                        "\(Context.packageDirectory)/Link/private-functions.ld",
                    ], .when(platforms: [.linux], configuration: .release))
            ]
        ),
        // The fleet protocol at scale: the ownership state machine of many gateways over a simulated broker.
        // For the benchmark and the tests only; the gattway product does not link it.
        .target(
            name: "FleetSimulation",
            dependencies: ["BridgeCore", .product(name: "HeapModule", package: "swift-collections")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FleetSimulationTests", dependencies: ["FleetSimulation", "BridgeCore"], swiftSettings: swiftSettings),

        .executableTarget(
            name: "gattway-bench",
            dependencies: [
                "DBus", "Mosquitto", "MQTTCore", "BlueZ", "BridgeCore", "TestWorld", "FleetSimulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings,
            // Its modules are compiled for the static runtime in release (see the gattway target), so it links it too.
            linkerSettings: [.unsafeFlags(["-static-stdlib"], .when(platforms: [.linux], configuration: .release))]
        ),

        // Test support: starts real daemons (dbus-daemon, mosquitto, the BlueZ simulator) for the tests and gattway-bench.
        .systemLibrary(name: "CSpawn", path: "Tests/CSpawn"),
        .target(
            name: "TestWorld",
            dependencies: ["DBus", "CSpawn", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestWorld",
            swiftSettings: swiftSettings
        ),
        // Test support: in-memory stand-ins for the bridges' ports (broker, BLE central) and a manual clock, so the
        // bridges' decisions are tested without any daemon.
        .target(
            name: "BridgeTesting",
            dependencies: [
                "MQTTCore", "BluetoothCore", "BridgeCore", "Polling",
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            path: "Sources/BridgeTesting",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "TestWorld"], swiftSettings: swiftSettings),
        .testTarget(name: "PollingTests", dependencies: ["Polling", "TestWorld"], swiftSettings: swiftSettings),
        .testTarget(name: "TestWorldTests", dependencies: ["TestWorld"], swiftSettings: swiftSettings),
        .testTarget(name: "MQTTCoreTests", dependencies: ["MQTTCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MosquittoTests",
            dependencies: [
                "Mosquitto", "MQTTCore", "Polling", "TestWorld",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "BluetoothCoreTests", dependencies: ["BluetoothCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "BridgeCoreTests",
            dependencies: [
                "BridgeCore", "MQTTCore", "BluetoothCore", .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BlueZTests",
            dependencies: ["BlueZ", "DBus", "BluetoothCore", "Polling", "TestWorld"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CentralBridgeTests",
            dependencies: [
                "CentralBridge", "BridgeTesting", "Polling", "BridgeCore", "MQTTCore", "BluetoothCore", "TestWorld",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PeripheralBridgeTests",
            dependencies: [
                "PeripheralBridge", "BridgeTesting", "BridgeCore", "MQTTCore", "BluetoothCore", "TestWorld",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TestWorld", "DBus", "BridgeCore", "ProcessMemory", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
