"""Drives `harness fault-proxy` with toxiproxy-python (PyPI 0.1.1) and with plain HTTP calls as
Toxiproxy's API documents them, in front of a server nobody here wrote (nginx).

    toxiproxy_conformance.py API_PORT UPSTREAM_HOST:PORT BUSY_PORT

Prints `ok <check>` for each check that held and exits 1 at the first that did not. A timed toxic
may never act sooner than asked (within the tolerance); later, it may be late by what the same
request took through the proxy without the toxic just before, which is what load adds.
"""
import json
import socket
import struct
import sys
import time

import requests
from toxiproxy import Toxiproxy
from toxiproxy.api import APIConsumer
from toxiproxy.exceptions import InvalidToxic, NotFound, ProxyExists

api_port, upstream, busy_port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
API = "http://127.0.0.1:%d" % api_port


def check(name, condition, detail=""):
    if not condition:
        print("FAILED %s %s" % (name, detail), flush=True)
        sys.exit(1)
    print("ok %s" % name, flush=True)


def fetch(listen, path):
    """GET path through `listen` on a new connection; (seconds, bytes of the whole answer)."""
    host, port = listen.rsplit(":", 1)
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(("GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path).encode())
        received = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    return time.monotonic() - started, received


def error_body(response):
    return response.status_code, response.text


server = Toxiproxy()
server.update_api_consumer("127.0.0.1", api_port)
check("running", server.running())
check("version", b'"version"' in server.version(), server.version())
server.destroy_all()

proxy = server.create(upstream=upstream, name="web")
check("create resolves the listen port", not proxy.listen.endswith(":0"), proxy.listen)
check("listed", "web" in server.proxies())

# Errors, as Toxiproxy words them.
duplicate = requests.post(API + "/proxies", json={"name": "web", "upstream": upstream})
check("duplicate proxy 409", error_body(duplicate) == (409, '{"error":"proxy already exists","status":409}\n'),
      error_body(duplicate))
try:
    server.create(upstream=upstream, name="web")
    check("client sees ProxyExists", False)
except ProxyExists:
    check("client sees ProxyExists", True)
unknown = requests.get(API + "/proxies/nope")
check("unknown proxy 404", error_body(unknown) == (404, '{"error":"proxy not found","status":404}\n'),
      error_body(unknown))
try:
    APIConsumer.delete("/proxies/nope")
    check("client sees NotFound", False)
except NotFound:
    check("client sees NotFound", True)
for body, text in [
    ({"type": "nope"}, '{"error":"invalid toxic type","status":400}\n'),
    ({"type": "latency", "stream": "sideways"},
     '{"error":"stream was invalid, can be either upstream or downstream","status":400}\n'),
    ({"type": "bandwidth", "attributes": {"rate": -5}},
     '{"error":"bad request body: attributes.rate of a bandwidth toxic must be from 1 to 10000000, not -5",'
     '"status":400}\n'),
]:
    bad = requests.post(API + "/proxies/web/toxics", json=body)
    check("bad toxic 400 %s" % body, error_body(bad) == (400, text), error_body(bad))
    try:
        proxy.add_toxic(**body)
        check("client sees InvalidToxic", False)
    except InvalidToxic:
        pass
check("client sees InvalidToxic", True)
missing = requests.post(API + "/proxies", json={"name": "x"})
check("missing upstream 400", error_body(missing) == (400, '{"error":"missing required field: upstream","status":400}\n'),
      error_body(missing))
browser = requests.get(API + "/proxies", headers={"User-Agent": "Mozilla/5.0"})
check("browsers turned away", (browser.status_code, browser.text) == (403, "User agent not allowed\n"))
nowhere = requests.get(API + "/nowhere")
check("unknown path", (nowhere.status_code, nowhere.text) == (404, "404 page not found\n"))
taken = requests.post(API + "/proxies", json={"name": "busy", "upstream": upstream,
                                              "listen": "127.0.0.1:%d" % busy_port})
check("a port in use 500 naming it", taken.status_code == 500 and ("127.0.0.1:%d" % busy_port) in taken.text,
      error_body(taken))

_, whole = fetch(proxy.listen, "/small.txt")
check("through the proxy", whole.startswith(b"HTTP/1.1 200") and whole.endswith(b"hello from nginx\n"), whole[:200])

# latency: each chunk 2 s later (+-10 %).
base, _ = fetch(proxy.listen, "/small.txt")
proxy.add_toxic(type="latency", attributes={"latency": 2000})
late, answer = fetch(proxy.listen, "/small.txt")
# Never sooner than the latency; load may add what the same request took without it, just before.
check("latency adds what was asked", 1.8 <= late <= 2.2 + base and answer.endswith(b"hello from nginx\n"),
      "%.3f s, %.3f s without the toxic" % (late, base))
check("listed toxic", list(proxy.toxics()) == ["latency_downstream"])
proxy.destroy_toxic("latency_downstream")
again, _ = fetch(proxy.listen, "/small.txt")
check("removing a toxic restores the link", again < 1.0, "%.3f s" % again)

# bandwidth: 500 KB/s (1 KB = 1000 bytes) on a 1.5 MB body: 3 s (+-5 %).
base, whole = fetch(proxy.listen, "/large.bin")
proxy.add_toxic(type="bandwidth", attributes={"rate": 500})
slow, answer = fetch(proxy.listen, "/large.bin")
expected = len(whole) / 500000.0
# The rate sets when the last byte may leave, whatever the load: never sooner than the body's size over
# the rate. The time the same body takes unthrottled, just before, is what load may add on top.
check("bandwidth holds the rate",
      answer.partition(b"\r\n\r\n")[2] == whole.partition(b"\r\n\r\n")[2]
      and 0.95 * expected <= slow <= 1.05 * expected + base,
      "%.3f s for %d bytes, expected %.3f s (unthrottled %.3f s)" % (slow, len(whole), expected, base))
proxy.destroy_toxic("bandwidth_downstream")

# limit_data: the connection ends after exactly that many bytes.
proxy.add_toxic(type="limit_data", attributes={"bytes": 1000})
_, cut = fetch(proxy.listen, "/large.bin")
# (The head's Date differs from one answer to the next: the body is compared.)
cut_body = cut.partition(b"\r\n\r\n")[2]
check("limit_data cuts at the byte", len(cut) == 1000 and cut.startswith(b"HTTP/1.1 200")
      and len(cut_body) > 0 and whole.partition(b"\r\n\r\n")[2].startswith(cut_body), len(cut))
proxy.destroy_toxic("limit_data_downstream")

# reset_peer: the client's read fails with a reset.
proxy.add_toxic(type="reset_peer", attributes={"timeout": 0})
try:
    fetch(proxy.listen, "/small.txt")
    check("reset_peer resets", False, "the request completed")
except ConnectionResetError:
    check("reset_peer resets", True)
proxy.destroy_toxic("reset_peer_downstream")

# timeout 0: nothing comes back, and the connection stays open.
proxy.add_toxic(type="timeout", attributes={"timeout": 0})
host, port = proxy.listen.rsplit(":", 1)
hole = socket.create_connection((host, int(port)), timeout=2)
hole.sendall(b"GET /small.txt HTTP/1.1\r\nHost: x\r\n\r\n")
try:
    hole.recv(1)
    check("timeout black-holes", False, "an answer came")
except socket.timeout:
    check("timeout black-holes", True)
hole.settimeout(10)
proxy.destroy_toxic("timeout_downstream")
check("removing timeout closes the held connection", hole.recv(1) == b"")
hole.close()
_, answer = fetch(proxy.listen, "/small.txt")
check("a new connection goes through again", answer.endswith(b"hello from nginx\n"))

# Beyond Toxiproxy, HTTP-aware toxics: http_status answers the request in nginx's place (its stream,
# upstream, is the default for it); http_cut ends the response after that many bytes of its body.
added = requests.post(API + "/proxies/web/toxics", json={"type": "http_status", "attributes": {"status": 503, "retry_after": 2}})
check("http_status added upstream", added.status_code == 200 and added.json()["stream"] == "upstream", added.text)
_, answer = fetch(proxy.listen, "/small.txt")
head, _, body = answer.partition(b"\r\n\r\n")
check("http_status answers in the server's place",
      head.startswith(b"HTTP/1.1 503 Service Unavailable") and b"Retry-After: 2" in head and b"nginx" not in answer,
      answer[:300])
proxy.destroy_toxic("http_status_upstream")
proxy.add_toxic(type="http_cut", attributes={"body_bytes": 5000})
_, cut = fetch(proxy.listen, "/large.bin")
head, _, body = cut.partition(b"\r\n\r\n")
check("http_cut cuts inside the body at the byte",
      head.startswith(b"HTTP/1.1 200") and len(body) == 5000 and whole.partition(b"\r\n\r\n")[2].startswith(body),
      len(body))
proxy.destroy_toxic("http_cut_downstream")
wrong = requests.post(API + "/proxies/web/toxics", json={"type": "http_cut", "stream": "upstream"})
check("http_cut on requests 400", error_body(wrong) == (400, '{"error":"bad request body: an http_cut toxic acts on responses: its stream is downstream","status":400}\n'),
      error_body(wrong))
_, answer = fetch(proxy.listen, "/small.txt")
check("through again", answer.endswith(b"hello from nginx\n"))

# down: the listener closes, connections are refused, and it comes back.
with proxy.down():
    refused = socket.socket()
    check("down refuses connections", refused.connect_ex((host, int(port))) != 0)
    refused.close()
_, answer = fetch(proxy.listen, "/small.txt")
check("up again", answer.endswith(b"hello from nginx\n"))

# reset: toxics gone, proxies enabled.
proxy.add_toxic(type="latency", attributes={"latency": 5000})
proxy.disable()
check("reset answers 204", requests.post(API + "/reset").status_code == 204)
check("reset removes toxics and enables", proxy.toxics() == {} and server.proxies()["web"].enabled is True)

# The Go client's routes: PATCH, a toxic's own path, populate.
requests.post(API + "/proxies/web/toxics", json={"type": "latency", "attributes": {"latency": 10}})
patched = requests.patch(API + "/proxies/web/toxics/latency_downstream", json={"attributes": {"jitter": 5}})
check("toxic update merges", patched.json()["attributes"] == {"latency": 10, "jitter": 5}, patched.text)
populated = requests.post(API + "/populate", json=[{"name": "web", "upstream": upstream, "listen": proxy.listen},
                                                    {"name": "other", "upstream": upstream}])
body = populated.json()
check("populate", populated.status_code == 201 and sorted(p["name"] for p in body["proxies"]) == ["other", "web"],
      populated.text)
bad_populate = requests.post(API + "/populate", json=[{"name": "third", "upstream": upstream}, {"name": "fourth"}])
check("populate names what is missing and makes none", (bad_populate.status_code, bad_populate.json()) ==
      (400, {"error": "missing required field: upstream at proxy 2", "status": 400, "proxies": None})
      and "third" not in server.proxies(), bad_populate.text)
requests.post(API + "/reset")

# Thousands of clients that vanish: each connects, sends half a request and resets.
for _ in range(3000):
    client = socket.create_connection((host, int(port)), timeout=10)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.sendall(b"GET /large.bin HTTP/1.1\r\nHo")
    client.close()
_, answer = fetch(proxy.listen, "/small.txt")
check("survives 3000 abrupt closes", answer.endswith(b"hello from nginx\n"))

# An upstream that is down: accepted, then closed.
dead = server.create(upstream="127.0.0.1:9", name="dead")
dhost, dport = dead.listen.rsplit(":", 1)
with socket.create_connection((dhost, int(dport)), timeout=10) as sock:
    try:
        closed = sock.recv(1) == b""
    except ConnectionResetError:
        closed = True
check("an upstream that is down closes the client", closed)
print("all checks passed", flush=True)
