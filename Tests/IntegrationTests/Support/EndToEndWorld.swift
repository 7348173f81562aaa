import Testing

/// A world of real daemons and the built gattway binary that a test starts and must always stop.
protocol EndToEndWorld: Sendable {
    /// What gattway printed on standard error: its log.
    var gattwayLog: String { get }
    func stop() async
}

extension EndToEndWorld {
    /// Runs `body` against this world and stops it afterwards, also when `body` fails; a failure records the tail
    /// of gattway's log, which usually says why.
    func run(_ body: (Self) async throws -> Void) async throws {
        do {
            try await body(self)
        } catch {
            Issue.record("gattway log:\n\(gattwayLog.suffix(4000))")
            await stop()
            throw error
        }
        await stop()
    }
}
