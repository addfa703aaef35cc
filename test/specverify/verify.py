#!/usr/bin/python3
"""A verifier of Lethe's deletion certificates and signed reports, written
from docs/certificate.md alone (no other implementation was read while
writing it). Python 3 standard library plus python3-cryptography (Ed25519).

    verify.py KEYS.json DOCUMENT.json [--now TIME] [--require-log]
              [--addendum FILE]...
    verify.py --batch        (JSON array of argument lists on stdin; prints a
                              JSON array of {"stdout", "exit"}: for tests)

Prints `verdict: <verdict>`, the physical, horizon and replay lines when
they apply, a line per addendum, and `reason: ...`; exits 0 for valid, 1
for any other verdict, 2 for a usage error or a refused keys file.

Function names follow the spec's rules: check_3_envelope_members, ...,
check_19_in_log, rule R15, fold A1..A5.
"""

import base64
import hashlib
import io
import json
import re
import sys
import time as _time

MAX_SIZE = 1 << 20  # check 1: 1 MiB
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class Verdict(Exception):
    """The first failed check: a verdict name and a reason."""

    def __init__(self, verdict, reason):
        super().__init__(reason)
        self.verdict = verdict
        self.reason = reason


class Refused(Exception):
    """A keys file the verifier refuses to load, or a usage error (exit 2)."""


# ---------------------------------------------------------------------------
# JSON of the subset (section "JSON")

class Num:
    """A JSON number, kept as written so that integers can be told from 2.0."""

    def __init__(self, raw):
        self.raw = raw

    def __repr__(self):
        return "Num(%s)" % self.raw


_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_PLAIN = re.compile(r'[^"\\\x00-\x1f]+')
_WS = re.compile(r"[ \t\n\r]*")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
MAX_DEPTH = 64


class JSONError(Exception):
    pass


class _Parser:
    def __init__(self, text):
        self.text = text
        self.pos = 0

    def ws(self):
        self.pos = _WS.match(self.text, self.pos).end()

    def value(self, depth):
        self.ws()
        t = self.text
        if self.pos >= len(t):
            raise JSONError("unexpected end of input")
        ch = t[self.pos]
        if ch == "{":
            return self.obj(depth + 1)
        if ch == "[":
            return self.arr(depth + 1)
        if ch == '"':
            return self.string()
        for word, val in (("true", True), ("false", False), ("null", None)):
            if t.startswith(word, self.pos):
                self.pos += len(word)
                return val
        m = _NUMBER.match(t, self.pos)
        if m and m.end() > self.pos:
            self.pos = m.end()
            return Num(m.group())
        raise JSONError("unexpected character at offset %d" % self.pos)

    def obj(self, depth):
        if depth > MAX_DEPTH:
            raise JSONError("nested deeper than %d" % MAX_DEPTH)
        self.pos += 1
        out = {}
        self.ws()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return out
        while True:
            self.ws()
            if not self.text.startswith('"', self.pos):
                raise JSONError("member name expected at offset %d" % self.pos)
            name = self.string()
            if name in out:
                raise JSONError("member %r repeated" % name)
            self.ws()
            if not self.text.startswith(":", self.pos):
                raise JSONError("':' expected at offset %d" % self.pos)
            self.pos += 1
            out[name] = self.value(depth)
            self.ws()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return out
            raise JSONError("',' or '}' expected at offset %d" % self.pos)

    def arr(self, depth):
        if depth > MAX_DEPTH:
            raise JSONError("nested deeper than %d" % MAX_DEPTH)
        self.pos += 1
        out = []
        self.ws()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return out
        while True:
            out.append(self.value(depth))
            self.ws()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return out
            raise JSONError("',' or ']' expected at offset %d" % self.pos)

    def hex4(self):
        digits = self.text[self.pos:self.pos + 4]
        if len(digits) != 4 or not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
            raise JSONError("bad \\u escape at offset %d" % self.pos)
        self.pos += 4
        return int(digits, 16)

    def string(self):
        t = self.text
        self.pos += 1
        parts = []
        while True:
            m = _PLAIN.match(t, self.pos)
            if m:
                parts.append(m.group())
                self.pos = m.end()
            if self.pos >= len(t):
                raise JSONError("unterminated string")
            ch = t[self.pos]
            if ch == '"':
                self.pos += 1
                return "".join(parts)
            if ch != "\\":
                raise JSONError("control character in a string at offset %d" % self.pos)
            esc = t[self.pos + 1:self.pos + 2]
            self.pos += 2
            if esc in _ESCAPES:
                parts.append(_ESCAPES[esc])
                continue
            if esc != "u":
                raise JSONError("bad escape at offset %d" % self.pos)
            code = self.hex4()
            if 0xDC00 <= code <= 0xDFFF:
                raise JSONError("lone low surrogate escape")
            if 0xD800 <= code <= 0xDBFF:
                if not t.startswith("\\u", self.pos):
                    raise JSONError("high surrogate escape not followed by a low one")
                self.pos += 2
                low = self.hex4()
                if not 0xDC00 <= low <= 0xDFFF:
                    raise JSONError("high surrogate escape not followed by a low one")
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            parts.append(chr(code))


def parse_json_subset(data):
    """Parses bytes as JSON of the subset; raises JSONError outside it."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise JSONError("byte order mark")
    try:
        text = data.decode("utf-8", errors="strict")  # rejects encoded surrogates and overlongs
    except UnicodeDecodeError as err:
        raise JSONError("not UTF-8: %s" % err)
    parser = _Parser(text)
    value = parser.value(0)
    parser.ws()
    if parser.pos != len(text):
        raise JSONError("data after the JSON value at offset %d" % parser.pos)
    return value


def is_integer_of_subset(value):
    if not isinstance(value, Num) or not re.fullmatch(r"-?(?:0|[1-9][0-9]*)", value.raw):
        return False
    return INT64_MIN <= int(value.raw) <= INT64_MAX


# ---------------------------------------------------------------------------
# Times (section "Times"): integer nanoseconds since 1970-01-01T00:00:00Z

_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:[0-9]{2})")


def _days_from_civil(year, month, day):
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days):
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


def parse_time(text):
    """Returns nanoseconds since the epoch, or None outside the subset."""
    if not isinstance(text, str):
        return None
    m = _TIME.fullmatch(text)
    if not m:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    month_days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if not 1 <= month <= 12 or not 1 <= day <= month_days[month - 1]:
        return None
    if hour > 23 or minute > 59 or second > 59:
        return None
    fraction = m.group(7) or ""
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    offset = 0
    zone = m.group(8)
    if zone != "Z":
        off_h, off_m = int(zone[1:3]), int(zone[4:6])
        if off_h > 23 or off_m > 59:
            return None
        offset = (off_h * 3600 + off_m * 60) * (1 if zone[0] == "+" else -1)
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset
    return seconds * 1_000_000_000 + nanos


def format_time_utc(nanos):
    """Go's RFC3339Nano in UTC: seconds, a fraction without trailing zeros, Z."""
    seconds, frac = divmod(nanos, 1_000_000_000)
    days, rest = divmod(seconds, 86400)
    year, month, day = _civil_from_days(days)
    out = "%04d-%02d-%02dT%02d:%02d:%02d" % (year, month, day, rest // 3600, rest // 60 % 60, rest % 60)
    if frac:
        out += "." + ("%09d" % frac).rstrip("0")
    return out + "Z"


# ---------------------------------------------------------------------------
# Base64, hex, names

def decode_canonical_base64(text):
    """Standard padded base64 whose re-encoding is the same string, or None."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", text) or len(text) % 4:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    if base64.b64encode(raw).decode("ascii") != text:
        return None
    return raw


def is_lower_hex64(text):
    return isinstance(text, str) and re.fullmatch(r"[0-9a-f]{64}", text) is not None


_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")

# Go's unicode.IsSpace: the White_Space property.
_SPACES = set(map(chr, list(range(0x09, 0x0E)) + [0x20, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B))
                  + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]))


def is_control(ch):
    return ord(ch) <= 0x1F


def is_valid_name(name):
    """A signed-note name: non-empty, no space, no control character, no '+'."""
    return (isinstance(name, str) and name != ""
            and not any(ch in _SPACES or is_control(ch) or ch == "+" for ch in name))


def key_id_of(public_key):
    return "ed25519:" + hashlib.sha256(public_key).hexdigest()[:32]


# ---------------------------------------------------------------------------
# Ed25519 (section "Ed25519")

_P = 2 ** 255 - 19
_L = 2 ** 252 + 27742317777372353535851937790883648493
_D = (-121665 * pow(121666, _P - 2, _P)) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)


def _decode_point(encoded):
    """RFC 8032 5.1.3 with the spec's rules: (x, y) or None. The sign bit of
    x = 0 is not held against the key here: small order refuses it anyway."""
    value = int.from_bytes(encoded, "little")
    sign = value >> 255
    y = value & ((1 << 255) - 1)
    if y >= _P:
        return None
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x2 = u * pow(v, _P - 2, _P) % _P
    if x2 == 0:
        return (0, y)
    x = pow(x2, (_P + 3) // 8, _P)
    if (x * x - x2) % _P != 0:
        x = x * _SQRT_M1 % _P
    if (x * x - x2) % _P != 0:
        return None  # not a square: not a point of the curve
    if x & 1 != sign:
        x = _P - x
    return (x, y)


def _point_add(p1, p2):
    (x1, y1), (x2, y2) = p1, p2
    dxy = _D * x1 * x2 * y1 * y2 % _P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + dxy, _P - 2, _P) % _P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - dxy, _P - 2, _P) % _P
    return (x3, y3)


def weak_key_reason(public_key):
    """Why a trusted key must be refused (non-canonical, off the curve, small order), or None."""
    if len(public_key) != 32:
        return "not 32 bytes"
    if int.from_bytes(public_key, "little") & ((1 << 255) - 1) >= _P:
        return "not a canonical encoding (y is not below 2^255-19)"
    point = _decode_point(public_key)
    if point is None:
        return "not a point of the curve"
    eight = point
    for _ in range(3):
        eight = _point_add(eight, eight)
    if eight == (0, 1):
        return "a point of small order"
    return None


def ed25519_verify(public_key, signature, message):
    """RFC 8032 verification, cofactorless, S below L (a signature with S + L fails)."""
    if len(signature) != 64 or int.from_bytes(signature[32:], "little") >= _L:
        return False
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
        return True
    except (InvalidSignature, ValueError):
        return False


# ---------------------------------------------------------------------------
# Trusted keys file (section "Keys")

def load_keys(data):
    """Returns {"log_origin", "keys": [{"key_id", "public_key", "not_before", "not_after"}]}."""
    if len(data) > MAX_SIZE:
        raise Refused("keys file over 1 MiB")
    try:
        doc = parse_json_subset(data)
    except JSONError as err:
        raise Refused("keys file is not JSON of the subset: %s" % err)
    if not isinstance(doc, dict):
        raise Refused("keys file is not a JSON object")
    if set(doc) != {"log_origin", "keys"}:
        raise Refused("keys file members must be exactly log_origin and keys, found %s" % sorted(doc))
    if not is_valid_name(doc["log_origin"]):
        raise Refused("log_origin is not a signed-note name (non-empty, no space, control character or '+')")
    if not isinstance(doc["keys"], list) or not doc["keys"]:
        raise Refused("keys must be a non-empty array")
    keys = []
    epoch = parse_time("1970-01-01T00:00:00Z")
    for number, entry in enumerate(doc["keys"]):
        where = "keys[%d]" % number
        if not isinstance(entry, dict):
            raise Refused("%s is not an object" % where)
        names = set(entry)
        if not {"key_id", "public_key", "not_before"} <= names or not names <= {"key_id", "public_key", "not_before", "not_after"}:
            raise Refused("%s has members %s; want key_id, public_key, not_before and optionally not_after" % (where, sorted(names)))
        if any(not isinstance(entry[name], str) for name in names):
            raise Refused("%s: every member is a string (null is not allowed)" % where)
        public_key = decode_canonical_base64(entry["public_key"])
        if public_key is None or len(public_key) != 32:
            raise Refused("%s: public_key is not canonical base64 of 32 bytes" % where)
        if entry["key_id"] != key_id_of(public_key):
            raise Refused("%s: key_id is not the id of public_key" % where)
        weak = weak_key_reason(public_key)
        if weak:
            raise Refused("%s: weak key: %s" % (where, weak))
        not_before = parse_time(entry["not_before"])
        if not_before is None or not_before < epoch:
            raise Refused("%s: not_before is not a time of the subset from 1970 on" % where)
        not_after = None
        if "not_after" in entry:
            not_after = parse_time(entry["not_after"])
            if not_after is None or not_after < not_before:
                raise Refused("%s: not_after is not a time of the subset at or after not_before" % where)
        if any(k["key_id"] == entry["key_id"] for k in keys):
            raise Refused("%s: key listed twice" % where)
        keys.append({"key_id": entry["key_id"], "public_key": public_key,
                     "not_before": not_before, "not_after": not_after})
    return {"log_origin": doc["log_origin"], "keys": keys}


def key_by_id(trusted, key_id):
    for key in trusted["keys"]:
        if key["key_id"] == key_id:
            return key
    return None


def in_window(key, instant):
    return key["not_before"] <= instant and (key["not_after"] is None or instant <= key["not_after"])


# ---------------------------------------------------------------------------
# Shapes: member sets and JSON types, with the precedence member > type > value

class Problems:
    def __init__(self):
        self.member, self.type, self.value = [], [], []


STR, INT, BOOL, TIME = "string", "integer", "boolean", "time"


def check_shape(value, shape, where, problems):
    """shape: STR | INT | BOOL | TIME | ("array", elem) | ("object", {name: (shape, required)})."""
    if value is None:
        problems.type.append("%s is null" % where)
        return
    if shape in (STR, TIME):
        if not isinstance(value, str):
            problems.type.append("%s is not a string" % where)
        elif shape == TIME and parse_time(value) is None:
            problems.value.append("%s is not a time of the subset" % where)
        return
    if shape == INT:
        if not isinstance(value, Num):
            problems.type.append("%s is not a number" % where)
        elif not is_integer_of_subset(value):
            problems.value.append("%s is not an integer of the subset" % where)
        return
    if shape == BOOL:
        if not isinstance(value, bool):
            problems.type.append("%s is not a boolean" % where)
        return
    kind, inner = shape
    if kind == "array":
        if not isinstance(value, list):
            problems.type.append("%s is not an array" % where)
            return
        for number, item in enumerate(value):
            check_shape(item, inner, "%s[%d]" % (where, number), problems)
        return
    if not isinstance(value, dict):
        problems.type.append("%s is not an object" % where)
        return
    for name in value:
        if name not in inner:
            problems.member.append("%s has an unknown member %r" % (where, name))
    for name, (member_shape, required) in inner.items():
        if name not in value:
            if required:
                problems.member.append("%s has no member %r" % (where, name))
            continue
        check_shape(value[name], member_shape, "%s.%s" % (where, name), problems)


def obj(**members):
    return ("object", {name: (shape, True) for name, shape in members.items()})


SIGNATURE = obj(alg=STR, key_id=STR, public_key=STR, sig=STR)
LOG = obj(leaf=STR, index=INT, proof=("array", STR), checkpoint=STR)

RELATION = obj(relation=STR, kind=STR, pages=INT, scanned=INT, holding=INT, holding_vector=INT,
               holding_subject=INT, coverage=STR, took_ms=INT)
PHYSICAL = obj(status=STR, reason=STR, method=STR, at=TIME, relations=("array", RELATION))
HORIZON_ENTRY = obj(store=STR, copy=STR, status=STR, until=STR, basis=STR)


def payload_shape(version):
    layer = dict(store=STR, table=STR, requested=INT, deleted=INT, residual=INT, verified_absent=BOOL,
                 verify_method=STR, verify_queries=("array", STR))
    if version >= 2:
        layer["physical"] = PHYSICAL
    members = dict(schema=STR, request_id=STR, issued_at=TIME, valid_until=TIME,
                   subject=obj(hmac_sha256=STR, commitment=STR),
                   scope=("array", obj(store=STR, table=STR)),
                   layers=("array", obj(**layer)),
                   deleted_ids=obj(count=INT, root=STR), rules_sha256=STR, tool=STR,
                   claim=obj(statement=STR, covers=("array", STR), excludes=("array", STR)))
    if version >= 3:
        members["horizon"] = ("array", HORIZON_ENTRY)
    return obj(**members)


REPORT_LAYER = ("object", {"store": (STR, True), "table": (STR, True), "found": (INT, True),
                           "done": (INT, True), "residual": (INT, True), "method": (STR, True),
                           "cutoff": (TIME, False)})
REPORT_PAYLOAD = obj(schema=STR, kind=STR, run_id=STR, at=TIME, layers=("array", REPORT_LAYER))
REPORT_KINDS = ("retention.swept", "reconcile.adopted", "forget.replayed", "forget.physical")
STORES = ("postgres", "pinecone")


# ---------------------------------------------------------------------------
# The envelope shared by certificates and reports (checks 2-11, R2-R11)

def read_document(data):
    """Check 1 and 2: size, then JSON of the subset."""
    if len(data) > MAX_SIZE:
        raise Verdict("oversized", "the input is over 1 MiB")
    try:
        return parse_json_subset(data)
    except JSONError as err:
        raise Verdict("malformed", "not JSON of the subset: %s" % err)


def check_envelope(doc, version_member, trusted):
    """Checks 2-11 (R2-R11). Returns (payload bytes, trusted key, log or None)."""
    if not isinstance(doc, dict):
        raise Verdict("malformed", "the input is not a JSON object")
    # Check 3: the version written 1 exactly, and the members.
    if version_member not in doc:
        raise Verdict("schema_mismatch", "no member %s" % version_member)
    version = doc[version_member]
    if not isinstance(version, Num) or version.raw != "1":
        raise Verdict("schema_mismatch", "%s is not written 1" % version_member)
    shape = {version_member: (INT, True), "payload": (STR, True), "payload_sha256": (STR, True),
             "signature": (SIGNATURE, True), "log": (LOG, False)}
    envelope = {name: value for name, value in doc.items() if not (name == "log" and value is None)}
    problems = Problems()
    check_shape(envelope, ("object", shape), "envelope", problems)
    if problems.member:
        raise Verdict("schema_mismatch", problems.member[0])
    # Check 4: types (null is no type but log's), log.index an integer of the subset.
    if problems.type or problems.value:
        raise Verdict("malformed", (problems.type + problems.value)[0])
    signature = doc["signature"]
    log = doc.get("log")
    # Check 5.
    if signature["alg"] != "ed25519":
        raise Verdict("schema_mismatch", "signature.alg is not ed25519")
    # Check 6: canonical base64 and lengths.
    payload = decode_canonical_base64(doc["payload"])
    if payload is None:
        raise Verdict("malformed", "payload is not canonical base64")
    public_key = decode_canonical_base64(signature["public_key"])
    if public_key is None or len(public_key) != 32:
        raise Verdict("malformed", "signature.public_key is not canonical base64 of 32 bytes")
    sig = decode_canonical_base64(signature["sig"])
    if sig is None or len(sig) != 64:
        raise Verdict("malformed", "signature.sig is not canonical base64 of 64 bytes")
    if not is_lower_hex64(doc["payload_sha256"]):
        raise Verdict("malformed", "payload_sha256 is not 64 lowercase hex digits")
    if log is not None:
        leaf = decode_canonical_base64(log["leaf"])
        if leaf is None:
            raise Verdict("malformed", "log.leaf is not canonical base64")
        proof = []
        for number, item in enumerate(log["proof"]):
            hashed = decode_canonical_base64(item)
            if hashed is None or len(hashed) != 32:
                raise Verdict("malformed", "log.proof[%d] is not canonical base64 of 32 bytes" % number)
            proof.append(hashed)
        index = int(log["index"].raw)
        if index < 0:
            raise Verdict("malformed", "log.index is negative")
        log = {"leaf": leaf, "index": index, "proof": proof, "checkpoint": log["checkpoint"]}
    # Checks 7-9: the key, before any hashing.
    if signature["key_id"] != key_id_of(public_key):
        raise Verdict("key_id_mismatch", "signature.key_id is not the id of signature.public_key")
    key = key_by_id(trusted, signature["key_id"])
    if key is None:
        raise Verdict("unknown_key", "the signing key is not in the trusted keys")
    if key["public_key"] != public_key:
        raise Verdict("key_mismatch", "the embedded key differs from the trusted key of that id")
    # Check 10.
    if hashlib.sha256(payload).hexdigest() != doc["payload_sha256"]:
        raise Verdict("payload_tampered", "payload_sha256 is not the SHA-256 of the payload")
    # Check 11.
    if not ed25519_verify(key["public_key"], sig, payload):
        raise Verdict("bad_signature", "the Ed25519 signature does not verify with the trusted key")
    return payload, key, log


def parse_payload(payload):
    """Check 12 (R12): one JSON object of the subset."""
    try:
        value = parse_json_subset(payload)
    except JSONError as err:
        raise Verdict("malformed", "the payload is not JSON of the subset: %s" % err)
    if not isinstance(value, dict):
        raise Verdict("malformed", "the payload is not a JSON object")
    return value


def check_shape_or_fail(value, shape, where):
    """Checks 13-14 (R13-R14): member problems outrank type problems, which outrank value problems."""
    problems = Problems()
    check_shape(value, shape, where, problems)
    if problems.member:
        raise Verdict("schema_mismatch", problems.member[0])
    if problems.type or problems.value:
        raise Verdict("malformed", (problems.type + problems.value)[0])


# ---------------------------------------------------------------------------
# Transparency log (section "Transparency log")

def parse_checkpoint(note, trusted):
    """Splits and checks a signed note; returns (origin, size, root, text bytes, [(name, key hash, sig)])."""
    if any(is_control(ch) and ch != "\n" for ch in note):
        raise Verdict("not_in_log", "the checkpoint holds a control character")
    split = note.rfind("\n\n")
    if split < 0:
        raise Verdict("not_in_log", "the checkpoint has no blank line before its signatures")
    text, signatures = note[:split + 1], note[split + 2:]
    if not signatures.endswith("\n"):
        raise Verdict("not_in_log", "the checkpoint's signature lines do not end in a newline")
    lines = signatures[:-1].split("\n")
    if not 1 <= len(lines) <= 100:
        raise Verdict("not_in_log", "the checkpoint has %d signature lines; 1 to 100 are allowed" % len(lines))
    parsed = []
    for line in lines:
        if not line.startswith("\u2014 "):
            raise Verdict("not_in_log", "a checkpoint signature line does not start with an em dash")
        rest = line[2:]
        space = rest.find(" ")
        if space < 0:
            raise Verdict("not_in_log", "a checkpoint signature line has no space after its name")
        name, encoded = rest[:space], rest[space + 1:]
        if not is_valid_name(name):
            raise Verdict("not_in_log", "a checkpoint signature line has an invalid name")
        raw = decode_canonical_base64(encoded)
        if raw is None or len(raw) < 5:
            raise Verdict("not_in_log", "a checkpoint signature line is not canonical base64 of at least 5 bytes")
        parsed.append((name, raw[:4], raw[4:]))
    body = text.split("\n")[:-1]  # text ends in a newline
    if len(body) < 3:
        raise Verdict("not_in_log", "the checkpoint body has fewer than three lines")
    origin, size_text, root_text = body[0], body[1], body[2]
    if any(line == "" for line in body[3:]):
        raise Verdict("not_in_log", "the checkpoint has an empty extension line")
    if not re.fullmatch(r"0|[1-9][0-9]*", size_text) or int(size_text) > INT64_MAX:
        raise Verdict("not_in_log", "the checkpoint's tree size is not canonical decimal below 2^63")
    root = decode_canonical_base64(root_text)
    if root is None or len(root) != 32:
        raise Verdict("not_in_log", "the checkpoint's root hash is not canonical base64 of 32 bytes")
    return origin, int(size_text), root, text.encode("utf-8"), parsed


def check_checkpoint(note, trusted, issued_at):
    """Accepts a checkpoint (rules 1-3 of "Transparency log"); returns (size, root)."""
    origin, size, root, text, signatures = parse_checkpoint(note, trusted)
    if origin != trusted["log_origin"]:
        raise Verdict("not_in_log", "the checkpoint is of another log origin")
    vouching = False
    for name, key_hash, sig in signatures:
        if name != origin:
            continue
        for key in trusted["keys"]:
            hashed = hashlib.sha256(name.encode("utf-8") + b"\n\x01" + key["public_key"]).digest()[:4]
            if hashed != key_hash:
                continue
            if not ed25519_verify(key["public_key"], sig, text):
                raise Verdict("not_in_log", "a checkpoint signature line by a trusted key does not verify")
            if key["not_after"] is None or key["not_after"] >= issued_at:
                vouching = True
    if not vouching:
        raise Verdict("not_in_log", "no trusted key whose window had not ended before issuance signed the checkpoint")
    return size, root


def _node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def inclusion_root(index, size, leaf_hash, proof):
    """RFC 9162 section 2.1.3.2: the root the proof leads to, or None."""
    if index >= size:
        return None
    fn, sn, result = index, size - 1, leaf_hash
    for sibling in proof:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            result = _node_hash(sibling, result)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            result = _node_hash(result, sibling)
        fn >>= 1
        sn >>= 1
    return result if sn == 0 else None


def check_in_log(log, expected_leaf, trusted, instant):
    """Check 19 (R17) once the log section is present."""
    if log["leaf"] != expected_leaf:
        raise Verdict("not_in_log", "the log leaf is not the event this document's log entry must be")
    size, root = check_checkpoint(log["checkpoint"], trusted, instant)
    if log["index"] >= size:
        raise Verdict("not_in_log", "log.index is not below the checkpoint's tree size")
    leaf_hash = hashlib.sha256(b"\x00" + log["leaf"]).digest()
    if inclusion_root(log["index"], size, leaf_hash, log["proof"]) != root:
        raise Verdict("not_in_log", "the inclusion proof does not lead to the checkpoint's root")


# ---------------------------------------------------------------------------
# Certificates (section "Verifying")

def check_15_consistent(p, version):
    """The payload's consistency (Payload, Physical state, Erasure horizon)."""
    if not _ID.fullmatch(p["request_id"]):
        raise Verdict("malformed", "request_id is not 1 to 128 of A-Z a-z 0-9 . _ : -")
    for entry in p["scope"]:
        if entry["store"] not in STORES:
            raise Verdict("malformed", "a scope store is not postgres or pinecone")
    for where, value in (("subject.hmac_sha256", p["subject"]["hmac_sha256"]),
                         ("subject.commitment", p["subject"]["commitment"]),
                         ("deleted_ids.root", p["deleted_ids"]["root"]), ("rules_sha256", p["rules_sha256"])):
        if not is_lower_hex64(value):
            raise Verdict("malformed", "%s is not 64 lowercase hex digits" % where)
    if not parse_time(p["valid_until"]) > parse_time(p["issued_at"]):
        raise Verdict("malformed", "valid_until is not after issued_at")
    counts = [int(p["deleted_ids"]["count"].raw)]
    for layer in p["layers"]:
        counts += [int(layer[name].raw) for name in ("requested", "deleted", "residual")]
    if any(count < 0 for count in counts):
        raise Verdict("malformed", "a count is negative")
    scope_pairs = [(e["store"], e["table"]) for e in p["scope"]]
    if len(set(scope_pairs)) != len(scope_pairs):
        raise Verdict("malformed", "a scope entry is listed twice")
    layer_pairs = [(layer["store"], layer["table"]) for layer in p["layers"]]
    if sorted(layer_pairs) != sorted(scope_pairs):
        raise Verdict("malformed", "the layers do not name exactly the pairs of the scope, each once")
    for layer in p["layers"]:
        if layer["verified_absent"] and int(layer["residual"].raw) != 0:
            raise Verdict("malformed", "a layer verified absent has residual records")
    if int(p["deleted_ids"]["count"].raw) != sum(int(layer["deleted"].raw) for layer in p["layers"]):
        raise Verdict("malformed", "deleted_ids.count is not the sum of the layers' deleted")
    if version >= 2:
        for layer in p["layers"]:
            check_physical_section(layer["physical"])
    if version >= 3:
        check_horizon(p["horizon"], scope_pairs)


def check_physical_section(physical):
    status, relations = physical["status"], physical["relations"]
    if status not in ("scanned", "not_possible", "nothing_deleted", "not_scanned"):
        raise Verdict("malformed", "physical.status %r is not one of the four" % status)
    if (status == "scanned") != bool(relations):
        raise Verdict("malformed", "a scanned section lists at least one relation, any other none")
    total_pages = 0
    for rel in relations:
        pages, scanned, holding, vector, subject, took = (
            int(rel[name].raw) for name in ("pages", "scanned", "holding", "holding_vector", "holding_subject", "took_ms"))
        if min(pages, scanned, holding, vector, subject, took) < 0:
            raise Verdict("malformed", "a relation's count is negative")
        if not (scanned <= pages and holding <= scanned and vector <= holding and subject <= holding
                and holding <= vector + subject):
            raise Verdict("malformed", "a relation's page counts contradict each other")
        if rel["coverage"] not in ("all", "targeted+sample"):
            raise Verdict("malformed", "a relation's coverage is not all or targeted+sample")
        if rel["coverage"] == "all" and scanned != pages:
            raise Verdict("malformed", "coverage all with pages left unscanned")
        total_pages += pages
    if total_pages > INT64_MAX:
        raise Verdict("malformed", "the relations' pages sum above 2^63-1")


HORIZON_COPIES = {"pg_wal": ("postgres",), "wal_archive": ("postgres",), "replicas": ("postgres",),
                  "provider_purge": ("pinecone",), "backups": ("postgres", "pinecone")}


def check_horizon(horizon, scope_pairs):
    if not horizon:
        raise Verdict("malformed", "the horizon is empty")
    stores = {store for store, _ in scope_pairs}
    for entry in horizon:
        if entry["copy"] not in HORIZON_COPIES or entry["store"] not in HORIZON_COPIES[entry["copy"]]:
            raise Verdict("malformed", "horizon copy %r does not belong to store %r" % (entry["copy"], entry["store"]))
        if entry["store"] not in stores:
            raise Verdict("malformed", "a horizon store has no layer in scope")
        if entry["status"] not in ("dated", "conditional", "unknown"):
            raise Verdict("malformed", "a horizon status is not dated, conditional or unknown")
        if entry["basis"] == "":
            raise Verdict("malformed", "a horizon basis is empty")
        if entry["status"] == "dated":
            if parse_time(entry["until"]) is None:
                raise Verdict("malformed", "a dated horizon entry's until is not a time of the subset")
        elif entry["until"] != "":
            raise Verdict("malformed", "an undated horizon entry has an until")


SCHEMAS = {"lethe.certificate/v1": 1, "lethe.certificate/v2": 2, "lethe.certificate/v3": 3}


def verify_certificate(doc, trusted, now):
    """Checks 2-20; returns the payload of a valid certificate, raises Verdict otherwise."""
    payload_bytes, key, log = check_envelope(doc, "lethe_certificate", trusted)
    p = parse_payload(payload_bytes)
    schema = p.get("schema")
    if not isinstance(schema, str) or schema not in SCHEMAS:
        raise Verdict("schema_mismatch", "the payload schema is not lethe.certificate/v1, v2 or v3")
    version = SCHEMAS[schema]
    check_shape_or_fail(p, payload_shape(version), "payload")
    check_15_consistent(p, version)
    issued_at = parse_time(p["issued_at"])
    if not in_window(key, issued_at):  # check 16
        raise Verdict("unknown_key", "issued_at is outside the signing key's window")
    if issued_at > now:  # check 17
        raise Verdict("not_yet_valid", "issued_at is after the instant of verification")
    if now > parse_time(p["valid_until"]):  # check 18
        raise Verdict("expired", "the instant of verification is after valid_until")
    if log is None:  # check 19
        raise Verdict("not_in_log", "the certificate has no log section")
    leaf = ('{"v":1,"event":"forget.completed","request_id":"%s","certificate_sha256":"%s"}'
            % (p["request_id"], doc["payload_sha256"])).encode("ascii")
    check_in_log(log, leaf, trusted, issued_at)
    if not p["scope"]:  # check 20
        raise Verdict("incomplete", "the scope is empty: nothing was checked")
    for layer in p["layers"]:
        if not layer["verified_absent"] or int(layer["residual"].raw) != 0:
            raise Verdict("incomplete", "layer %s %s is not verified empty" % (layer["store"], layer["table"]))
    p["_log_index"] = log["index"]
    return p


def physical_state(physical):
    """A layer's <state> in the physical line."""
    status = physical["status"]
    if status == "scanned":
        rels = physical["relations"]
        holding = sum(int(r["holding"].raw) for r in rels)
        scanned = sum(int(r["scanned"].raw) for r in rels)
        pages = sum(int(r["pages"].raw) for r in rels)
        if holding > 0:
            return "%d of %d pages scanned still hold the bytes" % (holding, scanned)
        if all(r["coverage"] == "all" for r in rels):
            return "clean in all %d pages" % scanned
        return "clean in the %d pages scanned of %d" % (scanned, pages)
    return {"not_possible": "scan not possible", "nothing_deleted": "nothing deleted to look for",
            "not_scanned": "not scanned"}[status]


def certified_states(p):
    version = SCHEMAS[p["schema"]]
    return [((layer["store"], layer["table"]),
             physical_state(layer["physical"]) if version >= 2 else "not scanned") for layer in p["layers"]]


def horizon_line(p):
    parts = []
    for entry in p["horizon"]:
        state = {"dated": "until " + entry["until"], "conditional": "until a condition holds",
                 "unknown": "unknown"}[entry["status"]]
        parts.append("%s %s: %s" % (entry["store"], entry["copy"], state))
    return "; ".join(parts)


# ---------------------------------------------------------------------------
# Reports (section "Verifying a report")

def verify_report(doc, trusted, now, require_log):
    """R2-R17; returns (payload, log index or None), raises Verdict otherwise."""
    payload_bytes, key, log = check_envelope(doc, "lethe_report", trusted)
    p = parse_payload(payload_bytes)
    # R13: schema and kind first.
    if p.get("schema") != "lethe.report/v1":
        raise Verdict("schema_mismatch", "the payload schema is not lethe.report/v1")
    if p.get("kind") not in REPORT_KINDS:
        raise Verdict("schema_mismatch", "the report kind is not one of %s" % ", ".join(REPORT_KINDS))
    check_shape_or_fail(p, REPORT_PAYLOAD, "payload")
    rule_r15(p)
    at = parse_time(p["at"])
    if not in_window(key, at):
        raise Verdict("unknown_key", "at is outside the signing key's window")
    if at > now:
        raise Verdict("not_yet_valid", "at is after the instant of verification")
    if log is None:
        if require_log:
            raise Verdict("not_in_log", "the report has no log section and the log is required")
        return p, None
    leaf = ('{"v":1,"event":"%s","request_id":"%s","report_sha256":"%s"}'
            % (p["kind"], p["run_id"], doc["payload_sha256"])).encode("ascii")
    check_in_log(log, leaf, trusted, at)
    return p, log["index"]


def rule_r15(p):
    if not _ID.fullmatch(p["run_id"]):
        raise Verdict("malformed", "run_id is not 1 to 128 of A-Z a-z 0-9 . _ : -")
    seen = set()
    for layer in p["layers"]:
        if layer["store"] not in STORES:
            raise Verdict("malformed", "a layer's store is not postgres or pinecone")
        pair = (layer["store"], layer["table"])
        if pair in seen:
            raise Verdict("malformed", "a layer is listed twice")
        seen.add(pair)
        found, done, residual = (int(layer[name].raw) for name in ("found", "done", "residual"))
        if min(found, done, residual) < 0:
            raise Verdict("malformed", "a layer's count is negative")
        if done > found:
            raise Verdict("malformed", "done is more than found")
        if ("cutoff" in layer) != (p["kind"] == "retention.swept"):
            raise Verdict("malformed", "a cutoff belongs in every layer of a sweep and in no other kind's")
        if p["kind"] == "reconcile.adopted" and residual != 0:
            raise Verdict("malformed", "a reconcile's residual is not 0")
        if p["kind"] == "forget.physical" and done + residual != found:
            raise Verdict("malformed", "a re-scan's free and holding pages do not add up to those scanned")


# ---------------------------------------------------------------------------
# Addenda (section "Addenda")

def check_addendum(data, p, trusted, now):
    """A1-A5; returns (report payload, log index) of a folded addendum, raises Verdict otherwise."""
    doc = read_document(data)  # R1, R2: the verdicts the file gets alone
    if not isinstance(doc, dict):
        raise Verdict("malformed", "the addendum is not a JSON object")
    if "lethe_report" not in doc:
        raise Verdict("schema_mismatch", "the addendum is no signed report (no member lethe_report)")
    report, index = verify_report(doc, trusted, now, require_log=True)  # A1
    if report["kind"] not in ("forget.physical", "forget.replayed"):  # A2
        raise Verdict("not_this_certificate", "a %s report is no addendum" % report["kind"])
    if report["run_id"] != p["request_id"]:  # A3
        raise Verdict("not_this_certificate", "the addendum is of another request")
    if parse_time(report["at"]) < parse_time(p["issued_at"]):  # A4
        raise Verdict("predates_certificate", "the addendum is dated before the certificate was issued")
    if report["kind"] == "forget.physical":  # A5
        layers = {(layer["store"], layer["table"]) for layer in p["layers"]}
        for layer in report["layers"]:
            if (layer["store"], layer["table"]) not in layers:
                raise Verdict("not_this_certificate", "the re-scan names a layer the certificate does not have")
    return report, index


def newest(folded):
    return max(folded, key=lambda item: (parse_time(item[0]["at"]), item[1]))


def fold_lines(p, folded):
    """The physical line and the replay line (either may be None)."""
    version = SCHEMAS[p["schema"]]
    physical_reports = [item for item in folded if item[0]["kind"] == "forget.physical"]
    parts = []
    for pair, state in certified_states(p):
        naming = [item for item in physical_reports
                  if any((layer["store"], layer["table"]) == pair for layer in item[0]["layers"])]
        text = "%s %s: %s" % (pair[0], pair[1], state)
        if naming:
            report, index = newest(naming)
            layer = next(layer for layer in report["layers"] if (layer["store"], layer["table"]) == pair)
            found, residual = int(layer["found"].raw), int(layer["residual"].raw)
            if residual > 0:
                later = "bytes in %d of %d pages scanned" % (residual, found)
            elif found > 0:
                later = "no bytes in %d pages scanned" % found
            else:
                later = "no pages scanned"
            text += " (certified) -> %s at %s (addendum, log index %d)" % (
                later, format_time_utc(parse_time(report["at"])), index)
        parts.append(text)
    physical = "; ".join(parts) if (version >= 2 or physical_reports) else None
    replay = None
    replays = [item for item in folded if item[0]["kind"] == "forget.replayed"]
    if replays:
        report, index = newest(replays)
        sums = [sum(int(layer[name].raw) for layer in report["layers"]) for name in ("found", "done", "residual")]
        replay = ("re-applied after a restore at %s: %d records came back, %d deleted, %d left (addendum, log index %d)"
                  % (format_time_utc(parse_time(report["at"])), sums[0], sums[1], sums[2], index))
    return physical, replay


# ---------------------------------------------------------------------------
# Command line

USAGE = "usage: verify.py KEYS.json DOCUMENT.json|- [--now TIME] [--require-log] [--addendum FILE]..."


def read_limited(path, stdin):
    if path == "-":
        return stdin.read(MAX_SIZE + 1)
    with open(path, "rb") as handle:
        return handle.read(MAX_SIZE + 1)


def run(argv, out, stdin):
    """Runs one verification; writes its lines to out and returns the exit status."""
    positional, addenda, now_text, require_log = [], [], None, False
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--require-log":
            require_log = True
        elif arg in ("--now", "--addendum"):
            if not args:
                out.write("%s needs a value\n%s\n" % (arg, USAGE))
                return 2
            value = args.pop(0)
            if arg == "--now":
                now_text = value
            else:
                addenda.append(value)
        elif arg.startswith("--") and arg != "-":
            out.write("unknown flag %s\n%s\n" % (arg, USAGE))
            return 2
        else:
            positional.append(arg)
    if len(positional) != 2:
        out.write(USAGE + "\n")
        return 2
    if now_text is None:
        now = _time.time_ns()
    else:
        now = parse_time(now_text)
        if now is None:
            out.write("--now %r is not a time of the subset (YYYY-MM-DDTHH:MM:SS[.F](Z|+HH:MM))\n" % now_text)
            return 2
    try:
        trusted = load_keys(read_limited(positional[0], stdin))
        data = read_limited(positional[1], stdin)
        addendum_data = [read_limited(name, stdin) for name in addenda]
    except (OSError, Refused) as err:
        out.write("cannot load: %s\n" % err)
        return 2

    try:
        doc = read_document(data)
        is_report = isinstance(doc, dict) and "lethe_report" in doc
    except Verdict:
        is_report = False
    if is_report and addenda:
        out.write("--addendum goes beside a certificate, not a signed report\n")
        return 2
    if is_report:
        try:
            _, index = verify_report(doc, trusted, now, require_log)
        except Verdict as verdict:
            out.write("verdict: %s\nreason: %s\n" % (verdict.verdict, verdict.reason))
            return 1
        out.write("verdict: valid\n")
        out.write("reason: not logged\n" if index is None else "reason: signed, logged at index %d\n" % index)
        return 0

    try:
        p = verify_certificate(read_document(data), trusted, now)
    except Verdict as verdict:
        out.write("verdict: %s\n" % verdict.verdict)
        if addenda:
            out.write("addenda: none folded: the certificate is not valid\n")
        out.write("reason: %s\n" % verdict.reason)
        return 1
    folded, lines, status = [], [], 0
    for name, addendum in zip(addenda, addendum_data):
        try:
            report, index = check_addendum(addendum, p, trusted, now)
            folded.append((report, index))
            lines.append("addendum %s: valid: folded" % name)
        except Verdict as verdict:
            lines.append("addendum %s: %s: %s" % (name, verdict.verdict, verdict.reason))
            status = 1
    physical, replay = fold_lines(p, folded)
    out.write("verdict: valid\n")
    if physical is not None:
        out.write("physical: %s\n" % physical)
    if SCHEMAS[p["schema"]] >= 3:
        out.write("horizon: %s\n" % horizon_line(p))
    if replay is not None:
        out.write("replay: %s\n" % replay)
    for line in lines:
        out.write(line + "\n")
    out.write("reason: a complete erasure, signed by a trusted key, in the operator's log at index %d\n"
              % p["_log_index"])
    return status


def run_safely(argv, out, stdin):
    """A verifier MUST NOT fail on any input: an unexpected error is reported, never a verdict."""
    try:
        return run(argv, out, stdin)
    except RecursionError:
        out.write("internal error: recursion\n")
        return 3
    except Exception as err:  # noqa: BLE001 - reported plainly, exit 3, so tests see it
        out.write("internal error: %r\n" % err)
        return 3


def main():
    if sys.argv[1:] == ["--batch"]:
        results = []
        for argv in json.load(sys.stdin):
            out = io.StringIO()
            status = run_safely(argv, out, io.BytesIO())
            results.append({"stdout": out.getvalue(), "exit": status})
        json.dump(results, sys.stdout)
        return 0
    status = run_safely(sys.argv[1:], sys.stdout, sys.stdin.buffer)
    return status


if __name__ == "__main__":
    sys.exit(main())
