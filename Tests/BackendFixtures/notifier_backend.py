"""A backend for the replay-without-backend tests (Tests/EndToEndTests/ReplayWithoutBackendTests.swift).

It serves HTTP on HARNESS_PORT: /health, and `POST /notify` with a form `token=<hex>&text=<words>`,
which answers 200 and then, a moment later on a thread of its own, sends two notifications to that
token: an alert through APNs's HTTP/2 API, with curl and a push certificate the control API issues
(`<text> (HTTP/2)`), and one through Parse's `POST /push` with the master key, its `where` naming the
token (`<text> (Parse)`). Standard library, openssl-free: the certificate comes as PEM files.
"""

import http.server
import json
import os
import subprocess
import sys
import threading
import urllib.parse
import urllib.request

TOPIC = os.environ["HARNESS_APNS_TOPIC"]


def say(text):
    print(text, flush=True)


def certificate():
    request = urllib.request.Request(
        os.environ["HARNESS_APNS_CONTROL_URL"] + "/certificates", method="POST",
        data=json.dumps({"bundleId": TOPIC, "environment": "sandbox"}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        issued = json.load(answer)
    return issued["certificateFile"], issued["keyFile"]


CERTIFICATE, KEY = certificate()


def send(token, text):
    payload = json.dumps({"aps": {"alert": f"{text} (HTTP/2)"}})
    curl = subprocess.run(
        ["curl", "--silent", "--show-error", "--http2", "--cert", CERTIFICATE, "--key", KEY,
         "--cacert", os.environ["HARNESS_APNS_CA_FILE"], "-H", f"apns-topic: {TOPIC}", "-H", "apns-push-type: alert",
         "-o", "/dev/null", "-w", "%{http_code}", "--data", payload,
         os.environ["HARNESS_APNS_URL"] + "/3/device/" + token],
        capture_output=True, text=True, timeout=30,
    )
    say(f"APNs answered {curl.stdout} {curl.stderr.strip()}".rstrip())
    body = json.dumps({"where": {"deviceToken": token}, "data": {"alert": f"{text} (Parse)"}}).encode()
    request = urllib.request.Request(
        os.environ["HARNESS_PARSE_URL"] + "/push", method="POST", data=body,
        headers={"X-Parse-Application-Id": os.environ["HARNESS_PARSE_APPLICATION_ID"],
                 "X-Parse-Master-Key": os.environ["HARNESS_PARSE_MASTER_KEY"],
                 "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        say(f"Parse answered {answer.status}")


class API(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.answer(200 if self.path == "/health" else 404, "notifier")

    def do_POST(self):
        if self.path != "/notify":
            return self.answer(404, "no such page")
        length = min(int(self.headers.get("Content-Length") or 0), 65536)
        form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
        if len(form.get("token", "")) != 64:
            return self.answer(400, "a token is 64 hex digits")
        say(f"notify {form['token'][:8]}…: {form.get('text', '')}")
        self.answer(200, "queued")
        threading.Timer(0.2, send, (form["token"], form.get("text", "hello"))).start()

    def answer(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["HARNESS_PORT"])), API)
say(f"notifier on port {os.environ['HARNESS_PORT']}")
server.serve_forever()
