extension Scaffold {
    /// The Python app `harness init` writes: standard library only, one file, the whole device protocol
    /// a silent-push download needs, commented for a reader who will write their own.
    static let pythonApp = #"""
        #!/usr/bin/env python3
        """An app under test for PushHarness, in one file and Python's standard library.

        It plays an iOS app through the device protocol (PushHarness's docs/device-protocol.md): JSON-RPC
        2.0, one JSON message per line, on the Unix socket named by HARNESS_DEVICE_SOCKET. What it does is
        what the harness.yml beside it checks:

        - at launch: creates a background URL session, registers for remote notifications and saves its
          Parse installation with the device token it is given;
        - on a silent push (content-available: 1): downloads today's file in the background session,
          moves it to Library/Caches/today.json when the download finishes, then posts a local
          notification and calls the push's completion handler with newData. A download that takes too
          long for the push's background time (backgroundPushSeconds in the hello answer) completes the
          push half way through that time with noData and goes on in the session: when it ends, iOS wakes or relaunches the app
          for the session (handleEventsForBackgroundURLSession), which posts the notification then.

        Replace it with your own app: any language that can read and write lines on a socket will do.
        `--forget-notification` builds in a bug (no local notification) for the failing variant.
        """

        import json
        import os
        import select
        import shutil
        import socket
        import sys
        import time
        import urllib.request
        import uuid

        SESSION = "com.example.background-session"
        FORGET_NOTIFICATION = "--forget-notification" in sys.argv
        # The harness's services are on this machine: never through a proxy a CI runner may set.
        HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


        class Device:
            """The socket to the simulated iPhone: requests with ids, notifications, answers."""

            def __init__(self, path):
                self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.socket.connect(path)
                self.buffer = b""
                self.next_id = 1
                self.waiting = {}  # request id -> what to do with its result

            def send(self, message):
                message["jsonrpc"] = "2.0"
                self.socket.sendall(json.dumps(message).encode() + b"\n")

            def request(self, method, params, then=None):
                self.waiting[self.next_id] = then
                self.send({"id": self.next_id, "method": method, "params": params})
                self.next_id += 1

            def respond(self, request_id, result):
                self.send({"id": request_id, "result": result})

            def log(self, text):
                self.send({"method": "log", "params": {"message": text}})

            def messages(self, tick):
                """Every message from the device until it closes the socket; `tick` is called at least
                every half second in between (for the app's own deadlines)."""
                while True:
                    while b"\n" in self.buffer:
                        line, self.buffer = self.buffer.split(b"\n", 1)
                        if line.strip():
                            yield json.loads(line)
                    tick()
                    if not select.select([self.socket], [], [], 0.5)[0]:
                        continue
                    chunk = self.socket.recv(65536)
                    if not chunk:  # the device closed the socket: the app was terminated
                        return
                    self.buffer += chunk


        class App:
            def __init__(self, device, hello):
                self.device = device
                self.container = hello["container"]  # home, caches, documents, tmp
                # A push's background time, in real seconds (30 unless the scenario scales time).
                self.budget = hello.get("backgroundPushSeconds") or 30
                self.completions = []  # (completion id, deadline) of pushes waiting for the download
                self.session_completion = None  # handleEventsForBackgroundURLSession's handler

            # UIApplicationDelegate

            def did_finish_launching(self):
                self.device.request("session.create", {"identifier": SESSION, "background": True})
                self.device.request("registerForRemoteNotifications", {}, self.did_register)

            def did_register(self, result):
                self.save_installation(result["deviceToken"])
                self.device.log("installation saved")

            def did_receive_remote_notification(self, params):
                if params["userInfo"].get("aps", {}).get("content-available") != 1:
                    self.device.request("fetchCompletion", {"completionId": params["completionId"], "result": "noData"})
                    return
                # Completed half way through its time if the download is not done by then (tick below): a
                # busy machine may be slow to get to it, and iOS kills an app that overruns.
                self.completions.append((params["completionId"], time.monotonic() + 0.5 * self.budget))
                url = os.environ["HARNESS_MEDIA_URL"] + "/daily/today.json"
                # A task number of this process's own: tasks outlive the process.
                task = os.getpid() * 1000 + len(self.completions)
                self.device.request("downloadTask.resume", {"session": SESSION, "taskIdentifier": task, "url": url})

            def tick(self):
                """Completes the pushes whose background time is nearly spent; the session goes on."""
                now = time.monotonic()
                for completion, deadline in [c for c in self.completions if c[1] <= now]:
                    self.device.request("fetchCompletion", {"completionId": completion, "result": "noData"})
                self.completions = [c for c in self.completions if c[1] > now]

            # URLSessionDownloadDelegate

            def did_finish_downloading(self, params):
                os.makedirs(self.container["caches"], exist_ok=True)
                shutil.move(params["location"], os.path.join(self.container["caches"], "today.json"))

            def did_complete(self, params):
                result = "failed" if params.get("error") else "newData"
                if result == "newData" and not FORGET_NOTIFICATION:
                    self.device.request("localNotification.add", {"alertBody": "Today's stories are here"})
                for completion, _ in self.completions:
                    self.device.request("fetchCompletion", {"completionId": completion, "result": result})
                self.completions = []

            # The session's events after a wake or relaunch for it (a download that outlived the push).

            def handle_events_for_background_session(self, params):
                self.device.request("session.create", {"identifier": params["identifier"], "background": True})
                self.session_completion = params["completionId"]

            def did_finish_events(self):
                if self.session_completion is not None:
                    self.device.request("backgroundEventsCompletion", {"completionId": self.session_completion})
                    self.session_completion = None

            # Parse: PFInstallation.saveInBackground, as its REST call.

            def save_installation(self, token):
                # One installation id for the app's life, kept in its container (a relaunch updates it).
                kept = os.path.join(self.container["documents"], "installation-id")
                if not os.path.exists(kept):
                    os.makedirs(self.container["documents"], exist_ok=True)
                    with open(kept, "w") as file:
                        file.write(str(uuid.uuid4()))
                with open(kept) as file:
                    installation = file.read()
                body = {
                    "deviceType": "ios", "deviceToken": token, "installationId": installation,
                    "appIdentifier": os.environ["HARNESS_BUNDLE_ID"], "channels": [""],
                }
                request = urllib.request.Request(
                    os.environ["HARNESS_PARSE_URL"] + "/classes/_Installation", data=json.dumps(body).encode(),
                    method="POST", headers={
                        "Content-Type": "application/json",
                        "X-Parse-Application-Id": os.environ["HARNESS_PARSE_APPLICATION_ID"],
                    },
                )
                if "HARNESS_PARSE_CLIENT_KEY" in os.environ:
                    request.add_header("X-Parse-Client-Key", os.environ["HARNESS_PARSE_CLIENT_KEY"])
                with HTTP.open(request, timeout=10) as answer:
                    answer.read()

            def handle(self, message):
                method, params = message.get("method"), message.get("params") or {}
                if method == "didReceiveRemoteNotification":
                    self.did_receive_remote_notification(params)
                elif method == "didFinishDownloadingTo":
                    self.did_finish_downloading(params)
                    self.device.respond(message["id"], {})  # the file is moved: the device may delete it
                elif method == "didCompleteWithError":
                    self.did_complete(params)
                elif method == "handleEventsForBackgroundURLSession":
                    self.handle_events_for_background_session(params)
                elif method == "urlSessionDidFinishEvents":
                    self.did_finish_events()
                elif "id" in message:  # a request this app does not know: JSON-RPC's "method not found"
                    self.device.send({"id": message["id"], "error": {"code": -32601, "message": f"unknown method {method}"}})


        def main():
            device = Device(os.environ["HARNESS_DEVICE_SOCKET"])
            device.request("hello", {"protocolVersion": 1, "bundleId": os.environ["HARNESS_BUNDLE_ID"], "pid": os.getpid()})
            app = None
            for message in device.messages(lambda: app and app.tick()):
                if app is None:  # the first answer is the handshake's
                    if "error" in message:
                        sys.exit(f"the device refused the handshake: {message['error']['message']}")
                    app = App(device, message["result"])
                    app.did_finish_launching()
                    if message["result"].get("remoteNotification"):  # launched by a push
                        app.did_receive_remote_notification(message["result"]["remoteNotification"])
                elif "method" not in message:  # an answer to one of our requests
                    then = device.waiting.pop(message.get("id"), None)
                    if "error" in message:
                        device.log(f"the device refused a request: {message['error']['message']}")
                    elif then:
                        then(message.get("result"))
                else:
                    app.handle(message)


        if __name__ == "__main__":
            main()

        """#
}
