"""A local HTTP server on 127.0.0.1 for the pinned tests: no traffic leaves the machine."""

import http.server
import json
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _reply(self, payload):
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self._reply({"ok": True, "path": self.path})

    def do_POST(self):
        # requests sends an iterable body chunked: read the chunks back.
        received = b""
        if self.headers.get("Transfer-Encoding") == "chunked":
            while True:
                size = int(self.rfile.readline().strip(), 16)
                chunk = self.rfile.read(size + 2)[:size]
                if not size:
                    break
                received += chunk
        else:
            received = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._reply({"ok": True, "path": self.path, "received": received.decode()})

    def log_message(self, *args):
        pass


def serve():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
