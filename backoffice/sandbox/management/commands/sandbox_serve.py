"""Serve the sandbox: `manage.py sandbox_serve 127.0.0.1:8001 --settings=backoffice.sandbox.settings`.

Django's threaded development server, with TCP_NODELAY on every connection: the server writes headers
and body in two sends, and on a kept-alive connection Nagle's algorithm then waits for the client's
delayed ACK, adding about 40 ms to every call (runserver works too, just slower per request).
Each request is also stamped the moment its request line is read, so that rate limits count it at
arrival as the platform does, not after the thread has waited for the interpreter. And a request can be
answered with nothing at all (an after_apply "drop" fault): the connection is closed unanswered, as when
the platform's gateway loses a request it has already applied.
"""

import socket
import socketserver
import time

from django.core.management.base import BaseCommand, CommandError
from django.core.servers.basehttp import ServerHandler, WSGIRequestHandler, WSGIServer, get_internal_wsgi_application

from backoffice.sandbox.api import CAN_DROP, DROP


class SandboxWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    request_queue_size = 64
    daemon_threads = True

    def get_request(self):
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address


class DroppingServerHandler(ServerHandler):
    def finish_response(self):
        if self.environ.get(DROP):
            # Not a byte of the response: the client reads end-of-stream (RemoteDisconnected).
            self.request_handler.close_connection = True
            self.close()
            return
        super().finish_response()


class StampingRequestHandler(WSGIRequestHandler):
    arrived = None

    def parse_request(self):
        self.arrived = time.monotonic()
        return super().parse_request()

    def get_environ(self):
        environ = super().get_environ()
        environ["sandbox.arrived"] = self.arrived
        environ[CAN_DROP] = True
        return environ

    def handle_one_request(self):
        # WSGIRequestHandler.handle_one_request, with the ServerHandler that can drop the connection.
        self.raw_requestline = self.rfile.readline(65537)
        if len(self.raw_requestline) > 65536:
            self.requestline = self.request_version = self.command = ""
            self.send_error(414)
            return
        if not self.parse_request():
            return
        handler = DroppingServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ())
        handler.request_handler = self
        handler.run(self.server.get_app())


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
