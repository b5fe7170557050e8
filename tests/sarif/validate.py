"""Validators for tests/formats.rs, run with the Python named by PREFLINT_PYTHON.

    validate.py sarif SCHEMA FILE...   each FILE against the SARIF 2.1.0 schema
    validate.py junit FILE...          each FILE parses as XML and its counts agree

Prints one line per problem and exits 1 if there is any; exits 2 when a
validator dependency is missing (install tests/sarif/requirements.txt).
"""

import json
import sys
import xml.etree.ElementTree as ET


def sarif(schema_path, files):
    try:
        from jsonschema import Draft4Validator, FormatChecker
    except ImportError as e:
        print(f"missing validator: {e}; pip install -r tests/sarif/requirements.txt")
        return 2
    with open(schema_path, encoding="utf-8") as fh:
        schema = json.load(fh)
    Draft4Validator.check_schema(schema)
    checker = FormatChecker()
    # Without rfc3986-validator the uri formats would pass unchecked.
    for fmt in ("uri", "uri-reference"):
        if fmt not in checker.checkers:
            print(f"missing validator: format {fmt!r} unchecked; pip install -r tests/sarif/requirements.txt")
            return 2
    validator = Draft4Validator(schema, format_checker=checker)
    problems = 0
    for path in files:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        for err in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(p) for p in err.absolute_path)
            print(f"{path}: /{where}: {err.message}")
            problems += 1
    return 1 if problems else 0


def junit(files):
    problems = []
    for path in files:
        try:
            root = ET.parse(path).getroot()
        except ET.ParseError as e:
            problems.append(f"{path}: not XML: {e}")
            continue
        suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
        if root.tag not in ("testsuites", "testsuite") or not suites:
            problems.append(f"{path}: root is <{root.tag}>, no <testsuite>")
        for suite in suites:
            cases = suite.findall("testcase")
            failures = [f for c in cases for f in c.findall("failure")]
            if suite.get("tests") != str(len(cases)):
                problems.append(f"{path}: tests={suite.get('tests')} but {len(cases)} test cases")
            if suite.get("failures") != str(len(failures)):
                problems.append(f"{path}: failures={suite.get('failures')} but {len(failures)} failures")
            for c in cases:
                if not c.get("name") or not c.get("classname"):
                    problems.append(f"{path}: test case without name or classname")
                if len(c.findall("failure")) > 1:
                    problems.append(f"{path}: {c.get('name')}: more than one failure")
            for f in failures:
                if f.get("message") is None:
                    problems.append(f"{path}: failure without message")
    for p in problems:
        print(p)
    return 1 if problems else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "sarif":
        return sarif(argv[2], argv[3:])
    if len(argv) >= 2 and argv[1] == "junit":
        return junit(argv[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
