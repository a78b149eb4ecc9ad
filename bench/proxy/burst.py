#!/usr/bin/env python3
"""A burst of TCP connections, all in flight at once: the client half of
bench/proxy/burst.sh (and the server half with --serve).

  burst.py --serve                      an echo server on 127.0.0.1 that holds
                                        every connection; prints its port
  burst.py N PORT bare|captured|CONNECT opens N connections at once to
                                        127.0.0.1:PORT (bare, captured: Local
                                        servers mirrors the port in the run) or
                                        through the run's proxy (CONNECT
                                        localhost:PORT), then waits for each
                                        one's outcome: an echoed ping (open) or
                                        a refusal. Prints: path n open refused ms
"""
import base64
import os
import selectors
import socket
import sys
import time
import urllib.parse


def serve():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4096)
    listener.setblocking(False)
    print(listener.getsockname()[1], flush=True)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            if key.fileobj is listener:
                while True:
                    try:
                        conn, _ = listener.accept()
                    except BlockingIOError:
                        break
                    sel.register(conn, selectors.EVENT_READ)
                continue
            conn = key.fileobj
            try:
                data = conn.recv(256)
            except OSError:
                data = b""
            if data:
                conn.sendall(data)
            else:
                sel.unregister(conn)
                conn.close()


def burst(n, port, via):
    proxy = urllib.parse.urlparse(os.environ.get("HTTPS_PROXY", "")) if via == "CONNECT" else None
    t0 = time.monotonic()
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect((proxy.hostname, proxy.port) if proxy else ("127.0.0.1", port))
        except BlockingIOError:
            pass
        socks.append(s)
    opened = refused = 0
    for s in socks:
        s.setblocking(True)
        s.settimeout(10)
        try:
            if proxy:
                auth = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
                s.sendall(
                    f"CONNECT localhost:{port} HTTP/1.1\r\nHost: localhost:{port}\r\n"
                    f"Proxy-Authorization: Basic {auth}\r\n\r\n".encode())
                head = b""
                while b"\r\n\r\n" not in head:
                    c = s.recv(1)
                    if not c:
                        raise OSError("closed")
                    head += c
                if b" 200 " not in head:
                    raise OSError("refused")
            s.sendall(b"ping\n")
            if s.recv(16) == b"ping\n":
                opened += 1
            else:
                refused += 1
        except OSError:
            refused += 1
    ms = round((time.monotonic() - t0) * 1000)
    print(via, n, opened, refused, ms, flush=True)
    for s in socks:
        s.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        burst(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
