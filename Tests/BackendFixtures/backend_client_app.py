"""An app for the harness's backend tests: once launched, it asks the backend named `api` for
/hello at HARNESS_BACKEND_API_URL and logs the answer through the device protocol."""

import os
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Fixtures", "apps"))
from harness_device import run  # noqa: E402


class Client:
    def __init__(self, device, hello):
        self.device = device

    def did_finish_launching(self, reason):
        url = os.environ["HARNESS_BACKEND_API_URL"] + "/hello"
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                self.device.log(f"backend said: {answer.read().decode()}")
        except Exception as error:
            self.device.log(f"backend unreachable at {url}: {error}")

    def did_receive_remote_notification(self, notification):
        pass

    def handle(self, message):
        return False


run(Client)
