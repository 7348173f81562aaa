import Foundation

/// Reads a Prometheus endpoint over HTTP and parses it with Python's `prometheus_client` text-format parser
/// (from the simulator's venv): the format is checked by a real Prometheus parser, not by a reimplementation.
package struct PrometheusScrape: Sendable {
    package struct Sample: Sendable {
        package let name: String
        package let labels: [String: String]
        package let value: Double
    }

    package struct Family: Sendable {
        package let type: String
        package let samples: [Sample]
    }

    /// The HTTP status of the request.
    package let status: Int
    /// Metric families by name, as the parser names them (a counter's family drops a `_total` suffix).
    package let families: [String: Family]

    private static let script = """
        import json, sys, urllib.error, urllib.request
        from prometheus_client.parser import text_string_to_metric_families
        try:
            with urllib.request.urlopen(sys.argv[1], timeout=5) as response:
                status, text = response.status, response.read().decode("utf-8")
        except urllib.error.HTTPError as error:
            print(json.dumps({"status": error.code, "families": {}}))
            sys.exit(0)
        families = {}
        for family in text_string_to_metric_families(text):
            families[family.name] = {"type": family.type, "samples": [
                {"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples]}
        print(json.dumps({"status": status, "families": families}))
        """

    /// Scrapes `url`; throws when the endpoint cannot be reached or its text does not parse.
    package static func scrape(_ url: String) async throws -> PrometheusScrape {
        let python = PayloadSchemas.python
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestWorldError("\(python) is missing: run scripts/setup")
        }
        let output = try await runTool(python, ["-c", script, url], timeout: .seconds(30))
        guard let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
            let status = json["status"] as? Int, let families = json["families"] as? [String: [String: Any]]
        else { throw TestWorldError("unexpected scrape output: \(output)") }
        var parsed: [String: Family] = [:]
        for (name, family) in families {
            let samples = (family["samples"] as? [[String: Any]] ?? []).map { sample in
                Sample(
                    name: sample["name"] as? String ?? "", labels: sample["labels"] as? [String: String] ?? [:],
                    value: (sample["value"] as? NSNumber)?.doubleValue ?? .nan)
            }
            parsed[name] = Family(type: family["type"] as? String ?? "", samples: samples)
        }
        return PrometheusScrape(status: status, families: parsed)
    }

    /// The value of a counter (its `_total` sample) with exactly these labels.
    package func counter(_ family: String, labels: [String: String] = [:]) -> Double? {
        value(family, sample: family + "_total", labels: labels)
    }

    /// The value of the sample named `name` (the family's name by default) with exactly these labels.
    package func value(_ family: String, sample: String? = nil, labels: [String: String] = [:]) -> Double? {
        families[family]?.samples.first { $0.name == (sample ?? family) && $0.labels == labels }?.value
    }
}
