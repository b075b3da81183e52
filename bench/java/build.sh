#!/usr/bin/env bash
#
# bench/java/build.sh - compile bench/java/src into the cache (nothing in the repo).
#
#   bash bench/java/build.sh        prints the classpath to run with
#
# Fetches the jars first (fetch.sh).  Output: $DIR/classes, where DIR is the
# cache of fetch.sh (${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/java-driver).
# Recompiles only when a source is newer than the last build.  Needs javac
# (Debian: openjdk-17-jdk-headless); JAVAC overrides it.  JAVA_SRC (the
# sources, default bench/java/src) and JAVA_RELEASE (11) let another anchor
# use it (bench/debezium/build.sh).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(bash "$HERE/fetch.sh")
JAVAC=${JAVAC:-javac}
SRC=${JAVA_SRC:-$HERE/src}
CP=$(paste -sd: "$DIR/classpath.txt")
OUT=$DIR/classes
stamp=$OUT/.built
if [ ! -f "$stamp" ] || [ -n "$(find "$SRC" -name '*.java' -newer "$stamp")" ] ||
	[ "$DIR/classpath.txt" -nt "$stamp" ]; then
	rm -rf "$OUT"
	mkdir -p "$OUT"
	find "$SRC" -name '*.java' > "$DIR/sources.txt"
	"$JAVAC" -nowarn --release "${JAVA_RELEASE:-11}" -encoding UTF-8 -cp "$CP" -d "$OUT" @"$DIR/sources.txt" >&2
	touch "$stamp"
	echo "build.sh: compiled into $OUT" >&2
fi
echo "$OUT:$CP"
