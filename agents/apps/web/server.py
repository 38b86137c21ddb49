"""``jamb-web``: Jamb in the browser, a local Flask server over the game sessions of
:mod:`agents.apps.session` (the terminal game's, without its presentation).

One page of static files (package data in ``agents/apps/web/static/``: ``index.html``,
``page.css``, ``page.js``, with the sheet's ``sheet.css`` and ``sheet.js`` shared with the
replay page, ``jamb_env/replay/static/``; nothing fetched from the network) talks JSON to
the API below. Every game is a *table* (:mod:`agents.apps.web.table`): one seat (a person
plays, or an agent plays and the person watches) or 2..5 seats of people and agents (a
match, RULES.md §6, separate sheets or 003's shared one), so the rules engine, legality,
what an empty cell would score, the bonus and the record are exactly those of
``jamb-play``; nothing of the rules is restated here.

API (every body and answer is JSON, every POST ``Content-Type: application/json``, even
an empty one; an error is ``{"error": "..."}`` with status 400, 404, 405, 408, 413, 415 or
503 and changes nothing)::

    GET  /api/config                 presets, agents, scoring modes, seat limits
    POST /api/games                  {"ruleset", "seed", "seats": [{"human": NAME} | {"agent": SPEC}],
                                     "scoring", "coach"}
    GET  /api/games/<id>             the table's state (reloads a saved game from its record)
    POST /api/games/<id>/move        a person's move: {"move": "roll", "keep": [positions]}, {"move": "write",
                                     "column", "row"}, {"move": "announce", "row"} or {"move": "action", "action": N}
    POST /api/games/<id>/agent       the agent to move plays one action
    POST /api/games/<id>/hint        {"coach": SPEC} (optional): the coach's move, its reason, the planner's values
    GET  /api/records                the saved games, newest first, as the engine replays them
    GET  /records/<id>.jsonl         a game's record (jamb_env.replay.records, ``jamb-play --replay`` reads it)
    GET  /records/<id>.html          a solitaire game's HTML replay (jamb_env.replay.html, the same page as --html)
    GET  /, /static/<file>           the page and its files

Records: every table's record is written after every move, atomically, to
``<records>/<id>.jsonl`` beside a small ``<id>.json`` with the seats' kinds and names (a
match record names a person ``human``, as ``jamb-play`` does). Ids are random (16 hex
digits), so tables never mix; every request names its table and holds it
(:class:`agents.apps.web.lobby.Lobby`: the bounds on tables, agents and records).

Safe by default: :func:`make_server` binds 127.0.0.1 and accepts only a loopback ``Host``
(DNS rebinding); a request may name only the built-in agents and those the command line
allowed (``--agent``: loading a model file runs the code pickled in it, so a request or a
record never chooses one); presets by name only (no rules file from a request or a
record); bodies are strict JSON objects of known fields, at most 64 KiB, chunked or not
(413, and the connection closed); each read of a request waits at most ``read_timeout``
seconds (408), a whole request (line, headers and body) arrives within twice that or its
connection is cut, and at most ``max_connections`` requests are served at once (503 beyond).
The page shows every name and record text with ``textContent``, and the Content-Security-
Policy lets it run only its own files.
"""

from __future__ import annotations

import contextlib
import io
import ipaddress
import socket
import threading
from collections.abc import Sequence
from importlib import resources

from agents.apps.web.checks import MAX_BODY, NotFound, WebError, check_fields, parse_body, read_body
from agents.apps.web.lobby import Lobby
from agents.apps.web.table import Table
from jamb_env.replay.records import MatchRecord, RecordError
from jamb_env.utils.files import read_regular_bytes

__all__ = ["Lobby", "NotFound", "Table", "WebError", "create_app", "make_server"]

#: the address :func:`make_server` binds unless told otherwise
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: seconds each read of a request (its line, headers and body) may wait
READ_TIMEOUT = 30.0
#: requests served at once; beyond it a connection is answered 503 and closed
MAX_CONNECTIONS = 64
#: bytes of a refused body (413, 408) read and dropped before the connection closes
DRAIN = 2**20
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
#: the page's files: name -> (package, mimetype); sheet.* are the replay page's own
STATIC = {
    "index.html": ("agents.apps.web", "text/html"),
    "page.js": ("agents.apps.web", "text/javascript"),
    "page.css": ("agents.apps.web", "text/css"),
    "sheet.js": ("jamb_env.replay", "text/javascript"),
    "sheet.css": ("jamb_env.replay", "text/css"),
}
#: what the page may load and run: its own files and requests, nothing inline
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
#: the replay page is one self-contained file: its own inline script and style
REPLAY_POLICY = PAGE_POLICY.replace("'self'; style-src 'self'", "'unsafe-inline'; style-src 'unsafe-inline'")


def static_file(name: str) -> tuple[bytes, str]:
    """(content, mimetype) of one of the page's files (:data:`STATIC`)."""
    package, mimetype = STATIC[name]
    return resources.files(package).joinpath("static", name).read_bytes(), mimetype


#: the app's config key of the Host names it answers (:func:`host_name` of each; absent: any)
TRUSTED_HOSTS = "JAMB_TRUSTED_HOSTS"


def host_name(host: str) -> str:
    """The name of a ``Host`` header (or a host given to bind), lowercase, without its port
    or an IPv6 address's brackets: ``'[::1]:8000'`` and ``'::1'`` -> ``'::1'``,
    ``'LOCALHOST:80'`` -> ``'localhost'``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rpartition(":")[0] if host.count(":") == 1 else host


# ---------------------------------------------------------------------- the Flask app
def create_app(lobby: Lobby | None = None, trusted_hosts: Sequence[str] | None = LOOPBACK_HOSTS):
    """The Flask app of ``lobby`` (a new :class:`Lobby` saving to ``games/`` when None).
    ``trusted_hosts``: the ``Host`` names accepted (the loopback names by default;
    None: any, for a server bound to another address on purpose)."""
    from flask import Flask

    lobby = lobby if lobby is not None else Lobby()
    app = Flask(__name__, static_folder=None)  # the page's files: /static/<name> below
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY + 1  # read_body tells a body of MAX_BODY + 1 bytes: too large
    if trusted_hosts is not None:
        app.config[TRUSTED_HOSTS] = {host_name(h) for h in trusted_hosts}
    app.json.sort_keys = False
    app.extensions["jamb_lobby"] = lobby
    _answers(app)
    _game_routes(app, lobby)
    _file_routes(app, lobby)
    return app


def _answers(app) -> None:
    """Errors as JSON, the safety headers, and a refused body's connection closed."""
    from flask import jsonify, request
    from werkzeug.exceptions import HTTPException

    def error(message: str, status: int):
        response = jsonify({"error": message})
        response.status_code = status
        return response

    @app.before_request
    def check_host():  # ours, not werkzeug's TRUSTED_HOSTS: it cut '[::1]' at its first ':' and refused every request
        trusted = app.config.get(TRUSTED_HOSTS)
        given = request.headers.get("Host", "")
        if trusted is not None and host_name(given) not in trusted:
            return error(f"Host {given[:80]!r} is not trusted: this server answers {', '.join(sorted(trusted))}", 400)
        return None

    @app.errorhandler(WebError)
    def web_error(exc: WebError):
        return error(str(exc), exc.status)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return error(f"{exc.name}: {exc.description}", exc.code or 500)

    @app.after_request
    def headers(response):
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        response.headers.setdefault("Content-Security-Policy", PAGE_POLICY)
        if response.status_code in (408, 413):  # the rest of the body is not read: the connection ends here
            response.headers["Connection"] = "close"
            _stop_reading(request.environ)
        return response


def _game_routes(app, lobby: Lobby) -> None:
    from flask import jsonify, request

    def body(optional: bool = False) -> dict:
        """The request's JSON body. Every POST says ``Content-Type: application/json``
        (another site's form or simple request cannot, so it cannot make a move here);
        ``optional``: an empty body is ``{}``."""
        if request.mimetype != "application/json":
            raise WebError("send the body as JSON (Content-Type: application/json)", 415)
        raw = read_body(request.stream, _read_timeout(request.environ))
        if optional and not raw.strip():
            return {}
        return parse_body(raw)

    @app.get("/api/config")
    def config():
        return jsonify(lobby.config())

    @app.post("/api/games")
    def new_game():
        with lobby.create(body()) as table, table.lock:
            response = jsonify(table.state())
        response.status_code = 201
        return response

    @app.get("/api/games/<id>")
    def game(id):
        with lobby.hold(id) as table, table.lock:
            return jsonify(table.state())

    @app.post("/api/games/<id>/move")
    def move(id):
        data = check_fields(body(), ("move", "keep", "column", "row", "action"), "a move")
        with lobby.hold(id) as table, table.lock:
            table.move(data)
            return jsonify(table.state())

    @app.post("/api/games/<id>/agent")
    def agent(id):
        check_fields(body(optional=True), (), "an agent's move")
        with lobby.hold(id) as table, table.lock:
            table.agent_move()
            return jsonify(table.state())

    @app.post("/api/games/<id>/hint")
    def hint(id):
        spec = check_fields(body(optional=True), ("coach",), "a hint request").get("coach")
        spec = None if spec is None else lobby.check_agent(spec)
        with lobby.hold(id) as table, table.lock:
            return jsonify(table.hint(spec))

    @app.get("/api/records")
    def records():
        return jsonify({"games": lobby.saved()})


def _file_routes(app, lobby: Lobby) -> None:
    from flask import Response

    @app.get("/")
    def page():
        return Response(static_file("index.html")[0], mimetype="text/html")

    @app.get("/static/<name>")
    def page_file(name):
        if name not in STATIC:
            raise NotFound(f"no file {name[:40]!r}")
        content, mimetype = static_file(name)
        return Response(content, mimetype=mimetype)

    @app.get("/favicon.ico")
    def favicon():
        return Response(status=204)

    @app.get("/records/<id>.jsonl")
    def record_file(id):
        text = read_regular_bytes(lobby.record_path(id), 256 * 2**20)
        disposition = f"attachment; filename=jamb-{id}.jsonl"
        return Response(text, mimetype="application/x-ndjson", headers={"Content-Disposition": disposition})

    @app.get("/records/<id>.html")
    def record_page(id):
        from jamb_env.replay.html import replay_html

        record = lobby.read_record(id)
        if isinstance(record, MatchRecord):
            raise WebError(
                "the HTML replay is of a solitaire game; replay a match with jamb-play --replay "
                f"(download /records/{id}.jsonl)"
            )
        try:
            page = replay_html(record)
        except RecordError as exc:
            raise WebError(f"the record of game {id} does not replay: {exc}") from None
        return Response(page, mimetype="text/html", headers={"Content-Security-Policy": REPLAY_POLICY})


# ---------------------------------------------------------------------- the server
class _Drain:
    """What werkzeug reads of a request after its answer (it drains the body the app did
    not read before it closes the connection): at most :data:`DRAIN` bytes, each read
    taking what has arrived, so a refused body ends its connection at once."""

    def __init__(self, rfile, left: int = DRAIN):
        self.rfile, self.left = rfile, left

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        data = self.rfile.read1(min(self.left, 65536))
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.rfile.close()


def _stop_reading(environ) -> None:
    """A refused request's connection: the rest of its body is drained boundedly, each
    read waiting a second at most (then werkzeug closes it)."""
    handler = environ.get("jamb.handler")
    if handler is not None:
        handler.connection.settimeout(1.0)
        handler.rfile = _Drain(handler.rfile)


def _read_timeout(environ) -> float:
    handler = environ.get("jamb.handler")
    return handler.timeout if handler is not None else READ_TIMEOUT


def make_server(
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    lobby: Lobby | None = None,
    read_timeout: float | None = None,
    max_connections: int | None = None,
):
    """A threaded WSGI server (werkzeug's) of :func:`create_app` bound to ``host:port``
    (port 0: a free one; ``server.server_port`` says which), not yet serving: call
    ``serve_forever()`` (``shutdown()`` from another thread stops it). A host other than
    loopback accepts any ``Host`` header (which it is, ``server.loopback``, follows the address
    bound, not how ``host`` spells it). Each read of a request waits at most
    ``read_timeout`` seconds (default :data:`READ_TIMEOUT`); at most ``max_connections``
    (default :data:`MAX_CONNECTIONS`) are served at once. Raises OSError when the address
    is taken."""
    from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

    read_timeout = READ_TIMEOUT if read_timeout is None else read_timeout
    max_connections = MAX_CONNECTIONS if max_connections is None else max_connections

    class Handler(WSGIRequestHandler):
        timeout = float(read_timeout)  # socketserver: every read of the connection waits at most this

        def handle_one_request(self):
            # a request trickled in a byte at a time never trips the per-read timeout: past the
            # deadline its reads end (the answer, if one is being written, still goes out)
            deadline = threading.Timer(2 * self.timeout, self._stop_reads)
            deadline.daemon = True
            deadline.start()
            try:
                super().handle_one_request()
            finally:
                deadline.cancel()

        def _stop_reads(self):
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RD)

        def make_environ(self):
            environ = super().make_environ()
            environ["jamb.handler"] = self
            return environ

    class Server(ThreadedWSGIServer):
        slots = threading.BoundedSemaphore(max_connections)

        def process_request(self, request, client_address):
            if not self.slots.acquire(blocking=False):  # every worker busy: refused, not queued without bound
                with contextlib.suppress(OSError):
                    request.sendall(BUSY)
                self.shutdown_request(request)
                return
            try:
                super().process_request(request, client_address)
            except BaseException:
                self.slots.release()
                raise

        def process_request_thread(self, request, client_address):
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.slots.release()

    app = create_app(lobby, trusted_hosts=None)
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            server = Server(host, port, app, handler=Handler)
    except SystemExit:  # werkzeug prints why it cannot bind (an unknown host, a taken port) and exits 1
        why = " ".join(said.getvalue().split()) or "the address cannot be bound"
        raise OSError(why) from None
    # the Host check follows the address bound, however --host spelt it ('LOCALHOST', '0:0:0:0:0:0:0:1', '127.1'):
    # a loopback server answers only loopback names, so another site's page cannot reach it by DNS rebinding
    server.loopback = is_loopback_address(server.socket.getsockname()[0])
    if server.loopback:
        app.config[TRUSTED_HOSTS] = {host_name(h) for h in (*LOOPBACK_HOSTS, host)}
    return server


def is_loopback_address(address: str) -> bool:
    """Whether the numeric ``address`` of a bound socket is loopback (``127.x.x.x``, ``::1``, or
    ``::ffff:127.x.x.x``, IPv4 loopback mapped into IPv6); False for a name or another address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool(ip.is_loopback or (mapped is not None and mapped.is_loopback))


_BUSY_BODY = b'{"error": "the server is busy: try again in a moment"}'
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\n"
    b"Content-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY)
)
