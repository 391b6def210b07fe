"""The checks list the Parse conformance scripts fill and print: each check a name, whether it held
and what was seen."""
import json
import time
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


def until_done(fetch, is_done, seconds=30.0):
    """Fetches a push's status until is_done says it has ended (the server moves it along on its own
    time), or until seconds have passed; returns the last fetched."""
    deadline = time.monotonic() + seconds
    while True:
        fetched = fetch()
        if is_done(fetched) or time.monotonic() > deadline:
            return fetched
        time.sleep(0.1)


def decoded(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text
