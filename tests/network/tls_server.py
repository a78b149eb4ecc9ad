#!/usr/bin/env python3
"""A TLS server on 127.0.0.1 for the network tests: prints its port, then
answers every connection with one line, until killed.
    tls_server.py CERT KEY"""
import socket
import ssl
import sys
import threading

context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)


def serve(conn):
    try:
        with context.wrap_socket(conn, server_side=True) as tls:
            tls.sendall(b"hello over tls\n")
    except (OSError, ssl.SSLError):
        pass


while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
