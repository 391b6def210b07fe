"""Sends FakeAPNs header blocks that RFC 9113 section 8.2 calls malformed, one stream each on one
HTTP/2 connection (the h2 library with its own checks turned off), then a well-formed request.

Usage: malformed_headers.py PORT CA_FILE
Prints "reset <case> <error code>" or "answered <case> <status>" for each malformed block, then
"answered well-formed <status>" and "done".
"""

import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events

port, ca_file = int(sys.argv[1]), sys.argv[2]
context = ssl.create_default_context(cafile=ca_file)
context.set_alpn_protocols(["h2"])
sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
sock.settimeout(10)
config = h2.config.H2Configuration(client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False,
                                   validate_inbound_headers=False)
connection = h2.connection.H2Connection(config)
connection.initiate_connection()
sock.sendall(connection.data_to_send())

request = [(":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
           (":path", "/3/device/" + "ab" * 32)]
cases = {
    "uppercase-name": request + [("Apns-Topic", "com.example.app")],
    "connection-header": request + [("connection", "keep-alive")],
    "transfer-encoding": request + [("transfer-encoding", "chunked")],
    "te-not-trailers": request + [("te", "gzip")],
    "pseudo-after-regular": request[:3] + [("apns-topic", "com.example.app"), request[3]],
    "unknown-pseudo": request + [(":foo", "bar")],
    "repeated-pseudo": request + [(":path", "/3/device/cd")],
    "no-path": request[:3],
    "no-method": request[1:],
    "empty-path": request[:3] + [(":path", "")],
    "space-in-name": request + [("apns topic", "x")],
    "newline-in-value": request + [("apns-topic", "com.example\r\nx: y")],
    "value-with-leading-space": request + [("apns-topic", " com.example.app")],
    "value-with-trailing-tab": request + [("apns-topic", "com.example.app\t")],
    "nul-in-value": request + [("apns-topic", "com.example\x00app")],
    "keep-alive": request + [("keep-alive", "timeout=5")],
    "proxy-connection": request + [("proxy-connection", "keep-alive")],
    "upgrade": request + [("upgrade", "h2c")],
    "non-ascii-name": request + [(b"apns-t\xc3\xa9pic", b"com.example.app")],
}


def exchange(name, headers, trailers=None):
    stream = connection.get_next_available_stream_id()
    if trailers is None:
        connection.send_headers(stream, headers, end_stream=True)
    else:
        # A body, then trailers: the server sees the request's end only with them.
        connection.send_headers(stream, headers)
        connection.send_data(stream, b'{"aps":{}}')
        connection.send_headers(stream, trailers, end_stream=True)
    sock.sendall(connection.data_to_send())
    while True:
        data = sock.recv(65535)
        if not data:
            print("closed", name, flush=True)
            sys.exit(1)
        for event in connection.receive_data(data):
            if isinstance(event, h2.events.StreamReset) and event.stream_id == stream:
                print("reset", name, int(event.error_code), flush=True)
                sock.sendall(connection.data_to_send())
                return
            if isinstance(event, h2.events.ResponseReceived) and event.stream_id == stream:
                status = dict(event.headers).get(b":status", b"?").decode()
                print("answered", name, status, flush=True)
                sock.sendall(connection.data_to_send())
                return
            if isinstance(event, h2.events.ConnectionTerminated):
                print("goaway", name, int(event.error_code), flush=True)
                sys.exit(1)
        sock.sendall(connection.data_to_send())


for name, headers in cases.items():
    exchange(name, headers)
exchange("pseudo-header-in-trailers", request + [("apns-topic", "com.example.app")], trailers=[(":path", "/3/device/cd")])
exchange("well-formed", request + [("apns-topic", "com.example.app"), ("apns-push-type", "alert")])
print("done", flush=True)
