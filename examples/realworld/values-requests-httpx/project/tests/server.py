"""A local HTTP server on 127.0.0.1 for the pinned tests: no traffic leaves the machine."""

import http.server
import json
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        sku = self.path.split("?")[0].rsplit("/", 1)[-1]
        body = json.dumps({"sku": sku, "count": 12}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        body = json.dumps({"stored": len(sent)}).encode()
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
