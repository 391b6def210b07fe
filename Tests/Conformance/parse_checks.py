"""The checks list the Parse conformance scripts fill and print: each check a name, whether it held
and what was seen."""
import json
import traceback

checks = []


def check(name, ok, detail=""):
    checks.append({"name": name, "ok": bool(ok), "detail": detail if isinstance(detail, str) else repr(detail)})
    return bool(ok)


def step(name, function):
    """Runs one group of checks; an exception fails it without hiding the groups after it."""
    try:
        function()
    except Exception as error:
        check(name + " (raised)", False, "%s: %s\n%s" % (type(error).__name__, error, traceback.format_exc(limit=4)))


def report():
    print(json.dumps({"checks": checks}))
