"""Drives FakeAPNs with aioapns, a provider client nobody here wrote, and prints what it saw.

Usage: aioapns_conformance.py PORT CA_FILE KEY_FILE KEY_ID TEAM_ID TOPIC DEVICE_TOKEN CONTROL_URL

Prints one JSON object per case: {"case", "status", "reason", "timestamp", "apnsId", "sentId"}. The
Swift test (FakeAPNsTests/AioapnsConformanceTests) holds the expectations; this script only reports.
"""

import asyncio
import json
import ssl
import sys
import time
import urllib.request
import uuid

import aioapns.connection
from aioapns import APNs, NotificationRequest, PushType

port, ca_file, key_file, key_id, team_id, topic, token, control_url = sys.argv[1:9]

# aioapns has no host or port option: point its protocol classes at the fake.
aioapns.connection.APNsDevelopmentClientProtocol.APNS_SERVER = "localhost"
aioapns.connection.APNsProductionClientProtocol.APNS_SERVER = "localhost"
aioapns.connection.APNsTLSClientProtocol.APNS_PORT = int(port)

key = open(key_file).read()


def client(key_id=key_id, topic=topic):
    return APNs(
        key=key,
        key_id=key_id,
        team_id=team_id,
        topic=topic,
        use_sandbox=True,
        ssl_context=ssl.create_default_context(cafile=ca_file),
        max_connection_attempts=1,
    )


def control(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(control_url + path, data=data, method=method)
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return response.status


def report(case, request, result):
    print(
        json.dumps(
            {
                "case": case,
                "status": result.status,
                "reason": result.description,
                "timestamp": result.timestamp,
                "apnsId": result.notification_id,
                "sentId": request.notification_id,
            }
        ),
        flush=True,
    )


class ClockAnHourAndAHalfAgo:
    """Stands in for the time module while aioapns makes a token, so the token's iat is stale."""

    @staticmethod
    def time():
        return time.time() - 5400


async def main():
    apns = client()
    silent = {"aps": {"content-available": 1}}

    async def send(case, apns=apns, **fields):
        fields.setdefault("device_token", token)
        fields.setdefault("message", silent)
        fields.setdefault("push_type", PushType.BACKGROUND)
        fields.setdefault("priority", 5)
        request = NotificationRequest(**fields)
        report(case, request, await apns.send_notification(request))

    await send("success")
    await send("success-alert", message={"aps": {"alert": "Hello"}}, push_type=PushType.ALERT, priority=10)
    await send("bad-device-token", device_token="00" * 32)
    await send("wrong-topic", apns_topic="com.example.other")
    await send("wrong-topic-suffix", apns_topic=topic + ".voip")
    await send("payload-too-large", message={"aps": {"content-available": 1}, "blob": "x" * 5000})
    await send("background-priority-10", priority=10)
    await send("bad-message-id", notification_id="not-a-uuid")
    await send("bad-collapse-id", collapse_key="c" * 65)

    control("POST", "/failures", {"deviceToken": token, "status": 429, "count": 1})
    await send("injected-429")
    control("POST", "/failures", {"deviceToken": token, "status": 503, "reason": "Shutdown", "count": 1})
    await send("injected-503-shutdown")
    control("POST", "/failures", {"deviceToken": token, "status": 500, "count": 1})
    await send("injected-500")
    await send("after-injected-failures")

    wrong_key = client(key_id="WRONGKEY99")
    await send("unknown-key-id", apns=wrong_key)

    real_time = aioapns.connection.time
    aioapns.connection.time = ClockAnHourAndAHalfAgo
    try:
        stale = client()
        await send("expired-provider-token", apns=stale)
    finally:
        aioapns.connection.time = real_time

    control("DELETE", "/devices/" + token)
    await send("unregistered")


asyncio.run(main())
