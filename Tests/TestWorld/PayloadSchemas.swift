import Foundation

/// Checks real MQTT payloads against the JSON Schemas in `schemas/mqtt/`, with Python's `jsonschema` (Draft
/// 2020-12) from the simulator's venv: the contract is checked by a real validator, not by a reimplementation.
package enum PayloadSchemas {
    /// The Python that `scripts/setup` provides (with jsonschema installed).
    static var python: String { "\(packageRoot)/Tests/BlueZSimulator/.venv/bin/python" }

    private static let script = """
        import json, pathlib, sys
        import jsonschema
        cases = json.loads(pathlib.Path(sys.argv[1]).read_text())
        root = pathlib.Path(sys.argv[2])
        problems = []
        for case in cases:
            schema = json.loads((root / case["schema"]).read_text())
            jsonschema.Draft202012Validator.check_schema(schema)
            try:
                payload = json.loads(case["payload"])
            except ValueError:
                payload = case["payload"]  # plain text (online/offline, utf8 values)
            for error in jsonschema.Draft202012Validator(schema).iter_errors(payload):
                problems.append(f"{case['schema']} {case['topic']}: {error.message} in {case['payload'][:300]}")
        print(json.dumps(problems))
        """

    /// Every problem found: one line per violation, naming the schema, the topic and the payload. Empty when all
    /// payloads match.
    package static func problems(_ cases: [(topic: String, schema: String, payload: String)]) async throws -> [String] {
        let directory = try makeTemporaryDirectory("gattway-schemas")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let casesPath = directory + "/cases.json"
        let json = cases.map { ["topic": $0.topic, "schema": $0.schema, "payload": $0.payload] }
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: casesPath))
        let scriptPath = directory + "/check.py"
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestWorldError("\(python) is missing: run scripts/setup")
        }
        let output = try await runTool(
            python, [scriptPath, casesPath, "\(packageRoot)/schemas/mqtt"], timeout: .seconds(60))
        guard let problems = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String] else {
            throw TestWorldError("unexpected validator output: \(output)")
        }
        return problems
    }
}
