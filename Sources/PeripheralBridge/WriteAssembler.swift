import Synchronization

/// Puts long and reliable writes back together.
///
/// bluetoothd hands the pieces of a prepared write to the app as separate WriteValue calls with growing offsets
/// (one per Prepare Write Request, each at most MTU−5 bytes), with no marker for the last one. A piece shorter
/// than MTU−5 ends the write; a full-size piece may be followed by more, so the write completes when no further
/// piece arrives within `settleTime`. A piece that does not continue the assembly, or makes it longer than the
/// characteristic allows, rejects the whole write.
final class WriteAssembler: Sendable {
    enum Outcome: Equatable {
        /// The write is whole: apply these bytes.
        case complete([UInt8])
        /// More pieces may follow; the caller completes it with ``finishIfSettled(key:generation:)`` later.
        case pending(generation: Int)
    }

    enum Rejection: Error, Equatable {
        case tooLong(Int)
        case invalidOffset(Int)
    }

    struct Key: Hashable, Sendable {
        var device: String
        var characteristic: Int
    }

    private struct Assembly: Sendable {
        var bytes: [UInt8]
        var generation: Int
    }

    static let settleTime: Duration = .milliseconds(100)
    private let assemblies = Mutex<[Key: Assembly]>([:])
    private let maximumLength: Int

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    func add(_ piece: [UInt8], offset: Int, mtu: Int, key: Key) throws(Rejection) -> Outcome {
        let pieceSize = max(1, mtu - 5)
        return try assemblies.withLock { assemblies throws(Rejection) -> Outcome in
            var assembly: Assembly
            if offset == 0 {
                assembly = Assembly(bytes: [], generation: (assemblies[key]?.generation ?? 0) + 1)
            } else if let existing = assemblies[key], existing.bytes.count == offset {
                assembly = existing
                assembly.generation += 1
            } else {
                assemblies[key] = nil
                throw .invalidOffset(offset)
            }
            assembly.bytes += piece
            guard assembly.bytes.count <= maximumLength else {
                assemblies[key] = nil
                throw .tooLong(assembly.bytes.count)
            }
            // A plain Write Request (offset 0, any size but a Prepare Write's) or a short last piece: whole now.
            if (offset == 0 && piece.count != pieceSize) || piece.count < pieceSize {
                assemblies[key] = nil
                return .complete(assembly.bytes)
            }
            assemblies[key] = assembly
            return .pending(generation: assembly.generation)
        }
    }

    /// The bytes of a pending write when no piece arrived since `generation`; nil otherwise.
    func finishIfSettled(key: Key, generation: Int) -> [UInt8]? {
        assemblies.withLock { assemblies in
            guard let assembly = assemblies[key], assembly.generation == generation else { return nil }
            assemblies[key] = nil
            return assembly.bytes
        }
    }
}
