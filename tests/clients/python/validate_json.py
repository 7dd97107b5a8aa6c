"""Validate a JSON document against a JSON Schema with the `jsonschema` package.

Usage: validate_json.py SCHEMA DOCUMENT. The schema's own `$schema` picks the draft; the formats
jsonschema checks without extra packages are checked too. Prints every violation with its path
in the document and exits 1 when there is one; else prints `PASS`. `jsonschema` is pinned in
../requirements.txt (the `mcp` client depends on it).
"""

from __future__ import annotations

import json
import sys

import jsonschema


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        document = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "(the document)"
        print(f"{sys.argv[2]}: {where}: {error.message}")
    if errors:
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
