"""Holds one HTTP/2 connection to FakeAPNs open with the h2 library and reports its connection-level
events: the PING answer and the GOAWAY it is eventually sent.

Usage: h2_session.py PORT CA_FILE [--ping]
Prints "connected", "ping-ack <data>", "goaway <error code> <debug data>" and "closed" as they happen.
"""

import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events
import h2.exceptions

port, ca_file = int(sys.argv[1]), sys.argv[2]
context = ssl.create_default_context(cafile=ca_file)
context.set_alpn_protocols(["h2"])
sock = context.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
connection.initiate_connection()
if "--ping" in sys.argv:
    connection.ping(b"PUSHHRNS")
sock.sendall(connection.data_to_send())
print("connected", flush=True)
def pump():
    """Reads until the server closes, printing what happens; after a GOAWAY any way the server ends
    the connection (a reset, a broken pipe while we acknowledge, frames h2 refuses once terminated)
    is just the end."""
    terminated = False
    while True:
        try:
            data = sock.recv(65535)
            if not data:
                return
            for event in connection.receive_data(data):
                if isinstance(event, h2.events.PingAckReceived):
                    print("ping-ack", event.ping_data.decode(), flush=True)
                elif isinstance(event, h2.events.ConnectionTerminated):
                    terminated = True
                    print("goaway", int(event.error_code), (event.additional_data or b"").decode(), flush=True)
            pending = connection.data_to_send()
            if pending:
                sock.sendall(pending)
        except (OSError, h2.exceptions.ProtocolError):
            if terminated:
                return
            raise


pump()
print("closed", flush=True)
