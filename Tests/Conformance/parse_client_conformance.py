"""Drives the server with parse-client 0.1.2 (PyPI; module parse_client, a renamed ParsePy), a Parse
REST client nobody here wrote, and checks what it gets back.

    parse_client_conformance.py BASE_URL APP_ID MASTER_KEY DEVICE_TOKEN APP_IDENTIFIER [REST_API_KEY]

BASE_URL is the mount, e.g. http://127.0.0.1:1337/parse; parse_client reads it from PARSE_API_ROOT at
import, so the script sets that first. DEVICE_TOKEN is a 64-hex token the fake APNs accepts for the
topic APP_IDENTIFIER. parse_client sends X-Parse-REST-API-Key (REST_API_KEY, any value when the
server has no client keys) and, once registered with it, X-Parse-Master-Key on every call.

Checks: Installation(...).save() creates (objectId and createdAt set), Installation.GET by id, queries
by filter(deviceType=...), channels__in and channels=, count(), save() again and update_channels()
update, Push.message to a channel and Push.alert with where + channels (folded by parse_client into
where.channels.$in), what needs the master key, a second save() of the same installationId (Parse
Server merges it and answers 200 {updatedAt}, on which parse_client raises KeyError 'createdAt'), and
delete() followed by a get that is 404 code 101. parse_client returns None from pushes and hides
response headers, so each push is looked up with plain http.client in _PushStatus (master key, order
-createdAt) and polled until it succeeds. Expected answers are Parse Server 7.4's.

Prints one JSON object, {"checks": [{"name", "ok", "detail"}...]}, and exits 0.
"""
import http.client
import json
import os
import sys
import urllib.parse

from parse_checks import check, checks, decoded, step, until_done  # noqa: E402
import uuid

BASE_URL, APP_ID, MASTER_KEY, DEVICE_TOKEN, APP_IDENTIFIER = sys.argv[1:6]
REST_API_KEY = sys.argv[6] if len(sys.argv) > 6 else "rest-api-key"
os.environ["PARSE_API_ROOT"] = BASE_URL.rstrip("/")

from parse_client import core  # noqa: E402  (after PARSE_API_ROOT)
from parse_client.connection import register  # noqa: E402
from parse_client.installation import Installation, Push  # noqa: E402

_url = urllib.parse.urlsplit(BASE_URL)
HOST, PORT, MOUNT = _url.hostname, _url.port or 80, _url.path.rstrip("/")

TOKEN = DEVICE_TOKEN.lower()
SECOND_TOKEN = "fedcba9876543210" * 4 if TOKEN != "fedcba9876543210" * 4 else "abcdef0123456789" * 4
RUN = uuid.uuid4().hex[:8]
# Channels of this run only, so no other installation on the server is targeted.
NEWS, SPORTS, WEATHER, OTHER = ("%s_%s" % (name, RUN) for name in ("news", "sports", "weather", "other"))

state = {}


def error_body(error):
    """The JSON body parse_client put in one of its exceptions (it passes the raw bytes)."""
    raw = error.args[0] if error.args else b""
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return raw


def raises(function, kind):
    """(True, parsed body) if function raised kind, else (False, what happened)."""
    try:
        result = function()
    except kind as error:
        return True, error_body(error)
    except Exception as error:
        return False, "%s: %s" % (type(error).__name__, error)
    return False, "no exception; returned %r" % (result,)


def master_call(method, path, params=None):
    """A plain http.client call with the master key, for what parse_client does not show."""
    if params:
        path += "?" + urllib.parse.urlencode(params)
    connection = http.client.HTTPConnection(HOST, PORT, timeout=30)
    try:
        connection.request(method, MOUNT + path, headers={"X-Parse-Application-Id": APP_ID,
                                                          "X-Parse-Master-Key": MASTER_KEY})
        response = connection.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, raw.decode("utf-8", "replace")
    finally:
        connection.close()


def newest_push_statuses(limit=5):
    status, body = master_call("GET", "/classes/_PushStatus", {"order": "-createdAt", "limit": limit})
    if status != 200 or not isinstance(body, dict):
        raise RuntimeError("GET /classes/_PushStatus: %d %r" % (status, body))
    return body["results"]


def wait_for(status_id, seconds=30.0):
    """The _PushStatus row, polled (master key) until it has succeeded or failed, or the time is up."""
    status, body = until_done(
        lambda: master_call("GET", "/classes/_PushStatus/" + status_id),
        lambda reply: reply[0] != 200 or not isinstance(reply[1], dict)
        or reply[1].get("status") in ("succeeded", "failed"), seconds)
    return body


def pushed(name, send, query, payload, sent):
    """Runs a parse_client push (which returns None), then finds its _PushStatus as the newest row and
    checks its query and payload, and that it succeeded having sent `sent`."""
    before = {row.get("objectId") for row in newest_push_statuses()}
    result = send()
    check(name + ": parse_client returns None", result is None, repr(result))
    rows = newest_push_statuses()
    newest = rows[0] if rows else {}
    check(name + ": the newest _PushStatus is new, with the query and payload sent",
          newest.get("objectId") not in before and decoded(newest.get("query")) == query
          and decoded(newest.get("payload")) == payload,
          "newest %r; expected query %r, payload %r" % ({k: newest.get(k) for k in ("objectId", "query", "payload")},
                                                        query, payload))
    final = wait_for(newest["objectId"]) if newest.get("objectId") else {}
    final = final if isinstance(final, dict) else {}
    numbers = (final.get("status"), final.get("numSent"), final.get("numFailed", 0))
    check(name + ": succeeded, numSent %d" % sent, numbers == ("succeeded", sent, 0),
          "status, numSent, numFailed = %r" % (numbers,))


def installation_url(object_id):
    return Installation._get_installation_url(object_id)


# --- Setup ----------------------------------------------------------------------------------------------

def setup():
    register(APP_ID, REST_API_KEY, master_key=MASTER_KEY)
    check("PARSE_API_ROOT sets where parse_client sends installations",
          Installation.ENDPOINT_ROOT == BASE_URL.rstrip("/") + "/installations", Installation.ENDPOINT_ROOT)
    # Installations an earlier run left with these tokens would turn the creates below into merges.
    stale = list(Installation.Query.filter(deviceToken__in=[TOKEN, SECOND_TOKEN]))
    for installation in stale:
        installation.delete()
    left = Installation.Query.filter(deviceToken__in=[TOKEN, SECOND_TOKEN]).count()
    check("setup: no installation holds these tokens", left == 0, "%d deleted, %r left" % (len(stale), left))


# --- Installations --------------------------------------------------------------------------------------

def create():
    installation_id = str(uuid.uuid4())
    first = Installation(deviceType="ios", deviceToken=DEVICE_TOKEN, installationId=installation_id,
                         appIdentifier=APP_IDENTIFIER, channels=[NEWS])
    first.save()
    check("save() creates: objectId and createdAt set",
          isinstance(first.objectId, str) and len(first.objectId) == 10 and first.createdAt is not None,
          "objectId %r, createdAt %r" % (first.objectId, first.createdAt))
    state["first"], state["installationId"] = first, installation_id

    second = Installation(deviceType="ios", deviceToken=SECOND_TOKEN, installationId=str(uuid.uuid4()),
                          appIdentifier=APP_IDENTIFIER, channels=[OTHER])
    second.save()
    check("save() creates a second installation", second.objectId and second.objectId != first.objectId,
          repr(second.objectId))
    state["second"] = second

    got = Installation.GET(installation_url(first.objectId))
    check("GET by id: the fields saved, the token lower-cased",
          (got.get("objectId"), got.get("deviceType"), got.get("deviceToken"), got.get("installationId"),
           got.get("appIdentifier"), got.get("channels"))
          == (first.objectId, "ios", TOKEN, installation_id, APP_IDENTIFIER, [NEWS]), got)


def query():
    first, second = state["first"], state["second"]
    ios = list(Installation.Query.filter(deviceType="ios"))
    found = {i.objectId for i in ios}
    check("filter(deviceType='ios') finds both, and only ios installations",
          {first.objectId, second.objectId} <= found and all(i.deviceType == "ios" for i in ios),
          "%d found: %r" % (len(ios), sorted(found)[:20]))

    by_channel = list(Installation.Query.filter(channels__in=[NEWS]))
    check("filter(channels__in=[news]) finds only the first",
          [i.objectId for i in by_channel] == [first.objectId] and by_channel[0].deviceToken == TOKEN
          and by_channel[0].channels == [NEWS], [(i.objectId, i.channels) for i in by_channel])

    both = sorted(i.objectId for i in Installation.Query.filter(channels__in=[NEWS, OTHER]))
    check("filter(channels__in=[news, other]) finds both", both == sorted([first.objectId, second.objectId]), both)

    contains = [i.objectId for i in Installation.Query.filter(channels=OTHER)]
    check("filter(channels=other), an array-contains query, finds only the second", contains == [second.objectId],
          contains)

    count = Installation.Query.filter(deviceType="ios", channels__in=[NEWS, OTHER]).count()
    check("count() of deviceType ios in [news, other] is 2", count == 2, repr(count))
    count = Installation.Query.filter(channels__in=["nobody_" + RUN]).count()
    check("count() of a channel nobody is in is 0", count == 0, repr(count))


def update():
    first = state["first"]
    created = first.createdAt
    first.channels = [NEWS, SPORTS]
    first.save()
    check("save() again updates: updatedAt set, not before createdAt",
          first.updatedAt is not None and first.updatedAt >= created, "createdAt %r, updatedAt %r"
          % (created, first.updatedAt))
    got = Installation.GET(installation_url(first.objectId))
    check("after save(): channels [news, sports]", got.get("channels") == [NEWS, SPORTS], got.get("channels"))

    Installation.update_channels(first.objectId, channels_to_add={WEATHER}, channels_to_remove={SPORTS})
    got = Installation.GET(installation_url(first.objectId))
    check("update_channels(): adds weather, removes sports", sorted(got.get("channels") or []) == sorted([NEWS, WEATHER]),
          got.get("channels"))
    first.channels = got.get("channels")
    found = [i.objectId for i in Installation.Query.filter(channels__in=[SPORTS])]
    check("filter(channels__in=[sports]) now finds nothing", found == [], found)


# --- What needs the master key --------------------------------------------------------------------------

def without_master():
    first = state["first"]
    register(APP_ID, REST_API_KEY)
    try:
        got = Installation.GET(installation_url(first.objectId))
        check("without the master key: GET by id is allowed", got.get("objectId") == first.objectId, got)
        ok, body = raises(lambda: list(Installation.Query.filter(deviceType="ios")), core.ResourceRequestBadRequest)
        check("without the master key: a query is 400 code 119", ok and body == {
            "code": 119, "error": "Clients aren't allowed to perform the find operation on the installation collection."},
            body)
        ok, body = raises(lambda: Push.message("no key", channels=[NEWS]), core.ResourceRequestForbidden)
        check("without the master key: a push is 403", ok and body == {"error": "unauthorized: master key is required"},
              body)
        ok, body = raises(lambda: first.delete(), core.ResourceRequestBadRequest)
        check("without the master key: delete() is 400 code 119", ok and body == {
            "code": 119, "error": "Clients aren't allowed to perform the delete operation on the installation collection."},
            body)
    finally:
        register(APP_ID, REST_API_KEY, master_key=MASTER_KEY)


# --- Push -----------------------------------------------------------------------------------------------

def push():
    pushed("Push.message to a channel", lambda: Push.message("Hello from parse_client", channels=[NEWS]),
           query={"channels": {"$in": [NEWS]}}, payload={"alert": "Hello from parse_client"}, sent=1)

    data = {"alert": "Score update", "badge": "Increment", "sound": "default"}
    before = Installation.GET(installation_url(state["first"].objectId)).get("badge") or 0
    pushed("Push.alert with where and channels", lambda: Push.alert(dict(data), where={"deviceType": "ios"},
                                                                    channels=[WEATHER]),
           query={"deviceType": "ios", "channels": {"$in": [WEATHER]}}, payload=data, sent=1)
    after = Installation.GET(installation_url(state["first"].objectId)).get("badge")
    check("Push.alert with badge Increment: the installation's badge went up by 1", after == before + 1,
          "before %r, after %r" % (before, after))

    ok, body = raises(lambda: Push.message("nowhere"), core.ResourceRequestBadRequest)
    check("Push.message with neither channels nor where is 400 code 115", ok and body == {
        "code": 115, "error": 'Sending a push requires either "channels" or a "where" query.'}, body)


# --- The same installationId saved again through a new object -------------------------------------------

def merge():
    first = state["first"]
    again = Installation(deviceType="ios", deviceToken=DEVICE_TOKEN, installationId=state["installationId"],
                         appIdentifier=APP_IDENTIFIER, channels=[NEWS, "merged_" + RUN])
    # Parse Server turns this POST into an update of the existing row: 200 {"updatedAt"} with no
    # objectId or createdAt, which parse_client's create callback cannot read.
    ok, detail = raises(again.save, KeyError)
    check("save() of a new object with an existing installationId: parse_client raises KeyError('createdAt')",
          ok and detail == "createdAt", detail)
    rows = list(Installation.Query.filter(installationId=state["installationId"]))
    check("merge: the server wrote it into the existing row (one row, the new channels)",
          [r.objectId for r in rows] == [first.objectId] and rows[0].channels == [NEWS, "merged_" + RUN],
          [(r.objectId, r.channels) for r in rows])


# --- Delete ---------------------------------------------------------------------------------------------

def delete():
    for name in ("first", "second"):
        installation = state[name]
        result = installation.delete()
        check("delete() the %s installation" % name, result is None, repr(result))
        ok, body = raises(lambda: Installation.GET(installation_url(installation.objectId)),
                          core.ResourceRequestNotFound)
        check("after delete(): a get of the %s is 404 code 101" % name,
              ok and body == {"code": 101, "error": "Object not found."}, body)


def main():
    for name, group in [("setup", setup), ("create", create), ("query", query), ("update", update),
                        ("without master", without_master), ("push", push), ("merge", merge), ("delete", delete)]:
        step(name, group)
    print(json.dumps({"checks": checks}, indent=1), flush=True)


if __name__ == "__main__":
    main()
