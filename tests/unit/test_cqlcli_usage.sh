#!/usr/bin/env bash
# test_cqlcli_usage.sh
#	cqlcli's command line as docs/cqlcli.md describes it: every bad option
#	value is a usage error (exit 2, a message naming the value) before any
#	connection is tried, -P is refused, and --help prints the usage and
#	exits 0.  The host given is a closed port, so a check that wrongly got
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

echo "1..11"
n=0
# usage_error WHAT PATTERN ARGS...: exit 2 and stderr matching PATTERN
usage_error()
{
	local what=$1 pattern=$2 out rc
	shift 2
	n=$((n + 1))
	out=$("$CLI" -h 127.0.0.1 -p 1 -e "SELECT key FROM system.local" "$@" 2>&1 < /dev/null)
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

n=$((n + 1))
out=$("$CLI" --help 2>&1)
if [ $? = 0 ] && printf '%s' "$out" | grep -q '^usage: cqlcli'; then
	echo "ok $n - --help prints the usage and exits 0"
else
	echo "not ok $n - --help prints the usage and exits 0"
fi
