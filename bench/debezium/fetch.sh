#!/usr/bin/env bash
#
# bench/debezium/fetch.sh - jars of the Debezium anchor (bench/stream_compare.sh),
# from Maven Central only.
#
#   bash bench/debezium/fetch.sh        prints the cache directory
#
# Resolves the runtime closure of io.debezium:debezium-embedded and
# io.debezium:debezium-connector-postgres (3.6.1.Final) plus slf4j-simple (a
# logging backend) with bench/java/resolve.py (reads the POMs itself:
# parents, properties, imported BOMs, exclusions, nearest wins; no mvn);
# every jar is checked against Central's .sha1.  Idempotent: a second run with
# the same coordinates does nothing.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/debezium/
#   jars/            the jars (~40 MB; and poms/, the POMs read)
#   classpath.txt    one jar a line, resolution order
#   resolve.log      the resolved tree
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${DEBEZIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/debezium}
DEBEZIUM_VERSION=${DEBEZIUM_VERSION:-3.6.1.Final}
SLF4J_VERSION=${SLF4J_VERSION:-1.7.36}
ROOTS="io.debezium:debezium-embedded:$DEBEZIUM_VERSION io.debezium:debezium-connector-postgres:$DEBEZIUM_VERSION org.slf4j:slf4j-simple:$SLF4J_VERSION"

mkdir -p "$DIR/jars"
stamp="$DIR/classpath.stamp"
if [ -s "$DIR/classpath.txt" ] && [ "$(cat "$stamp" 2> /dev/null)" = "$ROOTS" ] &&
	while read -r jar; do [ -s "$jar" ] || exit 1; done < "$DIR/classpath.txt"; then
	echo "$DIR"
	exit 0
fi
# shellcheck disable=SC2086
python3 "$HERE/../java/resolve.py" "$DIR/jars" $ROOTS > "$DIR/classpath.txt.new" 2> "$DIR/resolve.log" ||
	{ cat "$DIR/resolve.log" >&2; exit 1; }
mv "$DIR/classpath.txt.new" "$DIR/classpath.txt"
echo "$ROOTS" > "$stamp"
echo "fetch.sh: $(wc -l < "$DIR/classpath.txt") jars in $DIR/jars (tree: $DIR/resolve.log)" >&2
echo "$DIR"
