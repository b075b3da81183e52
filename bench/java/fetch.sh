#!/usr/bin/env bash
#
# bench/java/fetch.sh - jars of the Java driver anchor, from Maven Central only.
#
#   bash bench/java/fetch.sh        prints the cache directory
#
# Resolves the runtime closure of org.apache.cassandra:java-driver-core and
# at.yawk.lz4:lz4-java (LZ4 frame compression; optional in the driver's POM,
# so named here) plus slf4j-simple (a logging backend, so that the driver's
# warnings are seen) by reading the POMs itself (resolve.py: parents,
# properties, imported BOMs, exclusions, nearest wins); no mvn needed.
# Every jar is checked against Central's .sha1.  Idempotent: a second run
# with the same coordinates does nothing.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/java-driver/
#   jars/            the jars (and poms/, the POMs read)
#   classpath.txt    one jar a line, resolution order
#   resolve.log      the resolved tree
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${JAVA_DRIVER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/java-driver}
DRIVER_VERSION=${DRIVER_VERSION:-4.19.4}
LZ4_VERSION=${LZ4_VERSION:-1.11.4}
SLF4J_VERSION=${SLF4J_VERSION:-1.7.26}     # the slf4j-api the driver's BOM pins
# JAVA_ROOTS: other coordinates (bench/debezium/fetch.sh resolves Debezium's)
ROOTS=${JAVA_ROOTS:-"org.apache.cassandra:java-driver-core:$DRIVER_VERSION at.yawk.lz4:lz4-java:$LZ4_VERSION org.slf4j:slf4j-simple:$SLF4J_VERSION"}

mkdir -p "$DIR/jars"
stamp="$DIR/classpath.stamp"
if [ -s "$DIR/classpath.txt" ] && [ "$(cat "$stamp" 2> /dev/null)" = "$ROOTS" ] &&
	while read -r jar; do [ -s "$jar" ] || exit 1; done < "$DIR/classpath.txt"; then
	echo "$DIR"
	exit 0
fi
python3 "$HERE/resolve.py" "$DIR/jars" $ROOTS > "$DIR/classpath.txt.new" 2> "$DIR/resolve.log" ||
	{ cat "$DIR/resolve.log" >&2; exit 1; }
mv "$DIR/classpath.txt.new" "$DIR/classpath.txt"
echo "$ROOTS" > "$stamp"
echo "fetch.sh: $(wc -l < "$DIR/classpath.txt") jars in $DIR/jars (tree: $DIR/resolve.log)" >&2
echo "$DIR"
