"""pushjack (PyPI), a legacy binary APNs client nobody here wrote, against FakeAPNs's gateway and
feedback service. Prints one JSON object: which tokens pushjack counts as sent and which as failed
with what error, for a bulk send and for an oversized payload, and what the feedback service listed.

    legacy_pushjack.py HOST GATEWAY_PORT FEEDBACK_PORT COMBINED_PEM TOKENS_JSON

TOKENS_JSON: {"bulk": [...], "oversized": [token]}. The bulk list is sent in one call: pushjack
writes it as one batch of command-2 frames, reads the error response for the first refused token,
and sends what came after it again, as Apple asked providers to. Each list ends with a token that
is refused, so pushjack's last wait for an error response ends as soon as the error comes (the
error timeout is only a safety net).
"""

import json
import sys

import pushjack.apns
from pushjack import APNSSandboxClient

# pushjack refuses a payload over 2,048 bytes itself; its check is switched off so that the oversized
# notification reaches the gateway, whose answer is the point.
pushjack.apns.validate_message = lambda message: None


def outcome(response):
    return {
        "successes": response.successes,
        "failures": {token: type(error).__name__ for token, error in response.token_errors.items()},
    }


def main():
    host, gateway_port, feedback_port, certificate, tokens = sys.argv[1:6]
    tokens = json.loads(tokens)
    client = APNSSandboxClient(certificate=certificate, default_error_timeout=60, default_retries=1)
    client.host, client.port = host, int(gateway_port)
    client.feedback_host, client.feedback_port = host, int(feedback_port)
    bulk = client.send(tokens["bulk"], {"alert": "Hello from PushChat"}, expiration=3600)
    client.close()
    oversized = client.send(tokens["oversized"], {"alert": "x" * 3000})
    client.close()
    expired = [{"token": token, "timestamp": timestamp} for token, timestamp in client.get_expired_tokens()]
    again = client.get_expired_tokens()
    print(json.dumps({"bulk": outcome(bulk), "oversized": outcome(oversized), "feedback": expired,
                      "feedbackAgain": len(again)}))


if __name__ == "__main__":
    main()
