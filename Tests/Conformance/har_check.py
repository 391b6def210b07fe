"""Checks a PushHarness cassette's traffic.har with tools nobody here wrote.

Usage: har_check.py CASSETTE_DIR

- haralyzer (PyPI) must load it and see every entry with its method, status, start time and time;
- it must pass the HAR 1.2 JSON Schema beside this script (jsonschema from PyPI), and entry.time must be
  the sum of the timings that apply, as the spec says;
- the bytes of every body (inline, or in bodies/ by _file) must hash to its _sha256 and add up to
  response.bodySize.
Prints one line per problem and exits 1 if there is any; prints "ok N entries" otherwise.
"""

import base64
import hashlib
import json
import os
import sys

import jsonschema
from haralyzer import HarPage, HarParser


def main(folder):
    problems = []
    path = os.path.join(folder, "traffic.har")
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "har-1.2.schema.json")
    with open(schema_path, encoding="utf-8") as file:
        schema = json.load(file)
    for error in jsonschema.Draft7Validator(schema).iter_errors(document):
        problems.append("schema: %s at %s" % (error.message, "/".join(str(p) for p in error.absolute_path)))

    parser = HarParser.from_file(path)
    if parser.version != "1.2":
        problems.append("haralyzer: version %r" % parser.version)
    if parser.creator.get("name") != "PushHarness":
        problems.append("haralyzer: creator %r" % parser.creator)
    seen = 0
    for page in parser.pages:
        for entry in HarPage(page.page_id, har_parser=parser).entries:
            seen += 1
            if not entry.request.method or entry.startTime is None or entry.time is None:
                problems.append("haralyzer: an entry without method, start or time: %s" % entry.url)
    entries = document["log"]["entries"]
    if seen != len(entries):
        problems.append("haralyzer saw %d entries of %d" % (seen, len(entries)))

    for index, entry in enumerate(entries):
        timings = entry["timings"]
        total = sum(timings.get(k, -1) for k in ("blocked", "dns", "connect") if timings.get(k, -1) >= 0)
        total += timings["send"] + timings["wait"] + timings["receive"]
        if abs(total - entry["time"]) > 1e-6:
            problems.append("entry %d: time %r is not the sum of its timings %r" % (index, entry["time"], total))
        content = entry["response"]["content"]
        if "_file" in content:
            with open(os.path.join(folder, content["_file"]), "rb") as file:
                body = file.read()
        elif "text" in content:
            text = content["text"]
            body = base64.b64decode(text) if content.get("encoding") == "base64" else text.encode("utf-8")
        else:
            body = b""
        if "_sha256" in content and hashlib.sha256(body).hexdigest() != content["_sha256"]:
            problems.append("entry %d: the body does not hash to its _sha256" % index)
        if len(body) != entry["response"]["bodySize"]:
            problems.append("entry %d: %d body bytes, bodySize %d" % (index, len(body), entry["response"]["bodySize"]))
        writes = entry.get("_writes")
        if writes is not None and sum(w[1] for w in writes) != len(body):
            problems.append("entry %d: _writes add up to %d of %d bytes" % (index, sum(w[1] for w in writes), len(body)))

    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("ok %d entries" % len(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
