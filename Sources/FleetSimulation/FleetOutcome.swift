/// What a fleet simulation measured, over its measured time only.
package struct FleetOutcome: Sendable, Equatable {
    package var gateways = 0
    package var devices = 0
    package var measuredMilliseconds: Int64 = 0
    /// Per device owned by a killed gateway and heard by another: kill → another gateway owns it (ms, sorted).
    package var takeoverAfterKill: [Int64] = []
    /// The same, from the first delivery of the killed gateway's Last Will.
    package var takeoverAfterWill: [Int64] = []
    /// Devices owned by a killed gateway, heard by another, and not taken over by the end of the run.
    package var takeoversMissing = 0
    package var kills = 0
    package var partitions = 0
    /// Every change of a device's owner to another gateway.
    package var ownerChanges = 0
    /// Those changes whose previous owner was alive and on the broker: signal moves, losses, contests.
    package var ownerChangesWithoutFailure = 0
    /// Times a device came to have two owners, and for how long in all.
    package var twoOwnerEpisodes = 0
    package var twoOwnerMilliseconds: Int64 = 0
    /// The longest single episode.
    package var longestTwoOwnerMilliseconds: Int64 = 0
    /// PUBLISH packets into the broker and out of it.
    package var published = 0
    package var delivered = 0
    /// Of the published: claims (new owners, and owners refreshing their signal), releases, sightings.
    package var claimsPublished = 0
    package var releasesPublished = 0
    package var sightingsPublished = 0
    /// At the end: devices heard by some live gateway, those with exactly one owner, those with more.
    package var devicesHeardAtEnd = 0
    package var devicesOwnedOnceAtEnd = 0
    package var devicesOwnedSeveralTimesAtEnd = 0

    package init() {}

    private var deviceHours: Double { Double(devices) * Double(measuredMilliseconds) / 3_600_000 }
    private var deviceMinutes: Double { Double(devices) * Double(measuredMilliseconds) / 60_000 }

    package var ownerChangesPerDeviceHour: Double { deviceHours > 0 ? Double(ownerChanges) / deviceHours : 0 }
    package var ownerChangesWithoutFailurePerDeviceHour: Double {
        deviceHours > 0 ? Double(ownerChangesWithoutFailure) / deviceHours : 0
    }
    package var publishedPerDevicePerMinute: Double { deviceMinutes > 0 ? Double(published) / deviceMinutes : 0 }
    package var deliveredPerDevicePerMinute: Double { deviceMinutes > 0 ? Double(delivered) / deviceMinutes : 0 }

    /// The `fraction` percentile (nearest rank) of sorted samples.
    package static func percentile(_ sorted: [Int64], _ fraction: Double) -> Int64? {
        guard !sorted.isEmpty else { return nil }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
}
