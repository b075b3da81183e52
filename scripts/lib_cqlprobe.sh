# shellcheck shell=bash
# scripts/lib_cqlprobe.sh - protocol-level readiness probes for a CQL node.
#
# Sourced, never executed.  No driver and nothing downloaded: the OPTIONS
# probe is plain bash (/dev/tcp), the login probe a few lines of Python
# standard library speaking native protocol v4.

# cql_options_probe HOST PORT
#	Send a v4 OPTIONS frame (version 0x04, flags 0, stream 0, opcode 0x05,
#	empty body) and expect a SUPPORTED response header (0x84 .. opcode 0x06).
#	A port that is merely open (the JVM binds it late, but a proxy or
#	another program might hold it) does not count as ready.
cql_options_probe()
{
	local host=$1 port=$2 hdr
	hdr=$(timeout 5 bash -c '
		exec 3<>"/dev/tcp/$0/$1" || exit 1
		printf "\x04\x00\x00\x00\x05\x00\x00\x00\x00" >&3
		head -c 9 <&3 | od -An -tx1' "$host" "$port" 2>/dev/null) || return 1
	set -- $hdr
	[ "$#" -eq 9 ] && [ "$1" = 84 ] && [ "$5" = 06 ]
}

# cql_tls_probe HOST PORT CERT_DIR
#	OPTIONS -> SUPPORTED over TLS, verifying the node against CERT_DIR/ca.pem
#	and presenting CERT_DIR/client.pem (for nodes that require it).
cql_tls_probe()
{
	local py=/usr/bin/python3
	[ -x "$py" ] || py=python3
	timeout 5 "$py" - "$@" > /dev/null 2>&1 <<'PY'
import socket, ssl, sys
host, port, d = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ctx = ssl.create_default_context(cafile=d + "/ca.pem")
ctx.load_cert_chain(d + "/client.pem", d + "/client.key")
with socket.create_connection((host, port), timeout=4) as raw:
    with ctx.wrap_socket(raw, server_hostname=host) as s:
        s.sendall(bytes([4, 0, 0, 0, 5, 0, 0, 0, 0]))
        hdr = b""
        while len(hdr) < 9:
            chunk = s.recv(9 - len(hdr))
            if not chunk:
                sys.exit(1)
            hdr += chunk
        sys.exit(0 if hdr[0] == 0x84 and hdr[4] == 6 else 1)
PY
}

# cql_login_probe HOST PORT USER PASSWORD
#	STARTUP, then answer AUTHENTICATE with SASL PLAIN; succeed only on
#	AUTH_SUCCESS.  Also succeeds on READY (no authenticator configured).
#	Prints the server's error message on failure.
cql_login_probe()
{
	local py=/usr/bin/python3
	[ -x "$py" ] || py=python3
	timeout 10 "$py" - "$@" <<'PY'
import socket, struct, sys

host, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def frame(opcode, body):
    return struct.pack(">BBhBi", 0x04, 0, 1, opcode, len(body)) + body

def read_frame(s):
    def exact(n):
        out = b""
        while len(out) < n:
            chunk = s.recv(n - len(out))
            if not chunk:
                raise SystemExit("connection closed")
            out += chunk
        return out
    ver, flags, stream, opcode, length = struct.unpack(">BBhBi", exact(9))
    if ver != 0x84 or length < 0 or length > 1 << 20:
        raise SystemExit("bad response header")
    return opcode, exact(length)

def error_text(body):
    if len(body) >= 6:
        n = struct.unpack(">H", body[4:6])[0]
        return body[6:6 + n].decode("utf-8", "replace")
    return "?"

def string(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b

s = socket.create_connection((host, port), timeout=5)
s.sendall(frame(0x01, struct.pack(">H", 1) + string("CQL_VERSION") + string("3.0.0")))
op, body = read_frame(s)
if op == 0x02:              # READY: no authentication required
    sys.exit(0)
if op != 0x03:              # AUTHENTICATE
    sys.exit("STARTUP answered with opcode %d: %s" % (op, error_text(body) if op == 0 else ""))
token = b"\0" + user.encode() + b"\0" + password.encode()
s.sendall(frame(0x0F, struct.pack(">i", len(token)) + token))
op, body = read_frame(s)
if op == 0x10:              # AUTH_SUCCESS
    sys.exit(0)
sys.exit("login failed: " + (error_text(body) if op == 0 else "opcode %d" % op))
PY
}
