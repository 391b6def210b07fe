"""An app for the replay-without-backend tests: once registered for remote notifications, it saves
its Parse installation and asks the backend named `notifier` (HARNESS_BACKEND_NOTIFIER_URL) to notify
it; it logs the backend's answer and each notification it receives."""

import os
import sys
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Fixtures", "apps"))
from harness_device import run, save_installation  # noqa: E402


class Notified:
    def __init__(self, device, hello):
        self.device = device
        self.container = hello["container"]

    def did_finish_launching(self, reason):
        self.device.request("registerForRemoteNotifications", {}, self.did_register)

    def did_register(self, result):
        token = result["deviceToken"]
        save_installation(self.container, token, "Notified")
        body = urllib.parse.urlencode({"token": token, "text": "hello"}).encode()
        url = os.environ["HARNESS_BACKEND_NOTIFIER_URL"] + "/notify"
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=10) as answer:
                self.device.log(f"the backend answered {answer.status} {answer.read().decode()}")
        except Exception as error:
            self.device.log(f"the backend could not be asked: {error}")

    def did_receive_remote_notification(self, params):
        self.device.log(f"received: {params['userInfo'].get('aps', {}).get('alert')}")
        self.device.request("fetchCompletion", {"completionId": params["completionId"], "result": "noData"})

    def handle(self, message):
        if message.get("method") == "didReceiveRemoteNotification":
            self.did_receive_remote_notification(message.get("params") or {})
            return True
        return False


run(Notified)
