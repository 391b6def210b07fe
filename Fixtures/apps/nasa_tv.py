#!/usr/bin/env python3
"""The NASA TV reference app in Python: the tutorial's silent-push flow over device protocol v1.

It proves an app in any language can be tested: it speaks JSON-RPC 2.0, one message per line, on the
Unix socket the device names in HARNESS_DEVICE_SOCKET (docs/device-protocol.md), and does what the
Swift reference app does:

- at launch: creates the background session, registers for remote notifications and saves its Parse
  installation (the installation id kept in Library/ so a relaunch updates it);
- on a silent push: downloads the daily photo in the background session, moves it to
  Library/Caches/com.razeware.photos/ in didFinishDownloadingTo, then posts "Astronomy Picture of the
  Day Available" and calls the fetch completion handler;
- relaunched or resumed for its session: keeps the handleEventsForBackgroundURLSession handler and
  calls it on urlSessionDidFinishEvents.

Standard library only; run by the device as `python3 Fixtures/apps/nasa_tv.py`.
"""

import json
import os
import shutil
import socket
import sys
import urllib.request
import uuid

SESSION = "com.razeware.backgroundsession.dailyphoto"
PROTOCOL_VERSION = 1


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


class NASATV:
    def __init__(self, device, hello):
        self.device = device
        self.container = hello["container"]
        self.badge = hello["badge"]
        self.fetch_completions = []  # completion ids of silent pushes whose photo is on its way
        self.session_completion = None  # the handler of handleEventsForBackgroundURLSession
        self.next_task = 1
        self.move_error = None

    # UIApplicationDelegate

    def did_finish_launching(self, reason):
        self.device.log(f"launched ({reason}) in Python")
        self.device.request("session.create", {"identifier": SESSION, "background": True})
        self.device.request("setMinimumBackgroundFetchInterval", {"seconds": 0})
        self.device.request("registerForRemoteNotifications", {}, self.did_register)

    def did_register(self, result):
        try:
            self.save_installation(result["deviceToken"])
            self.device.log("installation saved")
        except Exception as error:  # the run's timeline shows it; the app carries on, as the SDK does
            self.device.log(f"installation not saved: {error}")

    def did_receive_remote_notification(self, params):
        aps = params["userInfo"].get("aps", {})
        if aps.get("content-available") != 1:
            self.complete_fetch(params["completionId"], "noData")
            return
        self.fetch_daily_photo(params["completionId"])

    def perform_fetch(self, params):
        self.device.log("performFetchWithCompletionHandler")
        self.fetch_daily_photo(params["completionId"])

    def fetch_daily_photo(self, completion_id):
        self.fetch_completions.append(completion_id)
        task = self.next_task
        self.next_task += 1
        url = os.environ["HARNESS_MEDIA_URL"] + "/photos/dailyphoto.jpg"
        self.device.request("downloadTask.resume", {"session": SESSION, "taskIdentifier": task, "url": url})

    def handle_events_for_background_session(self, params):
        self.device.log(f"handleEventsForBackgroundURLSession {params['identifier']}")
        self.session_completion = params["completionId"]

    # URLSessionDownloadDelegate

    def did_finish_downloading(self, params):
        folder = os.path.join(self.container["caches"], "com.razeware.photos")
        try:
            os.makedirs(folder, exist_ok=True)
            shutil.move(params["location"], os.path.join(folder, "dailyphoto.jpg"))
            self.move_error = None
        except OSError as error:
            self.move_error = error

    def did_complete(self, params):
        error = params.get("error") or self.move_error
        result = "failed" if error else "newData"
        if error:
            self.device.log(f"photo download failed: {describe(error)}")
        else:
            self.badge += 1
            self.device.request(
                "localNotification.add",
                {"alertBody": "Astronomy Picture of the Day Available", "applicationIconBadgeNumber": self.badge},
            )
        for completion_id in self.fetch_completions:
            self.complete_fetch(completion_id, result)
        self.fetch_completions = []

    def did_finish_events(self, params):
        if self.session_completion is not None:
            self.device.request("backgroundEventsCompletion", {"completionId": self.session_completion})
            self.session_completion = None

    def complete_fetch(self, completion_id, result):
        self.device.request("fetchCompletion", {"completionId": completion_id, "result": result})

    # Parse

    def save_installation(self, device_token):
        library = os.path.join(self.container["home"], "Library")
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
            "appIdentifier": os.environ["HARNESS_BUNDLE_ID"], "appName": "NASA TV", "channels": [""],
            "timeZone": "UTC",
        }
        request = urllib.request.Request(
            os.environ["HARNESS_PARSE_URL"] + "/classes/_Installation", data=json.dumps(body).encode(), method="POST",
            headers={"Content-Type": "application/json", "X-Parse-Application-Id": os.environ["HARNESS_PARSE_APPLICATION_ID"]},
        )
        if "HARNESS_PARSE_CLIENT_KEY" in os.environ:
            request.add_header("X-Parse-Client-Key", os.environ["HARNESS_PARSE_CLIENT_KEY"])
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    # The device's messages

    def handle(self, message):
        method, params = message.get("method"), message.get("params") or {}
        if method is None:  # an answer to one of our requests
            on_result = self.device.answers.pop(message.get("id"), None)
            if "error" in message:
                self.device.log(f"device refused a request: {message['error'].get('message')}")
            elif on_result:
                on_result(message.get("result"))
        elif method == "didReceiveRemoteNotification":
            self.did_receive_remote_notification(params)
        elif method == "performFetch":
            self.perform_fetch(params)
        elif method == "didFinishDownloadingTo":
            self.did_finish_downloading(params)
            self.device.respond(message["id"], {})
        elif method == "didCompleteWithError":
            self.did_complete(params)
        elif method == "handleEventsForBackgroundURLSession":
            self.handle_events_for_background_session(params)
        elif method == "urlSessionDidFinishEvents":
            self.did_finish_events(params)
        elif "id" in message:
            self.device.send({"id": message["id"], "error": {"code": -32601, "message": f"unknown method {method}"}})


def describe(error):
    """An NSError the way the Swift app logs it: code, the cancellation reason if any, the description."""
    if not isinstance(error, dict):
        return str(error)
    reason = error.get("backgroundTaskCancelledReason")
    reason = f", cancelled reason {reason}" if reason is not None else ""
    return f"error {error['code']}{reason}: {error['localizedDescription']}"


def main():
    path = os.environ.get("HARNESS_DEVICE_SOCKET")
    if not path:
        sys.exit("HARNESS_DEVICE_SOCKET is not set: this app runs under the PushHarness device simulator")
    device = Device(path)
    device.request("hello", {"protocolVersion": PROTOCOL_VERSION, "bundleId": os.environ["HARNESS_BUNDLE_ID"], "pid": os.getpid()})
    messages = device.messages()
    app = None
    for message in messages:
        if app is None:
            if "error" in message:
                sys.exit(f"device handshake failed: {message['error'].get('message')}")
            if message.get("id") != 1 or "result" not in message:
                continue  # nothing else comes before the handshake's answer
            device.answers.pop(1, None)
            app = NASATV(device, message["result"])
            app.did_finish_launching(message["result"]["launchReason"])
            if message["result"].get("remoteNotification"):
                app.did_receive_remote_notification(message["result"]["remoteNotification"])
            continue
        app.handle(message)


if __name__ == "__main__":
    main()
