"""The loopback HTTPS server behind the broker in the tests: HTTP/1.1 with
keep-alive, 100-continue and chunked request bodies. It records every request
it receives (one JSON line per request in RECORD_FILE) so that the tests can
see what reached the server: the real secret, never the placeholder.

  upstream_server.py CERT KEY RECORD_FILE [GIT_ROOT]

Prints its port on the first line. Paths:
  /echo...   200, a JSON body with the request's headers and body
  /ws        101 Switching Protocols (WebSocket handshake), then echoes bytes
  /git/...   git http-backend (smart HTTP) over GIT_ROOT; requires
             Authorization: Basic x-access-token:$GIT_SECRET (401 otherwise)
  /close     200 with no length: the body ends with the connection
  else       200 "hello from upstream"
"""
import base64
import http.server
import json
import os
import socketserver
import ssl
import sys
import threading

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from git_http import git_http_backend, read_body  # noqa: E402

CERT, KEY, RECORD = sys.argv[1], sys.argv[2], sys.argv[3]
GIT_ROOT = sys.argv[4] if len(sys.argv) > 4 else ""
GIT_SECRET = os.environ.get("GIT_SECRET", "")
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def read_body(self):
        return read_body(self)

    def record(self, body):
        entry = {"method": self.command, "path": self.path, "headers": [[k, v] for k, v in self.headers.items()],
                 "body": body.decode("latin-1")}
        with lock, open(RECORD, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(self, status, body, headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        body = self.read_body()
        self.record(body)
        if self.path.startswith("/echo"):
            out = json.dumps({"headers": dict(self.headers.items()), "body": body.decode("latin-1")}).encode()
            return self.reply(200, out, [("Content-Type", "application/json")])
        if self.path == "/ws":
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.end_headers()
            self.wfile.flush()
            while True:
                data = self.connection.recv(4096)
                if not data:
                    break
                self.connection.sendall(data)
            self.close_connection = True
            return
        if self.path == "/close":
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"read to the end")
            self.close_connection = True
            return
        if self.path.startswith("/git/"):
            return self.git(body)
        self.reply(200, b"hello from upstream")

    def git(self, body):
        expected = "Basic " + base64.b64encode(("x-access-token:" + GIT_SECRET).encode()).decode()
        if not GIT_SECRET or self.headers.get("Authorization") != expected:
            return self.reply(401, b"bad credentials\n", [("WWW-Authenticate", 'Basic realm="git"')])
        path, _, query = self.path[len("/git"):].partition("?")
        status, headers, payload = git_http_backend(self, GIT_ROOT, path, query, body, remote_user="agent")
        self.reply(status, payload, headers)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_port, flush=True)
server.serve_forever()
