/// The tunable parts of the ownership protocol. Every gateway of a fleet must use the same values.
package struct FleetPolicy: Hashable, Sendable {
    /// How much stronger (dB) a challenger's smoothed signal must be than the owner's claimed signal.
    package var margin: Int = 6
    /// How long a challenger must stay better by `margin` before it claims.
    package var hold: Duration = .seconds(10)
    /// A device not heard for this long is lost: its owner releases it, others stop counting it as heard.
    package var lostAfter: Duration = .seconds(5)
    /// A device neither heard nor owned for this long is forgotten (its claim topic is unsubscribed).
    package var forgetAfter: Duration = .seconds(60)
    /// After subscribing to a claim topic, how long to wait for its retained claim before treating it as vacant.
    package var settle: Duration = .seconds(1)
    /// Spread of the takeover delay: the strongest hearer claims a vacant device at once, the weakest this much
    /// later, so that usually only one gateway claims.
    package var takeoverSpread: Duration = .milliseconds(1_500)
    /// A per device and gateway offset of up to this much on top, so that equal signals do not claim together.
    package var takeoverJitter: Duration = .milliseconds(250)
    /// Signals at or above this (dBm) get no takeover delay, at or below `weakRSSI` the whole spread.
    package var strongRSSI: Int = -40
    package var weakRSSI: Int = -100
    /// The owner republishes its claim when its signal moved this much (dB) from the claimed value…
    package var refreshDelta: Int = 4
    /// …but not more often than this.
    package var refreshMinimumInterval: Duration = .seconds(30)
    /// The owner republishes its claim at least this often, so that claims made on both sides of a broker
    /// partition meet once it heals.
    package var refreshInterval: Duration = .seconds(300)
    /// A gateway that took a device from a live owner starts acting as owner this long after its claim came back
    /// from the broker, so that the previous owner has stopped (it receives the same claim at about the same time).
    package var handoverDelay: Duration = .seconds(1)
    /// A published claim whose echo has not come back from the broker by then is given up (it may be retried).
    package var echoTimeout: Duration = .seconds(5)
    /// With the broker lost for this long, the gateway stops acting as owner of anything (its Last Will has
    /// fired or is about to, and others take over).
    package var brokerLossGrace: Duration = .seconds(1)
    /// How often the gateway publishes its sightings, when they changed.
    package var sightingsInterval: Duration = .seconds(30)
    /// Weight of a new sample in the smoothed signal (0…1].
    package var smoothing: Double = 0.25

    package init() {}
}
