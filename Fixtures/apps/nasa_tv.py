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

import os
import shutil

from harness_device import describe, run, save_installation

SESSION = "com.razeware.backgroundsession.dailyphoto"


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
            save_installation(self.container, result["deviceToken"], "NASA TV")
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

    # The device's messages

    def handle(self, message):
        """Handles one message from the device; False when the method is not one this app knows."""
        method, params = message.get("method"), message.get("params") or {}
        if method == "didReceiveRemoteNotification":
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
        else:
            return False
        return True


def main():
    run(NASATV)

if __name__ == "__main__":
    main()
