#!/usr/bin/env python3
"""PushChat, the APNs tutorial's chat app (shared/seeds/apns-pushchat-tutorial.txt), over device protocol v1.

The screens, with the harness's stand-in for touches and the keyboard (`tap` and `type` steps):

- login: fields `nickname` and `code` (the secret code, the room's name); the button `Start!` posts
  JOIN to the server with the device's udid and push token, then shows the chat;
- chat (its title is the secret code): the field `message`, at most 190 bytes as the tutorial's
  compose screen allows (the counter shows what is left); `Send` posts MESSAGE, `Exit` posts LEAVE
  and goes back to the login screen.

At launch it registers for remote notifications; a token that changed since the user joined is sent
with UPDATE. A message pushed while the app is on screen is added to the chat (logged as
"received: …"); off screen, iOS shows it as a notification. The server's address comes from
HARNESS_BACKEND_PUSHCHAT_URL (the tutorial's ServerApiURL, `…:44447/api.php`).

Standard library only; run by the device as `python3 Fixtures/apps/pushchat.py`.
"""

import json
import os
import urllib.error
import urllib.parse
import urllib.request
import uuid

from harness_device import run

LIMIT = 190  # bytes: what is left of APNs's 256 after the payload's JSON around the text


class PushChat:
    def __init__(self, device, hello):
        self.device = device
        self.library = os.path.join(hello["container"]["home"], "Library")
        os.makedirs(self.library, exist_ok=True)
        self.state = self.load()
        self.token = None
        self.fields = {"nickname": "", "code": "", "message": ""}

    # The data model, kept in Library/ as the tutorial's DataModel keeps its messages in Documents/.

    def load(self):
        path = os.path.join(self.library, "pushchat.json")
        if os.path.exists(path):
            with open(path) as file:
                return json.load(file)
        return {"udid": str(uuid.uuid4()).upper(), "joined": None, "token": None, "messages": []}

    def save(self):
        with open(os.path.join(self.library, "pushchat.json"), "w") as file:
            json.dump(self.state, file)

    # The server API: form POSTs to api.php, a command in `cmd`.

    def post(self, command, **fields):
        """POSTs a command; its HTTP status and body, or None and the error when it could not be sent."""
        url = os.environ["HARNESS_BACKEND_PUSHCHAT_URL"] + "/api.php"
        body = urllib.parse.urlencode(dict(cmd=command, **fields)).encode()
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=10) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()
        except OSError as error:
            return None, str(error)

    # UIApplicationDelegate

    def did_finish_launching(self, reason):
        self.device.request("registerForRemoteNotifications", {}, self.did_register)
        self.show()

    def did_register(self, result):
        self.token = result["deviceToken"]
        joined = self.state["joined"]
        if joined and self.state["token"] != self.token:
            status, body = self.post("update", udid=self.state["udid"], token=self.token)
            self.device.log(f"update: {status} {body}".rstrip())
        self.state["token"] = self.token
        self.save()

    def did_receive_remote_notification(self, params):
        alert = params["userInfo"].get("aps", {}).get("alert")
        if alert:
            self.state["messages"].append({"from": "them", "text": alert})
            self.save()
            self.device.log(f"received: {alert}")
        self.device.request("fetchCompletion", {"completionId": params["completionId"], "result": "noData"})

    # The screens

    def show(self):
        joined = self.state["joined"]
        if joined is None:
            self.device.notify("ui.state", {"screen": "login", "button": "Start!"})
        else:
            left = LIMIT - len(self.fields["message"].encode())
            self.device.notify("ui.state", {"screen": "chat", "title": joined["code"], "button": f"Send ({left} left)"})

    def typed(self, field, text):
        if field not in self.fields:
            self.device.log(f"there is no field {field} on this screen")
            return
        self.fields[field] = text
        self.show()

    def tapped(self, button):
        if button == "Start!":
            self.join()
        elif button == "Send":
            self.send()
        elif button == "Exit":
            self.leave()
        else:
            self.device.log(f"there is no button {button} on this screen")

    def join(self):
        name, code = self.fields["nickname"], self.fields["code"]
        if not name or not code:
            self.device.log("fill in your nickname and the secret code")
            return
        status, body = self.post("join", udid=self.state["udid"], token=self.token or "0", name=name, code=code)
        if status != 200:
            self.device.log(f"There was an error communicating with the server: {status} {body}".rstrip())
            return
        self.state["joined"] = {"name": name, "code": code}
        self.save()
        self.device.log(f"joined {code} as {name}")
        self.show()

    def send(self):
        text = self.fields["message"]
        if self.state["joined"] is None or not text:
            self.device.log("nothing to send")
            return
        status, body = self.post("message", udid=self.state["udid"], text=text)
        if status != 200:
            self.device.log(f"the server refused the message: {status} {body}".rstrip())
            return
        self.state["messages"].append({"from": "me", "text": text})
        self.save()
        self.fields["message"] = ""
        self.device.log(f"sent: {text}")
        self.show()

    def leave(self):
        status, body = self.post("leave", udid=self.state["udid"])
        if status != 200:
            self.device.log(f"There was an error communicating with the server: {status} {body}".rstrip())
            return
        self.state["joined"] = None
        self.save()
        self.device.log("left the chat")
        self.show()

    # The device's messages

    def handle(self, message):
        method, params = message.get("method"), message.get("params") or {}
        if method == "didReceiveRemoteNotification":
            self.did_receive_remote_notification(params)
        elif method == "ui.tap":
            self.tapped(params["button"])
        elif method == "ui.type":
            self.typed(params["field"], params["text"])
        else:
            return False
        return True


if __name__ == "__main__":
    run(PushChat)
