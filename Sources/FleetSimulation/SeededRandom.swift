/// SplitMix64: a small, fast generator whose sequence depends only on its seed, so a simulation run can be
/// repeated exactly.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A whole number in `range`.
    package mutating func integer(in range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }

    /// A number in `range`.
    package mutating func real(in range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &self) }
}
