#!/usr/bin/env bash
# test_cqlcli_usage.sh
#	cqlcli's command line as docs/cqlcli.md describes it: every bad option
#	value is a usage error (exit 2, a message naming the value) before any
#	connection is tried, -P is refused, a -p that is no number (cqlsh's
#	password option) is refused without repeating it, long options work,
#	the TLS defaults come from CQL_SSL* and not from libpq's PGSSL*,
#	--help prints the usage and exits 0, and --version prints
#	cql_fdw.control's version.  The host given is a closed port, so a check that wrongly got
#	as far as connecting fails with exit 1.  TAP output; no services
#	(build/cqlcli is built by `make tools`, here when it is missing).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CLI=${CQLCLI:-$HERE/../../build/cqlcli}
# scripts/test.sh builds it (make tools); make check does not: build it here
[ -x "$CLI" ] || make -s -C "$HERE/../.." tools > /dev/null 2>&1
if [ ! -x "$CLI" ]; then
	echo "Bail out! $CLI not built and make tools failed"
	exit 1
fi

echo "1..19"
n=0
# usage_error WHAT PATTERN ARGS...: exit 2 and stderr matching PATTERN
usage_error()
{
	local what=$1 pattern=$2 out rc
	shift 2
	n=$((n + 1))
	if [ "$*" = env ]; then
		out=$(CQL_SSLMODE=prefer "$CLI" -h 127.0.0.1 -p 1 -e "SELECT key FROM system.local" 2>&1 < /dev/null)
	else
		out=$("$CLI" -h 127.0.0.1 -p 1 -e "SELECT key FROM system.local" "$@" 2>&1 < /dev/null)
	fi
	rc=$?
	if [ "$rc" = 2 ] && printf '%s' "$out" | grep -q -- "$pattern"; then
		echo "ok $n - $what (exit 2)"
	else
		echo "not ok $n - $what"
		echo "#   exit $rc, output: $out"
	fi
}

usage_error "a timeout that is no number" 'invalid timeout "abc"' -t abc
usage_error "a timeout of 0" 'invalid timeout "0"' -t 0
usage_error "a port out of range" 'invalid port "70000"' -p 70000
usage_error "protocol version 3" 'invalid protocol version "3"' -v 3
usage_error "compression gzip" 'invalid compression "gzip"' -z gzip
usage_error "an unknown consistency level" 'unknown consistency level "MOST"' -c MOST
usage_error "sslmode prefer" 'invalid sslmode "prefer"' --sslmode prefer
usage_error "an unknown option" 'unknown option "--bogus"' --bogus
usage_error "-P (a password on the command line)" 'CQL_PASSWORD' -P secret
usage_error "an option without its argument" 'option -k needs an argument' -k
usage_error "--password=... is refused too" 'CQL_PASSWORD' --password=secret
usage_error "a long option's value after '='" 'invalid port "70000"' --port=70000
usage_error "a long option's value as the next argument" 'invalid timeout "abc"' --timeout abc
usage_error "sslmode prefer from CQL_SSLMODE names the variable" \
	'invalid sslmode "prefer" from CQL_SSLMODE' env

n=$((n + 1))
out=$("$CLI" --help 2>&1)
if [ $? = 0 ] && printf '%s' "$out" | grep -q '^usage: cqlcli'; then
	echo "ok $n - --help prints the usage and exits 0"
else
	echo "not ok $n - --help prints the usage and exits 0"
fi

# a password given to -p as to cqlsh: refused, and not repeated
n=$((n + 1))
out=$("$CLI" -h 127.0.0.1 -p s3cret-Pw -e "SELECT key FROM system.local" 2>&1 < /dev/null)
rc=$?
if [ "$rc" = 2 ] && printf '%s' "$out" | grep -q 'not the password' &&
	! printf '%s' "$out" | grep -q 's3cret-Pw'; then
	echo "ok $n - -p with no number (cqlsh's password): exit 2, explained, not repeated"
else
	echo "not ok $n - -p with no number (cqlsh's password): exit 2, explained, not repeated"
	echo "#   exit $rc, output: $out"
fi

# libpq's variables are not cqlcli's: PGSSLMODE=prefer is no usage error,
# and PGSSLMODE=require does not turn TLS on (the closed port fails the
# connection: exit 1, without a TLS error)
n=$((n + 1))
out=$(PGSSLMODE=prefer PGSSLROOTCERT=/nonexistent/ca.pem "$CLI" -h 127.0.0.1 -p 1 \
	-e "SELECT key FROM system.local" 2>&1 < /dev/null)
rc=$?
if [ "$rc" = 1 ] && ! printf '%s' "$out" | grep -qi 'sslmode\|TLS\|ca.pem'; then
	echo "ok $n - PGSSLMODE and PGSSLROOTCERT (libpq's) are not read"
else
	echo "not ok $n - PGSSLMODE and PGSSLROOTCERT (libpq's) are not read"
	echo "#   exit $rc, output: $out"
fi

# --version: the version of cql_fdw.control, exit 0
n=$((n + 1))
want=$(sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$HERE/../../cql_fdw.control")
out=$("$CLI" --version 2>&1)
rc=$?
if [ "$rc" = 0 ] && [ -n "$want" ] && [ "$out" = "cqlcli (cql_fdw) $want" ]; then
	echo "ok $n - --version prints cql_fdw.control's version ($want)"
else
	echo "not ok $n - --version prints cql_fdw.control's version"
	echo "#   exit $rc, output: $out, control: $want"
fi

# --help names the exit statuses and cqlcli's own TLS variables
n=$((n + 1))
out=$("$CLI" --help 2>&1)
if printf '%s' "$out" | grep -q 'Exit status' && printf '%s' "$out" | grep -q 'CQL_SSLMODE'; then
	echo "ok $n - --help names the exit statuses and CQL_SSLMODE"
else
	echo "not ok $n - --help names the exit statuses and CQL_SSLMODE"
fi
