"""Every MQTT payload schema in schemas/mqtt is a valid JSON Schema (Draft 2020-12) with examples that pass it.

Real payloads from the built gattway binary are checked against the same schemas by the Swift end-to-end suite
(IntegrationTests/PayloadSchemaEndToEndTests)."""

import json
import pathlib

import jsonschema
import pytest

MQTT = pathlib.Path(__file__).resolve().parents[2] / "schemas" / "mqtt"
SCHEMAS = sorted(MQTT.glob("*.schema.json"))


def test_there_are_payload_schemas():
    assert len(SCHEMAS) >= 12


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_schema_is_valid_and_its_examples_pass(path):
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$id"].endswith("/mqtt/" + path.name)
    examples = schema.get("examples", [])
    assert examples, f"{path.name} has no examples"
    validator = jsonschema.Draft202012Validator(schema)
    for example in examples:
        errors = [error.message for error in validator.iter_errors(example)]
        assert not errors, f"{path.name}: example {example!r}: {errors}"
