#!/usr/bin/env bash
#
# bench/debezium/build.sh - compile bench/debezium/src (DbzCapture) into the
# cache of fetch.sh, through bench/java/build.sh.
#
#   bash bench/debezium/build.sh        prints the classpath to run with
#
# Needs javac 17+ (Debian: openjdk-17-jdk-headless): Debezium 3 is built for 17.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/env.sh"
export JAVA_SRC=$HERE/src JAVA_RELEASE=17
exec bash "$HERE/../java/build.sh"
