import Foundation

/// Devices scattered among gateways on a grid, with signals that wander: log-distance path loss, a fixed
/// shadowing per link, a slow random walk per link (people, doors, the device moving a little) and noise per
/// advertisement.
struct FleetRadio {
    struct Link {
        let gateway: Int
        let device: Int
        let base: Double
        var drift: Double = 0
    }

    /// Links by gateway: each gateway samples its own links.
    private(set) var linksByGateway: [[Link]]
    /// The gateways that can hear each device at all.
    let gatewaysByDevice: [[Int]]
    static let hearingThreshold = -92.0

    init(scenario: FleetScenario, random: inout SeededRandom) {
        let columns = Int(Double(scenario.gateways).squareRoot().rounded(.up))
        let rows = (scenario.gateways + columns - 1) / columns
        let spacing = scenario.gatewaySpacing
        let width = Double(columns) * spacing
        let height = Double(rows) * spacing
        var linksByGateway = [[Link]](repeating: [], count: scenario.gateways)
        var gatewaysByDevice = [[Int]](repeating: [], count: scenario.devices)
        let reach = 2
        for device in 0..<scenario.devices {
            let x = random.real(in: 0...width)
            let y = random.real(in: 0...height)
            let column = Int(x / spacing)
            let row = Int(y / spacing)
            for r in max(0, row - reach)...min(rows - 1, row + reach) {
                for c in max(0, column - reach)...min(columns - 1, column + reach) {
                    let gateway = r * columns + c
                    guard gateway < scenario.gateways else { continue }
                    let dx = (Double(c) + 0.5) * spacing - x
                    let dy = (Double(r) + 0.5) * spacing - y
                    let distance = max(1, (dx * dx + dy * dy).squareRoot())
                    let base = -45 - 30 * log10(distance) + random.real(in: -4...4)
                    guard base > Self.hearingThreshold - 6 else { continue }
                    linksByGateway[gateway].append(Link(gateway: gateway, device: device, base: base))
                    gatewaysByDevice[device].append(gateway)
                }
            }
        }
        self.linksByGateway = linksByGateway
        self.gatewaysByDevice = gatewaysByDevice
    }

    /// One round of advertisements at one gateway: the devices heard and their signals.
    mutating func sample(gateway: Int, loss: Double, random: inout SeededRandom) -> [(device: Int, rssi: Int)] {
        var heard: [(device: Int, rssi: Int)] = []
        for index in linksByGateway[gateway].indices {
            var link = linksByGateway[gateway][index]
            link.drift = max(-8, min(8, link.drift * 0.99 + random.real(in: -0.7...0.7)))
            linksByGateway[gateway][index] = link
            let rssi = link.base + link.drift + random.real(in: -3...3)
            guard rssi >= Self.hearingThreshold, random.real(in: 0...1) >= loss else { continue }
            heard.append((link.device, Int(rssi.rounded())))
        }
        return heard
    }
}
