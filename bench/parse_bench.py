"""Drives `harness serve`'s FakeParse for bench/parse.sh, and measures SQLite's own insert rate as the
anchor, in the same run.

    parse_bench.py ENDPOINTS_JSON N ANCHOR_DB

1. N devices registered with FakeAPNs's control API (not timed).
2. N installations saved one by one (POST /parse/installations, one keep-alive connection each for
   four client threads): saves per second.
3. The anchor: N rows inserted into a new SQLite file in WAL mode, one transaction each, from four
   threads each with its own connection (the same durability FakeParse gives an installation).
4. One push to every installation: from the POST /parse/push to the last APNs answer, read from the
   _PushStatus row (createdAt, and updatedAt when it succeeded); pushes per second.
Prints one JSON object.
"""
import http.client
import json
import sqlite3
import sys
import threading
import time
import urllib.parse
import uuid

endpoints = json.load(open(sys.argv[1]))
count = int(sys.argv[2])
anchor_db = sys.argv[3]
parse = endpoints["parse"]
apns = endpoints["apns"]
topic = apns["topic"]
threads = 4


def connection(url):
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=120), parts.path.rstrip("/")


def parse_headers(master=False):
    headers = {"X-Parse-Application-Id": parse["applicationId"], "Content-Type": "application/json"}
    if parse.get("clientKey"):
        headers["X-Parse-Client-Key"] = parse["clientKey"]
    if master:
        headers["X-Parse-Master-Key"] = parse["masterKey"]
    return headers


def in_threads(work):
    """Runs work(thread_index, indices) on `threads` threads over 0..count-1; returns seconds taken."""
    chunks = [range(i, count, threads) for i in range(threads)]
    workers = [threading.Thread(target=work, args=(i, chunk)) for i, chunk in enumerate(chunks)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return time.perf_counter() - started


tokens = [None] * count


def register(_, indices):
    conn, base = connection(apns["controlURL"])
    for index in indices:
        conn.request("POST", base + "/devices", json.dumps({"topic": topic}), {"Content-Type": "application/json"})
        reply = conn.getresponse()
        tokens[index] = json.loads(reply.read())["deviceToken"]


in_threads(register)

failures = []


def save(_, indices):
    conn, base = connection(parse["url"])
    for index in indices:
        body = {"deviceType": "ios", "installationId": str(uuid.uuid4()), "deviceToken": tokens[index],
                "appIdentifier": topic, "channels": ["bench"], "badge": 0}
        conn.request("POST", base + "/installations", json.dumps(body), parse_headers())
        reply = conn.getresponse()
        reply.read()
        if reply.status != 201:
            failures.append(reply.status)


save_seconds = in_threads(save)

connection_lock = threading.Lock()
setup = sqlite3.connect(anchor_db)
setup.execute("PRAGMA journal_mode=WAL")
setup.execute("CREATE TABLE installation (objectId TEXT PRIMARY KEY, installationId TEXT, deviceToken TEXT, object TEXT NOT NULL)")
setup.execute("CREATE INDEX a ON installation(installationId)")
setup.execute("CREATE INDEX b ON installation(deviceToken)")
setup.commit()
setup.close()


def insert(thread, indices):
    db = sqlite3.connect(anchor_db, timeout=60, isolation_level=None)
    db.execute("PRAGMA synchronous=FULL")
    for index in indices:
        body = json.dumps({"deviceType": "ios", "deviceToken": tokens[index]})
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO installation VALUES (?, ?, ?, ?)", ("%d-%d" % (thread, index), str(uuid.uuid4()), tokens[index], body))
        db.execute("COMMIT")
    db.close()


anchor_seconds = in_threads(insert)

conn, base = connection(parse["url"])
started = time.perf_counter()
conn.request("POST", base + "/push", json.dumps({"channels": ["bench"], "data": {"alert": "bench", "badge": "Increment"}}),
             parse_headers(master=True))
reply = conn.getresponse()
reply.read()
status_id = reply.getheader("X-Parse-Push-Status-Id")
while True:
    conn.request("GET", base + "/classes/_PushStatus/" + status_id, headers=parse_headers(master=True))
    row = json.loads(conn.getresponse().read())
    if row.get("status") in ("succeeded", "failed"):
        break
    time.sleep(0.05)
client_seconds = time.perf_counter() - started


def epoch(iso):
    return time.mktime(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")) + float("0" + iso[19:23])


server_seconds = epoch(row["updatedAt"]) - epoch(row["createdAt"])
print(json.dumps({
    "installations": count, "saveFailures": len(failures),
    "savesPerSecond": round(count / save_seconds), "sqliteInsertsPerSecond": round(count / anchor_seconds),
    "push": {"status": row["status"], "numSent": row.get("numSent"), "numFailed": row.get("numFailed"),
             "seconds": round(server_seconds, 3), "pushesPerSecond": round(count / server_seconds),
             "clientSeconds": round(client_seconds, 3)},
}))
