"""Device protocol v1 for the Python reference apps: the socket, requests, answers, and the Parse
installation every app saves (docs/device-protocol.md). Standard library only."""

import json
import os
import socket
import sys
import urllib.request
import uuid

PROTOCOL_VERSION = 1
# Notifications the reference apps have nothing to do with (progress, state changes).
PASSIVE = {
    "didWriteData", "didResumeAtOffset", "applicationDidEnterBackground", "applicationWillEnterForeground",
    "applicationDidBecomeActive", "applicationWillResignActive",
}


class Device:
    """The socket to the simulated device: requests with ids, notifications, and incoming messages."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.connect(path)
        self.buffer = b""
        self.next_id = 1
        self.answers = {}  # request id -> what to do with the result

    def send(self, message):
        message["jsonrpc"] = "2.0"
        self.socket.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    def request(self, method, params, on_result=None):
        request_id = self.next_id
        self.next_id += 1
        self.answers[request_id] = on_result
        self.send({"id": request_id, "method": method, "params": params})
        return request_id

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def respond(self, request_id, result):
        self.send({"id": request_id, "result": result})

    def log(self, message):
        self.notify("log", {"message": message})

    def messages(self):
        """Yields every message from the device until it closes the socket."""
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if line.strip():
                    yield json.loads(line)
            chunk = self.socket.recv(65536)
            if not chunk:
                return
            self.buffer += chunk


def save_installation(container, device_token, app_name):
    """`PFInstallation.saveInBackground`, reduced to its REST call; the installation id is kept in Library/."""
    library = os.path.join(container["home"], "Library")
    id_file = os.path.join(library, "parse-installation-id")
    if os.path.exists(id_file):
        installation_id = open(id_file).read()
    else:
        installation_id = str(uuid.uuid4())
        os.makedirs(library, exist_ok=True)
        with open(id_file, "w") as file:
            file.write(installation_id)
    body = {
        "deviceType": "ios", "deviceToken": device_token, "installationId": installation_id,
        "appIdentifier": os.environ["HARNESS_BUNDLE_ID"], "appName": app_name, "channels": [""], "timeZone": "UTC",
    }
    request = urllib.request.Request(
        os.environ["HARNESS_PARSE_URL"] + "/classes/_Installation", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "X-Parse-Application-Id": os.environ["HARNESS_PARSE_APPLICATION_ID"]},
    )
    if "HARNESS_PARSE_CLIENT_KEY" in os.environ:
        request.add_header("X-Parse-Client-Key", os.environ["HARNESS_PARSE_CLIENT_KEY"])
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


def describe(error):
    """An NSError the way the Swift app logs it: code, the cancellation reason if any, the description."""
    if not isinstance(error, dict):
        return str(error)
    reason = error.get("backgroundTaskCancelledReason")
    reason = f", cancelled reason {reason}" if reason is not None else ""
    return f"error {error['code']}{reason}: {error['localizedDescription']}"


def run(make_app):
    """`UIApplicationMain`: connects, says hello, builds the app from the answer, then hands it every message."""
    path = os.environ.get("HARNESS_DEVICE_SOCKET")
    if not path:
        sys.exit("HARNESS_DEVICE_SOCKET is not set: this app runs under the PushHarness device simulator")
    device = Device(path)
    device.request("hello", {"protocolVersion": PROTOCOL_VERSION, "bundleId": os.environ["HARNESS_BUNDLE_ID"], "pid": os.getpid()})
    app = None
    for message in device.messages():
        if app is None:
            if "error" in message:
                sys.exit(f"device handshake failed: {message['error'].get('message')}")
            if message.get("id") != 1 or "result" not in message:
                continue  # nothing else comes before the handshake's answer
            device.answers.pop(1, None)
            app = make_app(device, message["result"])
            app.did_finish_launching(message["result"]["launchReason"])
            if message["result"].get("remoteNotification"):
                app.did_receive_remote_notification(message["result"]["remoteNotification"])
            continue
        if message.get("method") is None:  # an answer to one of our requests
            on_result = device.answers.pop(message.get("id"), None)
            if "error" in message:
                device.log(f"device refused a request: {message['error'].get('message')}")
            elif on_result:
                on_result(message.get("result"))
        elif message["method"] in PASSIVE:
            continue
        elif not app.handle(message) and "id" in message:
            device.send({"id": message["id"], "error": {"code": -32601, "message": f"unknown method {message['method']}"}})
