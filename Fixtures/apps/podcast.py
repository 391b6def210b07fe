#!/usr/bin/env python3
"""objc.io's iOS 7 multitasking example as a podcast app, in Python over device protocol v1.

A silent push carries a `content-id`; the app queues `/downloads/<id>.mp3` in the background session
`io.objc.backgroundTransferExample` with the task description "Podcast Episode <id>", and calls the
fetch completion handler at once. The transfer runs outside the app; when it ends the app is woken (or
relaunched), rejoins the session, keeps the handler of handleEventsForBackgroundURLSession in a
dictionary by session identifier, moves the file into Documents/, tells the user, and calls the handler
when urlSessionDidFinishEvents comes, as the article's completionHandlerDictionary does.
"""

import os
import shutil

from harness_device import describe, run, save_installation

SESSION = "io.objc.backgroundTransferExample"


class Podcasts:
    def __init__(self, device, hello):
        self.device = device
        self.container = hello["container"]
        self.badge = hello["badge"]
        self.completion_handlers = {}  # session identifier -> handleEvents completion id
        self.episodes = {}  # task identifier -> content id
        self.next_task = 1

    def did_finish_launching(self, reason):
        self.device.log(f"podcasts launched ({reason})")
        self.rejoin_session()
        self.device.request("registerForRemoteNotifications", {}, self.did_register)

    def rejoin_session(self):
        """`backgroundURLSession`: one session object per identifier, created again in every process."""
        self.device.request("session.create", {"identifier": SESSION, "background": True})

    def did_register(self, result):
        try:
            save_installation(self.container, result["deviceToken"], "Podcasts")
            self.device.log("installation saved")
        except Exception as error:
            self.device.log(f"installation not saved: {error}")

    def did_receive_remote_notification(self, params):
        content_id = params["userInfo"].get("content-id")
        self.device.log(f"Received remote notification with content-id {content_id}")
        if content_id is None:
            self.device.request("fetchCompletion", {"completionId": params["completionId"], "result": "noData"})
            return
        task = self.next_task
        self.next_task += 1
        self.episodes[task] = int(content_id)
        url = f"{os.environ['HARNESS_MEDIA_URL']}/downloads/{int(content_id)}.mp3"
        self.device.request(
            "downloadTask.resume",
            {"session": SESSION, "taskIdentifier": task, "url": url,
             "taskDescription": f"Podcast Episode {int(content_id)}"},
        )
        self.device.request("fetchCompletion", {"completionId": params["completionId"], "result": "newData"})

    def handle_events(self, params):
        identifier = params["identifier"]
        self.device.log(f"Rejoining session with identifier {identifier}")
        if identifier in self.completion_handlers:
            self.device.log("Error: Got multiple handlers for a single session identifier. This should not happen.")
        self.completion_handlers[identifier] = params["completionId"]
        self.rejoin_session()

    def did_finish_downloading(self, params):
        # A relaunched process does not know the task: the file name says which episode it is.
        episode = self.episodes.get(params["taskIdentifier"])
        name = f"{episode}.mp3" if episode is not None else os.path.basename(params["location"])
        documents = self.container["documents"]
        os.makedirs(documents, exist_ok=True)
        shutil.move(params["location"], os.path.join(documents, name))
        self.device.log(f"downloadTask {params['taskIdentifier']} didFinishDownloadingTo {name}")

    def did_complete(self, params):
        episode = self.episodes.pop(params["taskIdentifier"], None)
        if params.get("error"):
            self.device.log(f"episode download failed: {describe(params['error'])}")
            return
        self.badge += 1
        title = f"Podcast Episode {episode}" if episode is not None else "A podcast episode"
        self.device.request(
            "localNotification.add", {"alertBody": f"{title} is ready", "applicationIconBadgeNumber": self.badge})

    def did_finish_events(self, params):
        completion = self.completion_handlers.pop(params["session"], None)
        if completion is not None:
            self.device.log(f"Calling completion handler for session {params['session']}")
            self.device.request("backgroundEventsCompletion", {"completionId": completion})

    def handle(self, message):
        """Handles one message from the device; False when the method is not one this app knows."""
        method, params = message.get("method"), message.get("params") or {}
        if method == "didReceiveRemoteNotification":
            self.did_receive_remote_notification(params)
        elif method == "handleEventsForBackgroundURLSession":
            self.handle_events(params)
        elif method == "didFinishDownloadingTo":
            self.did_finish_downloading(params)
            self.device.respond(message["id"], {})
        elif method == "didCompleteWithError":
            self.did_complete(params)
        elif method == "urlSessionDidFinishEvents":
            self.did_finish_events(params)
        else:
            return False
        return True


if __name__ == "__main__":
    run(Podcasts)
