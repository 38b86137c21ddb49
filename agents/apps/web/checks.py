"""Checking what a ``jamb-web`` request sends: every body is a strict JSON object of known
fields, every value of the right type and range, every name plain text. A request that
fails gets :class:`WebError` (its message is the answer's ``error``) and changes nothing."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Sequence

from agents.apps.session import HUMAN
from jamb_env.utils import strict_json

#: the largest request body accepted (bytes)
MAX_BODY = 64 * 1024
#: arrays and objects nested in a request body (the deepest request, a new game's seats, nests 3)
MAX_BODY_DEPTH = 16
#: the longest seat name
MAX_NAME = 40


class WebError(ValueError):
    """A request that cannot be done: its message is the answer's ``error``, ``status``
    its HTTP status (400 a bad request, 404 an unknown game, 408 a body that did not
    arrive, 413 a body over :data:`MAX_BODY`, 415 a body that is not JSON, 503 a full
    records folder)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class NotFound(WebError):
    def __init__(self, message: str):
        super().__init__(message, 404)


def shown(value, limit: int = 60) -> str:
    """``value`` as JSON, cut to ``limit`` characters, for a message."""
    return json.dumps(value)[:limit]


def check_fields(data, allowed: Iterable[str], what: str) -> dict:
    """``data`` if it is a JSON object whose keys are all in ``allowed``; WebError naming
    the unknown ones."""
    allowed = tuple(allowed)
    if not isinstance(data, dict):
        raise WebError(f"{what} must be a JSON object, got {type(data).__name__}")
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise WebError(f"{what}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(allowed)}")
    return data


def integer(value, what: str, lo: int, hi: int) -> int:
    """``value`` if it is an integer (not a bool) in ``lo..hi``; WebError otherwise."""
    if type(value) is not int or not lo <= value <= hi:
        raise WebError(f"{what} must be an integer in {lo}..{hi}, got {shown(value)}")
    return value


def text(value, what: str, choices: Sequence[str] | None = None) -> str:
    """``value`` if it is a non-empty string (one of ``choices`` when given); WebError otherwise."""
    if not isinstance(value, str) or not value:
        raise WebError(f"{what} must be a non-empty string, got {shown(value)}")
    if choices is not None and value not in choices:
        raise WebError(f"{what} {shown(value)} is not one of {', '.join(choices)}")
    return value


#: Letters and signs that show as blank space (Hangul fillers, the blank braille pattern, the
#: object replacement character): a name of only these shows as nothing.
BLANK_LOOKING = frozenset("\u115f\u1160\u3164\uffa0\u2800\ufffc")


def check_name(value) -> str:
    """A person's seat name: 1..MAX_NAME characters after trimming, printable (no control
    or format character: an escape, a bidi override, a zero-width mark; names are data:
    the page shows them as text)."""
    if not isinstance(value, str) or not value.strip():
        raise WebError(f"a person's name is a non-empty string, got {shown(value)}")
    if any(0xD800 <= ord(ch) < 0xE000 for ch in value):  # a lone surrogate: the record would not read back
        raise WebError("a person's name must be valid Unicode (no lone surrogates such as \\ud800)")
    name = unicodedata.normalize("NFC", value.strip())  # one spelling of each name, counted as it shows
    if len(name) > MAX_NAME:
        raise WebError(f"a person's name has at most {MAX_NAME} characters, got {len(name)}")
    # a ruleset's name's rule (str.isprintable): no control or format character (an escape, a
    # bidi override that turns the text after it around, a zero-width mark that shows nothing)
    bad = sorted({ch for ch in name if not ch.isprintable()})
    if bad:
        raise WebError(f"a person's name may not hold control or format characters, got {ascii(''.join(bad))[:60]}")
    if not any(unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_LOOKING for ch in name):
        raise WebError("a person's name must show a letter, a digit or a sign (it shows as nothing)")
    if unicodedata.normalize("NFKC", name).casefold() == HUMAN and name != HUMAN:  # 'HUMAN', fullwidth 'ｈｕｍａｎ'
        name = HUMAN
    return name


def checked_name(value) -> str | None:
    """:func:`check_name` of ``value``, or None where it refuses it (a seats file's name is
    checked as a request's)."""
    try:
        return check_name(value)
    except WebError:
        return None


def parse_body(raw: bytes) -> object:
    """A request body as strict JSON (:func:`jamb_env.utils.strict_json.loads`: no NaN or
    Infinity, no key given twice, at most :data:`MAX_BODY_DEPTH` deep); WebError when it is not."""
    try:
        return strict_json.loads(raw.decode("utf-8"), MAX_BODY_DEPTH)
    except UnicodeDecodeError as exc:
        raise WebError(f"malformed JSON: the body is not UTF-8 ({exc.reason})") from None
    except ValueError as exc:
        raise WebError(f"malformed JSON: {str(exc).removeprefix('not JSON: ')}") from None


def read_body(stream, timeout: float) -> bytes:
    """At most :data:`MAX_BODY` bytes of a request body from ``stream`` (werkzeug's: the
    body as sent, its ``Content-Length`` or its chunks; a reader that raises werkzeug's
    RequestEntityTooLarge past the server's limit). WebError 413 for a longer body, chunked
    or not, and 408 for one cut off or stalled past ``timeout`` seconds."""
    from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge

    parts, size = [], 0
    try:
        while size <= MAX_BODY:
            part = stream.read(MAX_BODY + 1 - size)
            if not part:
                break
            parts.append(part)
            size += len(part)
    except RequestEntityTooLarge:
        size = MAX_BODY + 1
    except (ClientDisconnected, OSError):  # a read timed out (socket.timeout) or the client went away
        raise WebError(f"the request body was cut off or did not arrive within {timeout:g} s", 408) from None
    if size > MAX_BODY:
        raise WebError(f"Request Entity Too Large: a request body is at most {MAX_BODY} bytes", 413)
    return b"".join(parts)
