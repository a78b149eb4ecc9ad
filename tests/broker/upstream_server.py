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
  /api/...   a GitHub Enterprise API as gh reaches it (/api/v3/..., /api/graphql);
             requires Authorization: token (or Bearer) $GIT_SECRET (401 otherwise)
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
        if self.path.startswith("/api/"):
            return self.github_api()
        self.reply(200, b"hello from upstream")

    def git(self, body):
        expected = "Basic " + base64.b64encode(("x-access-token:" + GIT_SECRET).encode()).decode()
        if not GIT_SECRET or self.headers.get("Authorization") != expected:
            return self.reply(401, b"bad credentials\n", [("WWW-Authenticate", 'Basic realm="git"')])
        path, _, query = self.path[len("/git"):].partition("?")
        status, headers, payload = git_http_backend(self, GIT_ROOT, path, query, body, remote_user="agent")
        self.reply(status, payload, headers)

    def github_api(self):
        """The few answers gh needs: `gh api /user`, `gh api repos/O/R` and
        `gh auth status` (GET /api/v3/ for the token's scopes, then the
        viewer's login over GraphQL)."""
        auth = self.headers.get("Authorization", "")
        scheme, _, token = auth.partition(" ")
        if not GIT_SECRET or scheme.lower() not in ("token", "bearer") or token != GIT_SECRET:
            return self.json(401, {"message": "Bad credentials"})
        path = self.path.partition("?")[0]
        if path == "/api/graphql":
            return self.json(200, {"data": {"viewer": {"login": "agent-bot"}}})
        if path in ("/api/v3", "/api/v3/"):
            return self.json(200, {}, [("X-OAuth-Scopes", "repo, read:org")])
        if path == "/api/v3/user":
            return self.json(200, {"login": "agent-bot", "type": "User"})
        if path.startswith("/api/v3/repos/"):
            full_name = "/".join(path[len("/api/v3/repos/"):].split("/")[:2])
            return self.json(200, {"full_name": full_name, "private": True})
        return self.json(404, {"message": "Not Found"})

    def json(self, status, value, headers=()):
        self.reply(status, json.dumps(value).encode(), [("Content-Type", "application/json")] + list(headers))

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


server = Server(("127.0.0.1", 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_port, flush=True)
server.serve_forever()
