"""Serve the sandbox: `manage.py sandbox_serve 127.0.0.1:8001 --settings=backoffice.sandbox.settings`.

Django's threaded development server, with TCP_NODELAY on every connection: the server writes headers
and body in two sends, and on a kept-alive connection Nagle's algorithm then waits for the client's
delayed ACK, adding about 40 ms to every call (runserver works too, just slower per request).
Each request is also stamped the moment its request line is read, so that rate limits count it at
arrival as the platform does, not after the thread has waited for the interpreter.
"""

import socket
import socketserver
import time

from django.core.management.base import BaseCommand, CommandError
from django.core.servers.basehttp import WSGIRequestHandler, WSGIServer, get_internal_wsgi_application


class SandboxWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    request_queue_size = 64
    daemon_threads = True

    def get_request(self):
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


class StampingRequestHandler(WSGIRequestHandler):
    arrived = None

    def parse_request(self):
        self.arrived = time.monotonic()
        return super().parse_request()

    def get_environ(self):
        environ = super().get_environ()
        environ["sandbox.arrived"] = self.arrived
        return environ


class Command(BaseCommand):
    help = "Serve the platform sandbox (threaded, one process: the rate-limit windows live in its memory)."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8001", help="host:port to listen on")

    def handle(self, *args, addrport, **options):
        host, _, port = addrport.rpartition(":")
        if not host or not port.isdigit():
            raise CommandError("addrport must look like 127.0.0.1:8001")
        self.check(display_num_errors=False)
        self.stdout.write(f"Sandbox listening on http://{host}:{port}/ (admin at /admin/)")
        server = SandboxWSGIServer((host.strip("[]"), int(port)), StampingRequestHandler, ipv6=host.startswith("["))
        server.set_app(get_internal_wsgi_application())
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
