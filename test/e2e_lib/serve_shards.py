"""Serves a directory over HTTP on 127.0.0.1 while a command runs:

    serve_shards.py DIR [--log LOG] [--drop-first N] [--stall-first N] -- CMD...

Each {url} in CMD becomes http://127.0.0.1:PORT. The server is Python's
http.server (SimpleHTTPRequestHandler) on a free port, started before CMD and
stopped after it; the exit status is CMD's. --drop-first N closes the
connection halfway through the body of each file's first N requests;
--stall-first N sends nothing for 30 s instead. LOG gets one line per
request: the path and what the server did (served, dropped, stalled, 404).
"""
import argparse
import functools
import http.server
import os
import subprocess
import sys
import threading
import time


def main():
    split = sys.argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--log")
    parser.add_argument("--drop-first", type=int, default=0)
    parser.add_argument("--stall-first", type=int, default=0)
    args = parser.parse_args(sys.argv[1:split])
    command = sys.argv[split + 1:]
    seen = {}
    lock = threading.Lock()
    log = open(args.log, "a") if args.log else None

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def record(self, what):
            if log:
                with lock:
                    log.write("%s %s\n" % (self.path, what))
                    log.flush()

        def do_GET(self):
            with lock:
                count = seen.get(self.path, 0)
                seen[self.path] = count + 1
            path = self.translate_path(self.path)
            if not os.path.isfile(path):
                self.record("404")
                self.send_error(404)
                return
            if count < args.stall_first:
                self.record("stalled")
                time.sleep(30)
                return
            if count < args.stall_first + args.drop_first:
                data = open(path, "rb").read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[:len(data) // 2])
                self.wfile.flush()
                self.connection.shutdown(2)
                self.close_connection = True
                self.record("dropped")
                return
            self.record("served")
            super().do_GET()

    handler = functools.partial(Handler, directory=args.dir)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = "http://127.0.0.1:%d" % server.server_address[1]
    try:
        status = subprocess.call([c.replace("{url}", url) for c in command])
    finally:
        server.shutdown()
        server.server_close()
    sys.exit(status)


main()
