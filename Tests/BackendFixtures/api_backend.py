"""A backend for the harness's backend tests (Tests/EndToEndTests/BackendRunTests.swift).

It checks that its HARNESS_* variables say what the endpoints file says, asks Parse for its
installations with the master key, then serves HTTP on HARNESS_PORT: /health, and /hello, which
answers with $GREETING. argv[1] picks a misbehaviour: exit-before-ready, dies-on-hello,
with-child (a child that ignores SIGTERM, in the backend's process group), with-setsid-child (the same
child after setsid, in a session and group of its own), or ignores-sigterm.
Standard library only.
"""

import http.server
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request

mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
if mode == "ignores-sigterm":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def say(text):
    print(text, flush=True)


def variable(section, key):
    """apns.caFile -> HARNESS_APNS_CA_FILE, as docs/backends.md says."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", key)
    return f"HARNESS_{section.upper()}_{words.upper()}"


with open(os.environ["HARNESS_ENDPOINTS_FILE"]) as file:
    endpoints = json.load(file)
checked = 0
for section, values in endpoints.items():
    for key, value in values.items():
        name = variable(section, key)
        if os.environ.get(name) != value:
            say(f"{name} is {os.environ.get(name)!r}, the endpoints file says {value!r}")
            sys.exit(4)
        checked += 1
say(f"endpoints match: {checked} variables")

request = urllib.request.Request(
    os.environ["HARNESS_PARSE_URL"] + "/classes/_Installation",
    headers={
        "X-Parse-Application-Id": os.environ["HARNESS_PARSE_APPLICATION_ID"],
        "X-Parse-Master-Key": os.environ["HARNESS_PARSE_MASTER_KEY"],
    },
)
with urllib.request.urlopen(request, timeout=10) as answer:
    say(f"parse answered {answer.status}")

if mode == "exit-before-ready":
    say("giving up before listening")
    sys.exit(2)
if mode in ("with-child", "with-setsid-child"):
    # with-setsid-child: the child calls setsid, leaving the backend's process group (as a daemon does).
    child = subprocess.Popen(
        [sys.executable, "-c", "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True: signal.pause()"],
        start_new_session=(mode == "with-setsid-child"),
    )
    say(f"child pid {child.pid}")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/hello" and mode == "dies-on-hello":
            say("about to fall over")
            os._exit(3)
        body = {"/health": "ok", "/hello": f"hello from {os.environ.get('GREETING')}"}.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format, *args):
        say("request: " + format % args)


server = http.server.HTTPServer(("127.0.0.1", int(os.environ["HARNESS_PORT"])), Handler)
say(f"pid {os.getpid()} listening on {os.environ['HARNESS_PORT']}")
server.serve_forever()
