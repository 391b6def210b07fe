#!/usr/bin/env python3
"""The PushChat tutorial's server (shared/seeds/apns-pushchat-tutorial.txt), as a backend under test.

The tutorial's api.php and push.php, in Python's standard library, with SQLite for MySQL:

- `POST /api.php` takes form fields, the command in `cmd`:
  - `join` (udid, token, name, code): the user is in the room `code` (the secret code); one row per
    device in `active_users`, a second JOIN replaces it;
  - `leave` (udid): the user is out;
  - `update` (udid, token): the device has a new push token;
  - `message` (udid, text): at most 190 bytes, or `400`; a push for every other member of the
    sender's room goes into `push_queue`, its alert `"<name>: <text>"`; a payload over APNs's old 256
    bytes (a long nickname) is `400` too. Token "0" (a device that has none yet) gets nothing.
  A token is 64 hex digits or "0". An unknown command, a missing field or a bad token is `400`; a
  MESSAGE from a udid that has not joined is `404`.
- the pusher (push.php, a thread here, woken by each MESSAGE) first reads Apple's feedback service
  and removes the users whose tokens it lists, then sends what is queued through the legacy binary
  gateway, one simple notification (command 0) each, with the certificate `ck.pem` made by the
  tutorial's own openssl steps from the portal's `.cer` and the Keychain's `.p12`.

Where things are comes from the harness (docs/backends.md): HARNESS_PORT, HARNESS_DATA_DIR (the
database and the certificate files), HARNESS_APNS_CONTROL_URL (which issues the certificate),
HARNESS_APNS_LEGACY_GATEWAY, HARNESS_APNS_FEEDBACK and HARNESS_APNS_CA_FILE.

`--bug NAME` builds in a mistake for the harness to catch: `pushes-to-sender` (the sender gets its own
message too), `ignores-leave` (LEAVE answers 200 and keeps the user), `no-length-limit` (any length is
taken), `ignores-feedback` (the feedback service is never read).
"""

import argparse
import http.server
import json
import os
import socket
import sqlite3
import ssl
import struct
import subprocess
import sys
import threading
import urllib.parse
import urllib.request

TOPIC = "com.hollance.PushChat"
PASSPHRASE = "pushchat"
LIMIT = 190
PAYLOAD_LIMIT = 256

parser = argparse.ArgumentParser()
parser.add_argument("--bug", choices=["pushes-to-sender", "ignores-leave", "no-length-limit", "ignores-feedback"])
bug = parser.parse_args().bug
data = os.environ["HARNESS_DATA_DIR"]


output = threading.Lock()


def say(text):
    """One whole line: the HTTP handlers and the pusher print from their own threads."""
    with output:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def valid_token(token):
    return token == "0" or (len(token) == 64 and all(c in "0123456789abcdefABCDEF" for c in token))


def host_and_port(address):
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


# The certificate, as the tutorial makes it: the portal's .cer and the Keychain's .p12, turned into
# PushChatCert.pem and PushChatKey.pem by openssl, then joined into ck.pem.


def make_certificate():
    request = urllib.request.Request(
        os.environ["HARNESS_APNS_CONTROL_URL"] + "/certificates", method="POST",
        data=json.dumps({"bundleId": TOPIC, "environment": "sandbox", "p12Passphrase": PASSPHRASE}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        issued = json.load(answer)
    cert, key, ck = (os.path.join(data, name) for name in ("PushChatCert.pem", "PushChatKey.pem", "ck.pem"))
    secret = f"pass:{PASSPHRASE}"
    subprocess.run(["openssl", "x509", "-in", issued["cerFile"], "-inform", "der", "-out", cert], check=True)
    subprocess.run(
        ["openssl", "pkcs12", "-nocerts", "-out", key, "-in", issued["p12File"], "-passin", secret, "-passout", secret],
        check=True, capture_output=True,
    )
    with open(ck, "w") as out:
        for part in (cert, key):
            with open(part) as file:
                out.write(file.read())
    context = ssl.create_default_context(cafile=os.environ["HARNESS_APNS_CA_FILE"])
    context.load_cert_chain(ck, password=PASSPHRASE)
    return context


# The database: the tutorial's two tables.

database = sqlite3.connect(os.path.join(data, "pushchat.sqlite"), check_same_thread=False, isolation_level=None)
lock = threading.Lock()
database.executescript(
    """
    CREATE TABLE IF NOT EXISTS active_users (
        udid varchar(40) NOT NULL PRIMARY KEY,
        device_token varchar(64) NOT NULL,
        nickname varchar(255) NOT NULL,
        secret_code varchar(255) NOT NULL,
        ip_address varchar(32) NOT NULL
    );
    CREATE TABLE IF NOT EXISTS push_queue (
        message_id integer PRIMARY KEY AUTOINCREMENT,
        device_token varchar(64) NOT NULL,
        payload varchar(256) NOT NULL,
        time_queued datetime NOT NULL,
        time_sent datetime
    );
    """
)


def query(sql, *arguments):
    with lock:
        return database.execute(sql, arguments).fetchall()


# push.php: a thread woken when something is queued.


class Pusher(threading.Thread):
    def __init__(self, context):
        super().__init__(daemon=True)
        self.context = context
        self.wanted = threading.Condition()
        self.pending = False

    def wake(self):
        with self.wanted:
            self.pending = True
            self.wanted.notify()

    def run(self):
        while True:
            with self.wanted:
                while not self.pending:
                    self.wanted.wait()
                self.pending = False
            # Each on its own: the feedback service being down must not stop the pushes. What fails is on
            # the harness's timeline; the next message tries again.
            if bug != "ignores-feedback":
                try:
                    self.read_feedback()
                except Exception as error:
                    say(f"feedback: {error!r}")
            try:
                self.send_queued()
            except Exception as error:
                say(f"pusher: {error!r}")

    def connect(self, address):
        host, port = host_and_port(address)
        raw = socket.create_connection((host, port), timeout=10)
        return self.context.wrap_socket(raw, server_hostname=host)

    def read_feedback(self):
        with self.connect(os.environ["HARNESS_APNS_FEEDBACK"]) as connection:
            received = b""
            while chunk := connection.recv(4096):
                received += chunk
        tokens = []
        for offset in range(0, len(received) - len(received) % 38, 38):
            _, length = struct.unpack(">IH", received[offset:offset + 6])
            tokens.append(received[offset + 6:offset + 6 + length].hex())
        for token in tokens:
            gone = query("SELECT nickname FROM active_users WHERE device_token = ?", token)
            query("DELETE FROM active_users WHERE device_token = ?", token)
            query("DELETE FROM push_queue WHERE device_token = ? AND time_sent IS NULL", token)
            names = ", ".join(row[0] for row in gone) or "nobody"
            say(f"feedback: removed {names} ({token[:8]}…)")
        say(f"feedback: {len(tokens)} token{'s' if len(tokens) != 1 else ''}")

    def send_queued(self):
        queued = query("SELECT message_id, device_token, payload FROM push_queue WHERE time_sent IS NULL ORDER BY message_id")
        if not queued:
            return
        with self.connect(os.environ["HARNESS_APNS_LEGACY_GATEWAY"]) as connection:
            for message_id, token, payload in queued:
                body = payload.encode()
                token_bytes = bytes.fromhex(token)
                frame = b"\x00" + struct.pack(">H", len(token_bytes)) + token_bytes + struct.pack(">H", len(body)) + body
                connection.sendall(frame)
                query("UPDATE push_queue SET time_sent = datetime('now') WHERE message_id = ?", message_id)
                say(f"pushed message {message_id} to {token[:8]}…: {payload}")


# api.php


class API(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path != "/api.php":
            return self.answer(404, "no such page")
        length = min(int(self.headers.get("Content-Length") or 0), 65536)
        form = {key: values[0] for key, values in urllib.parse.parse_qs(self.rfile.read(length).decode()).items()}
        command = form.get("cmd")
        handler = {"join": self.join, "leave": self.leave, "update": self.update, "message": self.message}.get(command)
        if handler is None:
            return self.answer(400, f"unknown command {command!r}")
        try:
            handler(form)
        except KeyError as missing:
            self.answer(400, f"{command}: {missing.args[0]} is missing")

    def do_GET(self):
        self.answer(200 if self.path == "/api.php" else 404, "PushChat API")

    def answer(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def join(self, form):
        if not valid_token(form["token"]):
            return self.answer(400, "a token is 64 hex digits, or 0")
        query(
            "INSERT OR REPLACE INTO active_users VALUES (?, ?, ?, ?, ?)",
            form["udid"], form["token"], form["name"], form["code"], self.client_address[0],
        )
        say(f"join: {form['name']} in {form['code']}")
        self.answer(200, "OK")

    def leave(self, form):
        if bug != "ignores-leave":
            query("DELETE FROM active_users WHERE udid = ?", form["udid"])
        say(f"leave: {form['udid']}")
        self.answer(200, "OK")

    def update(self, form):
        if not valid_token(form["token"]):
            return self.answer(400, "a token is 64 hex digits, or 0")
        query("UPDATE active_users SET device_token = ? WHERE udid = ?", form["token"], form["udid"])
        say(f"update: {form['udid']}")
        self.answer(200, "OK")

    def message(self, form):
        text = form["text"]
        if len(text.encode()) > LIMIT and bug != "no-length-limit":
            say(f"message refused: {len(text.encode())} bytes")
            return self.answer(400, f"a message is at most {LIMIT} bytes")
        sender = query("SELECT nickname, secret_code FROM active_users WHERE udid = ?", form["udid"])
        if not sender:
            return self.answer(404, "join first")
        name, code = sender[0]
        members = query(
            "SELECT device_token FROM active_users WHERE secret_code = ? AND udid <> ? AND device_token <> '0'",
            code, "" if bug == "pushes-to-sender" else form["udid"],
        )
        payload = json.dumps({"aps": {"alert": f"{name}: {text}", "sound": "default"}}, ensure_ascii=False)
        if len(payload.encode()) > PAYLOAD_LIMIT and bug != "no-length-limit":
            say(f"message refused: its push would be {len(payload.encode())} bytes")
            return self.answer(400, f"the push would be over {PAYLOAD_LIMIT} bytes: use a shorter name or message")
        for (token,) in members:
            query("INSERT INTO push_queue (device_token, payload, time_queued) VALUES (?, ?, datetime('now'))", token, payload)
        say(f"message from {name} in {code} for {len(members)} member{'s' if len(members) != 1 else ''}")
        pusher.wake()
        self.answer(200, "OK")

    def log_message(self, format, *args):
        say("api: " + format % args)


pusher = Pusher(make_certificate())
pusher.start()
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["HARNESS_PORT"])), API)
say(f"PushChat API on port {os.environ['HARNESS_PORT']}")
server.serve_forever()
