"""The Parse REST guide's own installation and push examples, sent as its Python examples send them.

    parse_rest_guide.py BASE_URL APP_ID MASTER_KEY DEVICE_TOKEN APP_IDENTIFIER [REST_API_KEY]

BASE_URL is the mount, e.g. http://127.0.0.1:1337/parse. DEVICE_TOKEN is a 64-hex token the fake
APNs accepts for the topic APP_IDENTIFIER. REST_API_KEY is sent as X-Parse-REST-API-Key where the guide
sends it (any value does when the server has no client keys).

The requests are those of docs.parseplatform.org/rest/guide (parse-community/docs fb6e96b,
_includes/rest/push-notifications.md), sections "Installations" (Uploading, Retrieving, Updating,
Querying, Deleting) and "Sending Pushes", "Sending Options", "Scheduling Pushes": `http.client`, one
connection per request, JSON bodies, the guide's bodies with its sample tokens replaced by DEVICE_TOKEN
and a made-up second token, and `appIdentifier` added to iOS installations (an APNs provider with a
topic sends nothing to an installation without it). The answers expected are Parse Server 7.4's
(parse-server 7ea2a29: RestWrite.js, ClassesRouter.js, PushRouter.js, PushController.js,
StatusHandler.js); where the guide disagrees with Parse Server the check says so: `/push` needs the
master key, a push needs `channels` or `where`, and Location names /classes/_Installation.

The script assumes no other installation holds its tokens (it deletes any that do first) and that none
but its own are subscribed to Giants, Mets or Indians. It prints one JSON object,
{"checks": [{"name", "ok", "detail"}...]}, and exits 0; the Swift test judges the checks.
"""
import datetime
import http.client
import json
import re
import sys
import time
import urllib.parse

from parse_checks import check, checks, decoded, step, until_done  # noqa: E402

BASE_URL, APP_ID, MASTER_KEY, DEVICE_TOKEN, APP_IDENTIFIER = sys.argv[1:6]
REST_API_KEY = sys.argv[6] if len(sys.argv) > 6 else "rest-api-key"
_url = urllib.parse.urlsplit(BASE_URL)
HOST, PORT, MOUNT = _url.hostname, _url.port or 80, _url.path.rstrip("/")

TOKEN = DEVICE_TOKEN.lower()
# The guide's second sample token, sent in capitals: Parse lower-cases a 64-character token.
SECOND_TOKEN = "FEDCBA9876543210FEDCBA9876543210FEDCBA9876543210FEDCBA9876543210"
if SECOND_TOKEN.lower() == TOKEN:
    SECOND_TOKEN = "ABCDEF0123456789" * 4
# The guide's own first sample token, used where a token that belongs to nobody is wanted.
OTHER_TOKEN = "0123456789abcdef" * 4 if TOKEN != "0123456789abcdef" * 4 else "89abcdef01234567" * 4
# The guide's FCM sample token, verbatim (not 64 characters, so not lower-cased).
ANDROID_TOKEN = "APA91bFMvbrGg4cp3KUV_7dhU1gmwE_..."

ISO_DATE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
OBJECT_ID = re.compile(r"^[A-Za-z0-9]{10}$")
NOT_FOUND = {"code": 101, "error": "Object not found."}
NEEDS_TARGET = {"code": 115, "error": 'Sending a push requires either "channels" or a "where" query.'}

ids = {}


class Reply:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw
        try:
            self.body = json.loads(raw)
        except ValueError:
            self.body = raw.decode("utf-8", "replace")
        # The body when it is a JSON object, else {}: for .get() on answers that may be anything.
        self.fields = self.body if isinstance(self.body, dict) else {}

    def __repr__(self):
        return "%d %s" % (self.status, self.raw.decode("utf-8", "replace")[:1500])


def call(method, path, body=None, key="rest", params=None):
    """One request as the guide's Python examples make it: a new connection, the Parse headers (the REST
    key, or the master key in its place where the guide or Parse Server needs it), a JSON body."""
    headers = {"X-Parse-Application-Id": APP_ID}
    if key == "master":
        headers["X-Parse-Master-Key"] = MASTER_KEY
    else:
        headers["X-Parse-REST-API-Key"] = REST_API_KEY
    if body is not None:
        headers["Content-Type"] = "application/json"
    if params:
        path += "?" + urllib.parse.urlencode(params)
    connection = http.client.HTTPConnection(HOST, PORT, timeout=30)
    connection.connect()
    try:
        connection.request(method, MOUNT + path, json.dumps(body) if body is not None else "", headers)
        response = connection.getresponse()
        return Reply(response.status, response.headers, response.read())
    finally:
        connection.close()


def get_installation(object_id):
    return call("GET", "/installations/" + object_id)


def push_status(status_id, wait=True, seconds=30.0):
    """The _PushStatus row (master key); with wait, polled until it is succeeded or failed."""
    fetch = lambda: call("GET", "/classes/_PushStatus/" + status_id, key="master")  # noqa: E731
    if not wait:
        return fetch()
    return until_done(
        fetch, lambda reply: reply.status != 200 or not isinstance(reply.body, dict)
        or reply.fields.get("status") in ("succeeded", "failed"), seconds)


def push(name, body, sent=None, failed=0, query=None, wait=True):
    """POST /push with the master key, then the _PushStatus row. Checks the reply, the row's query,
    payload and source, and (with wait) that it succeeded with `sent` sent and `failed` failed.
    Returns the final row (a dict, empty if there is none)."""
    reply = call("POST", "/push", body, key="master")
    status_id = reply.headers.get("X-Parse-Push-Status-Id") or ""
    if not check(name + ": 200 {\"result\": true} with X-Parse-Push-Status-Id",
                 reply.status == 200 and reply.body == {"result": True} and status_id, reply):
        return {}
    row = push_status(status_id, wait=wait)
    if not check(name + ": _PushStatus readable with the master key", row.status == 200 and isinstance(row.body, dict),
                 row):
        return {}
    status = row.body
    if query is None:
        query = body["where"] if "where" in body else {"channels": {"$in": body.get("channels")}}
    check(name + ": _PushStatus query, payload and source",
          decoded(status.get("query")) == query and decoded(status.get("payload")) == body.get("data")
          and status.get("source") == "rest",
          {k: status.get(k) for k in ("query", "payload", "source")})
    if wait:
        numbers = (status.get("status"), status.get("numSent"), status.get("numFailed", 0))
        check(name + ": succeeded, numSent %s, numFailed %s" % (sent, failed),
              numbers == ("succeeded", sent, failed), "status, numSent, numFailed = %r" % (numbers,))
    return status


def iso_seconds(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


# --- Setup: nothing left from an earlier run holds this script's tokens -------------------------------

def setup():
    tokens = [TOKEN, SECOND_TOKEN.lower(), OTHER_TOKEN, ANDROID_TOKEN]
    found = call("GET", "/installations", key="master",
                 params={"where": json.dumps({"deviceToken": {"$in": tokens}})})
    deleted = [call("DELETE", "/installations/" + row["objectId"], key="master").status
               for row in found.fields.get("results", [])]
    check("setup: earlier installations with these tokens deleted",
          found.status == 200 and all(status == 200 for status in deleted), "%r, deleted %r" % (found, deleted))


# --- Installations: Uploading Installation Data -------------------------------------------------------

def upload():
    # The guide's first example: an iOS token subscribed to the broadcast channel "".
    reply = call("POST", "/installations", {
        "deviceType": "ios",
        "deviceToken": DEVICE_TOKEN,
        "channels": [
            ""
        ],
        "appIdentifier": APP_IDENTIFIER,
    })
    body = reply.fields
    object_id = body.get("objectId", "")
    location = reply.headers.get("Location") or ""
    check("upload ios: 201 {objectId, createdAt}",
          reply.status == 201 and set(body) == {"objectId", "createdAt"} and OBJECT_ID.match(object_id)
          and ISO_DATE.match(body.get("createdAt", "")), reply)
    # The guide shows .../parse/installations/<id>; Parse Server answers .../classes/_Installation/<id>.
    check("upload ios: Location is the new object's URL",
          location.startswith("http") and location.endswith("/classes/_Installation/" + object_id), location)
    ids["ios"], ids["ios createdAt"], ids["location"] = object_id, body.get("createdAt"), location

    # The FCM example, verbatim.
    reply = call("POST", "/installations", {
        "deviceType": "android",
        "pushType": "gcm",
        "deviceToken": ANDROID_TOKEN,
        "channels": [
            ""
        ]
    })
    check("upload android (gcm): 201", reply.status == 201 and OBJECT_ID.match(str(reply.fields.get("objectId"))), reply)
    ids["android"] = reply.fields.get("objectId", "")

    # The second installation of the guide's query example.
    reply = call("POST", "/installations", {
        "deviceType": "ios",
        "deviceToken": SECOND_TOKEN,
        "channels": [
            ""
        ],
        "appIdentifier": APP_IDENTIFIER,
    })
    check("upload second ios: 201", reply.status == 201 and OBJECT_ID.match(str(reply.fields.get("objectId"))), reply)
    ids["second"] = reply.fields.get("objectId", "")


# --- Retrieving Installations ---------------------------------------------------------------------------

def retrieve():
    # "sending a GET request to the URL returned in the location header", with the REST key.
    path = urllib.parse.urlsplit(ids["location"]).path
    reply = call("GET", path[len(MOUNT):])
    created = ids["ios createdAt"]
    expected = {"objectId": ids["ios"], "deviceType": "ios", "deviceToken": TOKEN, "channels": [""],
                "appIdentifier": APP_IDENTIFIER, "createdAt": created, "updatedAt": created}
    check("retrieve ios at the Location URL: the fields saved plus objectId, createdAt, updatedAt",
          reply.status == 200 and reply.body == expected, "%r, expected %r" % (reply, expected))

    reply = get_installation(ids["second"])
    check("retrieve second ios: the 64-character token lower-cased",
          reply.status == 200 and reply.fields.get("deviceToken") == SECOND_TOKEN.lower(), reply)

    reply = get_installation(ids["android"])
    check("retrieve android: pushType kept, a token not 64 characters long kept as sent",
          reply.status == 200 and reply.fields.get("pushType") == "gcm"
          and reply.fields.get("deviceToken") == ANDROID_TOKEN and reply.fields.get("deviceType") == "android", reply)


# --- Updating Installations -----------------------------------------------------------------------------

def update():
    # The guide's PUT, which repeats deviceType and deviceToken and adds the channel "foo". The answer
    # expected is the guide's. Parse Server 7.4's code does otherwise for an installation that has no
    # installationId: the row is its own single token match, so handleInstallation destroys "the id
    # match" (the same row) before updating it, and the PUT ends in 404 code 101 with the row gone
    # (RestWrite.js ~L1339; derived from the code, cf. parse-community/Parse-SDK-Flutter#620).
    reply = call("PUT", "/installations/" + ids["ios"], {
        "deviceType": "ios",
        "deviceToken": DEVICE_TOKEN,
        "channels": [
            "",
            "foo"
        ]
    })
    check("update ios: 200 {updatedAt}",
          reply.status == 200 and isinstance(reply.body, dict) and set(reply.body) == {"updatedAt"}
          and ISO_DATE.match(reply.body["updatedAt"]) and reply.body["updatedAt"] >= ids["ios createdAt"], reply)
    reply = get_installation(ids["ios"])
    check("update ios: channels now [\"\", \"foo\"]", reply.status == 200 and reply.fields.get("channels") == ["", "foo"],
          reply)

    # "You can only update the deviceToken field of an Installation object if contains a non-nil
    # installationId field": this one has none.
    reply = call("PUT", "/installations/" + ids["ios"], {"deviceToken": OTHER_TOKEN})
    check("update ios: changing the deviceToken without an installationId is 136",
          reply.status == 400 and reply.body == {"code": 136, "error": "deviceToken may not be changed in this operation"},
          reply)


# --- Querying Installations -----------------------------------------------------------------------------

def query():
    mine = {ids["ios"], ids["second"], ids["android"]}
    reply = call("GET", "/installations", key="master")
    listed = {row.get("objectId") for row in reply.fields.get("results", [])}
    check("query: all installations with the master key", reply.status == 200 and mine <= listed,
          "%r; ours %r" % (reply, mine))

    reply = call("GET", "/installations")
    check("query: with the REST key only is 119",
          reply.status == 400 and reply.body == {
              "code": 119, "error": "Clients aren't allowed to perform the find operation on the installation collection."},
          reply)

    # "By doing an array query over channels ... you can find the set of devices subscribed to a given
    # push channel" (queries.md's style: where as a JSON parameter).
    reply = call("GET", "/installations", key="master", params={"where": json.dumps({"channels": "foo"})})
    results = reply.fields.get("results", [])
    check("query: where channels contains \"foo\" finds the first ios installation and none of the others",
          reply.status == 200 and ids["ios"] in {r.get("objectId") for r in results}
          and not ({r.get("objectId") for r in results} & {ids["second"], ids["android"]})
          and all("foo" in r.get("channels", []) for r in results), reply)

    where = {"deviceType": "ios", "deviceToken": {"$in": [TOKEN, SECOND_TOKEN.lower()]}}
    reply = call("GET", "/installations", key="master", params={"where": json.dumps(where)})
    results = reply.fields.get("results", [])
    check("query: where deviceType ios and deviceToken $in finds both ios installations",
          reply.status == 200 and sorted(r.get("objectId") for r in results) == sorted([ids["ios"], ids["second"]]),
          reply)

    reply = call("GET", "/installations", key="master", params={"where": json.dumps(where), "count": 1, "limit": 0})
    check("query: count=1&limit=0 is {\"results\": [], \"count\": 2}",
          reply.status == 200 and reply.body == {"results": [], "count": 2}, reply)


# --- Deleting Installations -----------------------------------------------------------------------------

def delete_android():
    reply = call("DELETE", "/installations/" + ids["android"])
    check("delete with the REST key only is 119",
          reply.status == 400 and reply.body == {
              "code": 119, "error": "Clients aren't allowed to perform the delete operation on the installation collection."},
          reply)
    reply = call("DELETE", "/installations/" + ids["android"], key="master")
    check("delete android with the master key: 200 {}", reply.status == 200 and reply.body == {}, reply)
    reply = get_installation(ids["android"])
    check("delete android: a get is then 404 code 101", reply.status == 404 and reply.body == NOT_FOUND, reply)


# --- Sending Pushes: Using Channels ---------------------------------------------------------------------

GIANTS_AND_METS = {
    "channels": [
        "Giants",
        "Mets"
    ],
    "data": {
        "alert": "The Giants won against the Mets 2-3."
    }
}


def channels():
    reply = call("PUT", "/installations/" + ids["ios"], {
        "channels": [
            "Giants"
        ]
    })
    check("subscribe to Giants: 200 {updatedAt}", reply.status == 200 and set(reply.fields) == {"updatedAt"}, reply)
    reply = get_installation(ids["ios"])
    check("subscribe to Giants: channels now [\"Giants\"]", reply.fields.get("channels") == ["Giants"], reply)

    # The guide sends pushes with the REST key; Parse Server wants the master key.
    reply = call("POST", "/push", GIANTS_AND_METS)
    check("push with the REST key only (as the guide shows it) is 403",
          reply.status == 403 and reply.body == {"error": "unauthorized: master key is required"}, reply)
    push("push to Giants and Mets", GIANTS_AND_METS, sent=1)


# --- Using Advanced Targeting ---------------------------------------------------------------------------

def targeting():
    reply = call("PUT", "/installations/" + ids["ios"], {
        "scores": True,
        "gameResults": True,
        "injuryReports": True
    })
    check("save installation data (scores, gameResults, injuryReports): 200", reply.status == 200, reply)
    reply = call("PUT", "/installations/" + ids["ios"], {
        "user": {
            "__type": "Pointer",
            "className": "_User",
            "objectId": "vmRZXZ1Dvo"
        }
    })
    check("save a _User pointer on the installation: 200", reply.status == 200, reply)
    reply = get_installation(ids["ios"])
    body = reply.fields
    check("the installation holds the custom fields and the pointer",
          (body.get("scores"), body.get("gameResults"), body.get("injuryReports")) == (True, True, True)
          and body.get("user") == {"__type": "Pointer", "className": "_User", "objectId": "vmRZXZ1Dvo"}, reply)

    push("push to where injuryReports", {
        "where": {
            "injuryReports": True
        },
        "data": {
            "alert": "Willie Hayes injured by own pop fly."
        }
    }, sent=1)
    push("push to where channels Giants and scores", {
        "where": {
            "channels": "Giants",
            "scores": True
        },
        "data": {
            "alert": "The Giants scored a run! The score is now 2-2."
        }
    }, sent=1)

    # Parse Server refuses both at once (the guide folds channels into where instead).
    reply = call("POST", "/push", {"channels": ["Giants"], "where": {"scores": True},
                                   "data": {"alert": "both"}}, key="master")
    check("push with channels and where is 115",
          reply.status == 400 and reply.body == {"code": 115, "error": "Channels and query can not be set at the same time."},
          reply)


# --- Sending Options: Customizing your Notifications ----------------------------------------------------

def customizing():
    reply = call("PUT", "/installations/" + ids["ios"], {"channels": ["Giants", "Mets"]})
    check("subscribe to Mets as well: 200", reply.status == 200, reply)
    before = get_installation(ids["ios"]).fields.get("badge", 0)
    push("push with badge Increment, sound and title to Mets", {
        "channels": [
            "Mets"
        ],
        "data": {
            "alert": "The Mets scored! The game is now tied 1-1.",
            "badge": "Increment",
            "sound": "cheering.caf",
            "title": "Mets Score!"
        }
    }, sent=1)
    # Parse Server increments the stored badge of every installation the push targets, before sending.
    reply = get_installation(ids["ios"])
    check("badge Increment: the installation's badge went up by 1",
          reply.status == 200 and reply.fields.get("badge") == before + 1, "%r, before %r" % (reply, before))

    push("push with custom data to Indians (no subscribers)", {
        "channels": [
            "Indians"
        ],
        "data": {
            "action": "com.example.UPDATE_STATUS",
            "alert": "Ricky Vaughn was injured during the game last night!",
            "name": "Vaughn",
            "newsItem": "Man bites dog"
        }
    }, sent=0)


# --- Setting an Expiration Date -------------------------------------------------------------------------

def expiration():
    # The guide's two bodies have neither channels nor where: Parse Server refuses them.
    verbatim = {
        "expiration_time": "2015-03-19T22:05:08Z",
        "data": {
            "alert": "Season tickets on sale until March 19, 2015"
        }
    }
    reply = call("POST", "/push", verbatim, key="master")
    check("expiration_time example verbatim (no channels, no where) is 115", reply.status == 400
          and reply.body == NEEDS_TARGET, reply)
    reply = call("POST", "/push", {
        "push_time": "2015-03-13T22:05:08Z",
        "expiration_interval": 518400,
        "data": {
            "alert": "Season tickets on sale until March 19, 2015"
        }
    }, key="master")
    check("expiration_interval example verbatim (no channels, no where) is 115", reply.status == 400
          and reply.body == NEEDS_TARGET, reply)

    # "To expire the notification exactly 1 week from now", sent to Giants. Parse Server keeps the
    # expiry in _PushStatus.expiry as epoch milliseconds.
    week = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(days=7)
    status = push("push with expiration_time a week ahead (ISO)", {
        "channels": ["Giants"],
        "expiration_time": iso_seconds(week),
        "data": {
            "alert": "Season tickets on sale until next week"
        }
    }, sent=1)
    check("expiration_time (ISO): _PushStatus.expiry is its epoch milliseconds",
          status.get("expiry") == int(week.timestamp()) * 1000, "expiry %r, expected %r"
          % (status.get("expiry"), int(week.timestamp()) * 1000))

    seconds = int(week.timestamp())
    status = push("push with expiration_time a week ahead (epoch seconds)", {
        "channels": ["Giants"],
        "expiration_time": seconds,
        "data": {
            "alert": "Season tickets on sale until next week"
        }
    }, sent=1)
    check("expiration_time (epoch seconds): _PushStatus.expiry is its epoch milliseconds",
          status.get("expiry") == seconds * 1000, "expiry %r, expected %r" % (status.get("expiry"), seconds * 1000))

    # Without push_time the interval counts from now: expiry = now + interval.
    started = time.time()
    status = push("push with expiration_interval 518400", {
        "channels": ["Giants"],
        "expiration_interval": 518400,
        "data": {
            "alert": "Season tickets on sale for six days"
        }
    }, sent=1)
    ended = time.time()
    expiry = status.get("expiry")
    check("expiration_interval: _PushStatus keeps it and sets expiry to now + 518400 s (in ms)",
          status.get("expiration_interval") == 518400 and isinstance(expiry, (int, float))
          and (started - 1 + 518400) * 1000 <= expiry <= (ended + 1 + 518400) * 1000,
          "expiration_interval %r, expiry %r, sent between %.3f and %.3f"
          % (status.get("expiration_interval"), expiry, started, ended))

    reply = call("POST", "/push", {"channels": ["Giants"], "expiration_time": iso_seconds(week),
                                   "expiration_interval": 518400, "data": {"alert": "both"}}, key="master")
    check("expiration_time and expiration_interval together is 115", reply.status == 400 and reply.body == {
        "code": 115, "error": "Both expiration_time and expiration_interval cannot be set"}, reply)
    reply = call("POST", "/push", {"channels": ["Giants"], "expiration_interval": 0, "data": {"alert": "zero"}},
                 key="master")
    check("expiration_interval 0 is 115", reply.status == 400 and reply.body == {
        "code": 115, "error": "expiration_interval must be a number greater than 0"}, reply)


# --- Targeting by Platform ------------------------------------------------------------------------------

def platforms():
    # Both ios installations are targeted: the first is delivered, the fake APNs refuses the second's
    # made-up token (BadDeviceToken), which Parse counts as failed. Any other ios installation on the
    # server counts too, so the total comes from a count with Parse's own deviceToken $exists.
    counted = call("GET", "/installations", key="master", params={
        "where": json.dumps({"deviceType": "ios", "deviceToken": {"$exists": True}}), "count": 1, "limit": 0})
    total = counted.fields.get("count")
    reply = call("POST", "/push", {
        "where": {
            "deviceType": "ios"
        },
        "data": {
            "alert": "Your suitcase has been filled with tiny apples!"
        }
    }, key="master")
    status_id = reply.headers.get("X-Parse-Push-Status-Id") or ""
    row = push_status(status_id).fields if reply.status == 200 and status_id else {}
    check("push to where deviceType ios: succeeded, each ios installation with a token sent or failed",
          reply.status == 200 and row.get("status") == "succeeded" and isinstance(total, (int, float))
          and row.get("numSent", 0) >= 1 and row.get("numFailed", 0) >= 1
          and row.get("numSent", 0) + row.get("numFailed", 0) == total,
          "%r; row %r; ios installations with a token: %r" % (reply, row, total))
    for device_type, alert in [("android", "Your suitcase has been filled with tiny robots!"),
                               ("winrt", "Your suitcase has been filled with tiny glass!"),
                               ("winphone", "Your suitcase is very hip; very metro.")]:
        reply = call("POST", "/push", {"where": {"deviceType": device_type}, "data": {"alert": alert}}, key="master")
        status_id = reply.headers.get("X-Parse-Push-Status-Id") or ""
        row = push_status(status_id).fields if reply.status == 200 and status_id else {}
        check("push to where deviceType %s: succeeded, nothing sent" % device_type,
              reply.status == 200 and row.get("status") == "succeeded" and row.get("numSent") == 0, "%r; row %r"
              % (reply, row))


# --- Scheduling Pushes ----------------------------------------------------------------------------------

def scheduling():
    # The guide's example with its time moved a minute ahead (past any delay a busy machine adds): the
    # row is "scheduled" at once, with pushTime as Parse writes it (toISOString, milliseconds and Z).
    # Delivery is not waited for.
    later = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=60)
    body = {
        "where": {
            "user_id": "user_123"
        },
        "push_time": iso_seconds(later),
        "data": {
            "alert": "You previously created a reminder for the game today"
        }
    }
    status = push("scheduled push (push_time 3-4 s ahead)", body, wait=False)
    check("scheduled push: status scheduled, pushTime the time asked, nothing sent yet",
          (status.get("status"), status.get("pushTime"), status.get("numSent", 0))
          == ("scheduled", later.strftime("%Y-%m-%dT%H:%M:%S.000Z"), 0),
          {k: status.get(k) for k in ("status", "pushTime", "numSent")})

    # The expiration_interval example, with push_time in the future and a target.
    body = {
        "where": {
            "user_id": "user_123"
        },
        "push_time": iso_seconds(later),
        "expiration_interval": 518400,
        "data": {
            "alert": "Season tickets on sale until March 19, 2015"
        }
    }
    status = push("scheduled push with expiration_interval", body, wait=False)
    check("scheduled push with expiration_interval: scheduled, the interval kept",
          (status.get("status"), status.get("expiration_interval")) == ("scheduled", 518400),
          {k: status.get(k) for k in ("status", "pushTime", "expiration_interval", "expiry")})

    reply = call("POST", "/push", {"where": {"user_id": "user_123"}, "push_time": "not a date",
                                   "data": {"alert": "never"}}, key="master")
    check("push_time that is not a date is 115",
          reply.status == 400 and reply.body == {"code": 115, "error": "not a date is not valid time."}, reply)


# --- Deleting Installations (the rest) ------------------------------------------------------------------

def delete_rest():
    for name in ("ios", "second"):
        reply = call("DELETE", "/installations/" + ids[name], key="master")
        check("delete %s: 200 {}" % name, reply.status == 200 and reply.body == {}, reply)
        reply = get_installation(ids[name])
        check("delete %s: a get is then 404 code 101" % name, reply.status == 404 and reply.body == NOT_FOUND, reply)


def main():
    for name, section in [("setup", setup), ("upload", upload), ("retrieve", retrieve), ("update", update),
                          ("query", query), ("delete android", delete_android), ("channels", channels),
                          ("targeting", targeting), ("customizing", customizing), ("expiration", expiration),
                          ("platforms", platforms), ("scheduling", scheduling), ("delete", delete_rest)]:
        step(name, section)
    print(json.dumps({"checks": checks}, indent=1), flush=True)


if __name__ == "__main__":
    main()
