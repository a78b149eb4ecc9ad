# A stand-in for the sign-in server's device-code endpoints (Codex's
# `login --device-auth --experimental_issuer URL`): a user code is handed out
# and the sign-in stays pending. Port on the command line.
import http.server
import json
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.path.endswith("/deviceauth/usercode"):
            out = json.dumps({"device_auth_id": "dev-1", "user_code": "WXYZ-1234", "interval": "5"}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        else:  # the token: not yet (the user has not signed in)
            self.send_response(403)
            self.send_header("content-length", "0")
            self.end_headers()

    def log_message(self, *args):
        pass


http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
