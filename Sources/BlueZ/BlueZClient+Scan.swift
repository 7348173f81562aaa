import BluetoothCore
import DBus

extension BlueZClient {
    /// Runs LE discovery on `adapter` for `duration` (or until `interrupted` returns) and returns every device
    /// heard meanwhile: those that appeared or whose advert changed, and those BlueZ shows an RSSI for (heard
    /// now, through another client's discovery). Discovery is stopped before returning, also on failure.
    /// `heardSoFar`, when given, is told the devices heard after each report (unsorted), for a live display.
    package func scan(
        adapter: String, duration: Duration,
        interrupted: @escaping @Sendable () async -> Void = { await Task.never() },
        heardSoFar: (@Sendable ([BlueZDeviceState]) -> Void)? = nil
    ) async throws -> [BlueZDeviceState] {
        try await setDiscoveryFilter(adapter: adapter, BlueZDiscoveryFilter(transport: "le"))
        let heard = try await withThrowingTaskGroup(of: [String: BlueZDeviceState]?.self) { group in
            // The watch starts (snapshot first) before discovery so that no report is missed.
            let (ready, readySignal) = AsyncStream.makeStream(of: Void.self)
            group.addTask {
                var tree = BlueZObjectTree(maxDevices: Self.toolTreeBound)
                var heard: [String: BlueZDeviceState] = [:]
                for await event in self.watch() {
                    for change in tree.apply(event) {
                        switch change {
                        case .deviceAppeared(let path), .deviceAdvertChanged(let path):
                            if let device = tree.devices[path], device.adapterPath == adapter { heard[path] = device }
                        case .deviceRemoved(let path, _):
                            heard[path] = nil
                        default: break
                        }
                    }
                    if case .snapshot = event {
                        for device in tree.devices.values where device.adapterPath == adapter && device.rssi != nil {
                            heard[device.path] = device
                        }
                    }
                    readySignal.yield()
                    // Keep the newest state of what was heard (names and RSSI settle over several reports).
                    for path in heard.keys { if let device = tree.devices[path] { heard[path] = device } }
                    heardSoFar?(Array(heard.values))
                    if Task.isCancelled { break }
                }
                readySignal.finish()
                return heard
            }
            var iterator = ready.makeAsyncIterator()
            _ = await iterator.next()
            group.addTask {
                try await self.startDiscovery(adapter: adapter)
                await withTaskGroup(of: Void.self) { timer in
                    timer.addTask { try? await Task.sleep(for: duration) }
                    timer.addTask { await interrupted() }
                    await timer.next()
                    timer.cancelAll()
                }
                return nil
            }
            var result: [String: BlueZDeviceState] = [:]
            do {
                while let next = try await group.next() {
                    if let next { result = next } else { group.cancelAll() }
                }
            } catch {
                group.cancelAll()
                try? await stopDiscovery(adapter: adapter)
                throw error
            }
            return result
        }
        try await stopDiscovery(adapter: adapter)
        return heard.values.sorted { ($0.rssi ?? .min, $0.path) > ($1.rssi ?? .min, $1.path) }
    }
}

extension Task where Success == Never, Failure == Never {
    /// Suspends until the task is cancelled.
    package static func never() async {
        let (stream, _) = AsyncStream.makeStream(of: Void.self)
        for await _ in stream {}
    }
}
