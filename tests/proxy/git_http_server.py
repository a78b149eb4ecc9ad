"""A tiny HTTP server that runs `git http-backend` as CGI (the smart HTTP
protocol), so tests can clone over HTTP through the proxy. Prints its port on
the first line. Usage: git_http_server.py PROJECT_ROOT"""
import http.server
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from git_http import git_http_backend, read_body  # noqa: E402

ROOT = sys.argv[1]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.cgi()

    def do_POST(self):
        self.cgi()

    def cgi(self):
        path, _, query = self.path.partition("?")
        status, headers, payload = git_http_backend(self, ROOT, path, query, read_body(self))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_port, flush=True)
server.serve_forever()
