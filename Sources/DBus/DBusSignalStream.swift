import Synchronization

/// A Sendable counter shared between a connection and the streams it feeds.
final class DBusCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// The signals matching one rule, in arrival order, buffered as chosen in `DBusConnection.signals(matching:…)`.
///
/// Single consumer. When the consumer stops iterating (or the stream is dropped), the connection removes the
/// match rule from the bus. The stream ends when the connection closes or is lost.
package struct DBusSignalStream: AsyncSequence, Sendable {
    package typealias Element = DBusSignal
    package typealias Failure = Never

    let stream: AsyncStream<DBusSignal>
    let drops: DBusCounter

    /// Signals this stream dropped because its buffer was full.
    package var droppedCount: Int { drops.value }

    package func makeAsyncIterator() -> AsyncStream<DBusSignal>.Iterator { stream.makeAsyncIterator() }
}

/// A change of a bus name's owner (`NameOwnerChanged`); nil means no owner.
package struct DBusNameOwnerChange: Sendable, Hashable {
    package var name: String
    package var oldOwner: String?
    package var newOwner: String?

    package init(name: String, oldOwner: String?, newOwner: String?) {
        self.name = name
        self.oldOwner = oldOwner
        self.newOwner = newOwner
    }
}

/// The owner changes of one bus name, e.g. to notice `org.bluez` leaving and returning. Single consumer.
package struct DBusNameOwnerChangeStream: AsyncSequence, Sendable {
    package typealias Element = DBusNameOwnerChange
    package typealias Failure = Never

    let signals: DBusSignalStream

    package var droppedCount: Int { signals.droppedCount }

    package struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<DBusSignal>.Iterator

        package mutating func next(isolation actor: isolated (any Actor)? = #isolation) async
            -> DBusNameOwnerChange?
        {
            while let signal = await base.next(isolation: actor) {
                let strings = signal.arguments.compactMap(\.string)
                guard strings.count == 3 else { continue }
                return DBusNameOwnerChange(
                    name: strings[0], oldOwner: strings[1].isEmpty ? nil : strings[1],
                    newOwner: strings[2].isEmpty ? nil : strings[2])
            }
            return nil
        }

        package mutating func next() async -> DBusNameOwnerChange? {
            await next(isolation: nil)
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: signals.makeAsyncIterator()) }
}
