"""What the tests' HTTP servers share: reading a request body (with a length
or chunked) and answering through `git http-backend` (git's smart HTTP, run
as CGI over a folder of bare repositories)."""
import os
import subprocess


def read_body(handler):
    """The body of the request `handler` (a BaseHTTPRequestHandler) is reading."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int(handler.rfile.readline().split(b";")[0], 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return body
            body += handler.rfile.read(size)
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length", "0")))


def git_http_backend(handler, root, path, query, body, remote_user=None):
    """git http-backend's answer to the request: (status, [(name, value)], payload)."""
    env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", REQUEST_METHOD=handler.command,
               PATH_INFO=path, QUERY_STRING=query, CONTENT_TYPE=handler.headers.get("Content-Type", ""),
               CONTENT_LENGTH=str(len(body)), REMOTE_ADDR="127.0.0.1", SERVER_PROTOCOL=handler.protocol_version)
    if remote_user:
        env["REMOTE_USER"] = remote_user
    if handler.headers.get("Content-Encoding"):
        env["HTTP_CONTENT_ENCODING"] = handler.headers["Content-Encoding"]
    if handler.headers.get("Git-Protocol"):
        env["GIT_PROTOCOL"] = handler.headers["Git-Protocol"]
    out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
    sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
    head, _, payload = out.partition(sep)
    status, headers = 200, []
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers.append((name, value.strip()))
    return status, headers, payload
