#!/usr/bin/env python3
"""upload_receiver.py DIR — a crash server's minidump endpoint for the `ptrec upload` tests.

Listens on 127.0.0.1 (a free port, written to DIR/port), takes POSTs, checks each body against
RFC 7578 (multipart/form-data) and RFC 2046 (the boundary) with a parser of its own, and
records each request as DIR/req-N.json (path, query, headers, the parts: name, filename,
content type, size, sha256, text value) with each file part's bytes in DIR/req-N.NAME.
The answer comes from DIR/answers, one line per request in order ("200", "429 RETRY_AFTER",
"500", "413", ...; default 200 once the lines run out): 2xx answers carry a Sentry-like
{"id": "<32 hex>"} body.  A body that breaks the RFCs is answered 400 with the reasons, and
the reasons are recorded ("violations") so the test can fail on them.  Exits on SIGTERM.
"""
import hashlib
import http.server
import json
import os
import re
import sys
import urllib.parse

DIR = sys.argv[1]
# RFC 2046 5.1.1: bchars, 1 to 70 of them, not ending in a space.
BCHARS = re.compile(r"^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$")


def params(value):
    """Splits 'type; a=b; c="d"' into ('type', {'a': 'b', 'c': 'd'}) (RFC 7231 3.1.1.1)."""
    parts = re.findall(r';\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)=("(?:[^"\\]|\\.)*"|[^;\s]*)', value)
    out = {}
    for k, v in parts:
        if v.startswith('"'):
            v = re.sub(r'\\(.)', r'\1', v[1:-1])
        k = k.lower()
        if k in out:
            raise ValueError("parameter %s given twice" % k)
        out[k] = v
    return value.split(";", 1)[0].strip().lower(), out


def parse_multipart(ctype, body):
    """Returns (parts, violations) for a multipart/form-data body."""
    bad = []
    mtype, p = params(ctype)
    if mtype != "multipart/form-data":
        return [], ["Content-Type is %r, not multipart/form-data (RFC 7578 4.1)" % mtype]
    boundary = p.get("boundary")
    if not boundary:
        return [], ["no boundary parameter (RFC 7578 4.1)"]
    if not BCHARS.match(boundary):
        bad.append("boundary %r is not 1-70 bchars (RFC 2046 5.1.1)" % boundary)
    delim = b"--" + boundary.encode()
    if not body.startswith(delim + b"\r\n"):
        bad.append("the body does not start with the boundary line")
        return [], bad
    close = b"\r\n" + delim + b"--"
    end = body.find(close)
    if end < 0:
        return [], bad + ["no close delimiter --BOUNDARY-- (RFC 2046 5.1.1)"]
    if body[end + len(close):] not in (b"", b"\r\n"):
        bad.append("bytes after the close delimiter")
    chunks = body[len(delim) + 2:end].split(b"\r\n" + delim + b"\r\n")
    parts = []
    names = set()
    for c in chunks:
        head, sep, data = c.partition(b"\r\n\r\n")
        if not sep:
            if c.startswith(b"\r\n"):  # no header at all
                head, data = b"", c[2:]
            else:
                bad.append("a part without the empty line after its header fields")
                continue
        hdr = {}
        for line in head.split(b"\r\n") if head else []:
            k, colon, v = line.partition(b":")
            if not colon or not k or k != k.strip():
                bad.append("malformed header field %r" % line[:80])
                continue
            hdr[k.decode("ascii").lower()] = v.decode("utf-8").strip()
        for k in hdr:
            if k not in ("content-disposition", "content-type", "content-transfer-encoding"):
                bad.append("header field %r is not allowed in a part (RFC 7578 4.8)" % k)
        if "content-transfer-encoding" in hdr:
            bad.append("Content-Transfer-Encoding is deprecated (RFC 7578 4.7)")
        cd = hdr.get("content-disposition")
        if not cd:
            bad.append("a part without Content-Disposition (RFC 7578 4.2)")
            continue
        try:
            dtype, dp = params(cd)
        except ValueError as e:
            bad.append("Content-Disposition: %s" % e)
            continue
        if dtype != "form-data":
            bad.append("Content-Disposition type %r, not form-data (RFC 7578 4.2)" % dtype)
        if "name" not in dp or not dp["name"]:
            bad.append("a part without a name parameter (RFC 7578 4.2)")
            continue
        if dp["name"] in names:
            bad.append("field %r sent twice" % dp["name"])
        names.add(dp["name"])
        if delim in data:
            bad.append("part %r contains the boundary (RFC 2046 5.1.1)" % dp["name"])
        part = {
            "name": dp["name"],
            "filename": dp.get("filename"),
            "type": hdr.get("content-type", "text/plain").split(";")[0].strip().lower(),
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "data": data,
        }
        if part["filename"] is None:
            try:
                part["value"] = data.decode("utf-8")
            except UnicodeDecodeError:
                bad.append("text field %r is not UTF-8 (RFC 7578 5.1.2)" % dp["name"])
        parts.append(part)
    return parts, bad


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("receiver: " + fmt % args + "\n")

    def answer(self, n):
        try:
            with open(os.path.join(DIR, "answers")) as f:
                lines = [l.split() for l in f if l.strip()]
        except FileNotFoundError:
            lines = []
        return lines[n - 1] if n <= len(lines) else ["200"]

    def do_POST(self):
        n = 1 + len([f for f in os.listdir(DIR) if re.match(r"req-\d+\.json$", f)])
        length = int(self.headers.get("Content-Length", "-1"))
        bad = []
        if length < 0:
            bad.append("no Content-Length")
            body = b""
        else:
            body = self.rfile.read(length)
        url = urllib.parse.urlsplit(self.path)
        parts, v = parse_multipart(self.headers.get("Content-Type", ""), body)
        bad += v
        rec = {
            "path": url.path,
            "query": urllib.parse.parse_qs(url.query),
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "violations": bad,
            "parts": [],
        }
        for p in parts:
            data = p.pop("data")
            if p["filename"] is not None:
                with open(os.path.join(DIR, "req-%d.%s" % (n, p["name"])), "wb") as f:
                    f.write(data)
            rec["parts"].append(p)
        ans = self.answer(n)
        code = int(ans[0])
        rec["answered"] = code
        extra = {}
        if bad:
            code, payload = 400, json.dumps({"detail": "; ".join(bad)})
        elif 200 <= code <= 299:
            rec["id"] = hashlib.md5(body).hexdigest()
            payload = json.dumps({"id": rec["id"]})
        elif code == 429:
            payload = json.dumps({"detail": "rate limited"})
            if len(ans) > 1:
                extra["Retry-After"] = ans[1]
        elif code == 413:
            payload = json.dumps({"detail": "envelope exceeded size limits"})
        else:
            payload = "internal error %d" % n
        with open(os.path.join(DIR, "req-%d.tmp" % n), "w") as f:
            json.dump(rec, f, indent=1)
        os.rename(os.path.join(DIR, "req-%d.tmp" % n), os.path.join(DIR, "req-%d.json" % n))
        data = payload.encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
srv.serve_forever()
