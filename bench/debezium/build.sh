#!/usr/bin/env bash
#
# bench/debezium/build.sh - compile bench/debezium/src into the cache.
#
#   bash bench/debezium/build.sh        prints the classpath to run with
#
# Fetches the jars first (fetch.sh).  Output: $DIR/classes (DIR: the cache
# of fetch.sh).  Recompiles only when a source is newer than the last build.
# Needs javac 11+ (Debian: openjdk-17-jdk-headless); JAVAC overrides it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(bash "$HERE/fetch.sh")
JAVAC=${JAVAC:-javac}
CP=$(paste -sd: "$DIR/classpath.txt")
OUT=$DIR/classes
stamp=$OUT/.built
if [ ! -f "$stamp" ] || [ -n "$(find "$HERE/src" -name '*.java' -newer "$stamp")" ] ||
	[ "$DIR/classpath.txt" -nt "$stamp" ]; then
	rm -rf "$OUT"
	mkdir -p "$OUT"
	"$JAVAC" -nowarn --release 17 -encoding UTF-8 -cp "$CP" -d "$OUT" "$HERE"/src/*.java >&2
	touch "$stamp"
	echo "build.sh: compiled into $OUT" >&2
fi
echo "$OUT:$CP"
