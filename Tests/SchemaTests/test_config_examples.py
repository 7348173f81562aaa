"""Validates every configuration example against schemas/config.schema.json (JSON Schema Draft 2020-12).

Valid examples must pass. Invalid examples must fail, except those whose first line is a
`# gattway-only: <reason>` comment: they break a rule the schema cannot express (uniqueness across list
items, the advertising byte budget), so they must pass the schema, and BridgeCoreTests proves Gattway
rejects them.
"""

import json
import pathlib

import jsonschema
import pytest
import yaml

SCHEMAS = pathlib.Path(__file__).resolve().parents[2] / "schemas"
EXAMPLES = SCHEMAS / "examples"


def load_schema(name):
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


CONFIG = load_schema("config.schema.json")


def examples(kind):
    return sorted((EXAMPLES / kind).glob("*.yaml"))


def test_there_are_enough_examples():
    assert len(examples("valid")) >= 6
    assert len(examples("invalid")) >= 10


@pytest.mark.parametrize("path", examples("valid"), ids=lambda p: p.name)
def test_valid_example_matches_schema(path):
    document = yaml.safe_load(path.read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in CONFIG.iter_errors(document)]
    assert errors == []


@pytest.mark.parametrize("path", examples("invalid"), ids=lambda p: p.name)
def test_invalid_example_is_rejected(path):
    text = path.read_text()
    gattway_only = text.startswith("# gattway-only:")
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError:
        assert not gattway_only
        return
    errors = list(CONFIG.iter_errors(document))
    if gattway_only:
        assert errors == [], "a gattway-only example must pass the schema"
    else:
        assert errors, "the schema accepted an invalid example"
    assert path.with_suffix(".expected").exists()


@pytest.mark.parametrize("path", sorted((SCHEMAS / "mqtt").glob("*.schema.json")), ids=lambda p: p.name)
def test_mqtt_payload_schemas_are_valid_and_their_examples_match(path):
    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for example in schema.get("examples", []):
        assert list(validator.iter_errors(example)) == [], example
