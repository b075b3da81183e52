#!/usr/bin/env bash
#
# bench/debezium/fetch.sh - jars of the Debezium anchor (bench/stream_compare.sh),
# from Maven Central only.
#
#   bash bench/debezium/fetch.sh        prints the cache directory
#
# The runtime closure of io.debezium:debezium-embedded and
# io.debezium:debezium-connector-postgres (DEBEZIUM_VERSION, 3.6.1.Final)
# plus slf4j-simple (a logging backend), resolved by bench/java/fetch.sh
# (bench/java/resolve.py reads the POMs itself: parents, properties, imported
# BOMs, exclusions, nearest wins; no mvn; every jar checked against Central's
# .sha1; idempotent).
#
# Cache: DEBEZIUM_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/debezium/
#   jars/ (~40 MB, 69 jars), classpath.txt, resolve.log
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/env.sh"
exec bash "$HERE/../java/fetch.sh"
