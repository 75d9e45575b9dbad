"""Run as ``python -m flows.kept_server FOLDER PORT MINUTES``, as the real keeper is: the
real ``keep`` (loaded from the real file) with a stand-in for Prefect's server, chosen by
``FAKE_SERVER``: ``ok`` answers /api/health and /api/admin/settings (with its
``PREFECT_HOME``), ``silent`` accepts connections and never answers, ``dead`` listens on
nothing."""

import importlib.util
import sys
from pathlib import Path

SERVER = r'''
import http.server, os, json, socket, sys, time
mode, port = os.environ.get("FAKE_SERVER", "ok"), int(sys.argv[1])
if mode == "dead":
    time.sleep(3600)
if mode == "silent":
    s = socket.socket(); s.bind(("127.0.0.1", port)); s.listen(16)
    held = []
    while True:
        held.append(s.accept())
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/api/health":
            body = b"true"
        elif self.path == "/api/admin/settings":
            body = json.dumps({"home": os.environ["PREFECT_HOME"]}).encode()
        else:
            self.send_response(404); self.end_headers(); return
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
'''

real = Path(__file__).resolve().parents[4] / "flows" / "kept_server.py"
spec = importlib.util.spec_from_file_location("flows._real_kept_server", real)
keeper = importlib.util.module_from_spec(spec)
spec.loader.exec_module(keeper)
keeper.server_command = lambda port: [sys.executable, "-c", SERVER, str(port)]
sys.exit(keeper.keep(Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]),
                     tick_seconds=0.1))
