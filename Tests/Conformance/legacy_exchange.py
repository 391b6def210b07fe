"""Speaks to FakeAPNs's legacy binary gateway or feedback service byte by byte, with CPython's ssl
(OpenSSL) and a push certificate, as an old provider would. Prints what the server sent, as JSON.

    legacy_exchange.py HOST PORT CERT KEY CA HEX [--cut]

HEX is the bytes to send (may be empty: the feedback service wants nothing). Then the server's bytes
are read until it closes the connection: the gateway closes after its error response, the feedback
service after its tuples. With --cut, the connection is closed right after sending (a frame cut in
the middle), and nothing is read.
"""

import json
import socket
import ssl
import sys


def main():
    host, port, cert, key, ca, data = sys.argv[1:7]
    cut = "--cut" in sys.argv[7:]
    context = ssl.create_default_context(cafile=ca)
    context.load_cert_chain(cert, key)
    with socket.create_connection((host, int(port)), timeout=60) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            tls.sendall(bytes.fromhex(data))
            if cut:
                print(json.dumps({"sent": len(data) // 2}))
                return
            received = b""
            while True:
                chunk = tls.recv(4096)
                if not chunk:
                    break
                received += chunk
    print(json.dumps({"sent": len(data) // 2, "received": received.hex()}))


if __name__ == "__main__":
    main()
