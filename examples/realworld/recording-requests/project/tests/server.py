"""A local HTTP server on 127.0.0.1 for the pinned code: no traffic leaves the machine.

`/status` answers JSON; `/private` asks for digest authentication (a fixed nonce) and
answers once a Digest Authorization header comes back. It counts the requests it saw.
"""

import http.server
import json
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self):
        Handler.hits += 1
        if self.path == "/private" and not self.headers.get("Authorization", "").startswith("Digest "):
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Digest realm="status", nonce="0123456789abcdef", qop="auth"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = json.dumps({"ok": True, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def serve():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
