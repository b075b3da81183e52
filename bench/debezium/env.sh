# shellcheck shell=bash
# bench/debezium/env.sh - the coordinates and cache of the Debezium anchor,
# for bench/java/fetch.sh and build.sh (sourced by fetch.sh and build.sh here)
DEBEZIUM_VERSION=${DEBEZIUM_VERSION:-3.6.1.Final}
export JAVA_DRIVER_CACHE=${DEBEZIUM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cql_fdw/debezium}
export JAVA_ROOTS="io.debezium:debezium-embedded:$DEBEZIUM_VERSION io.debezium:debezium-connector-postgres:$DEBEZIUM_VERSION org.slf4j:slf4j-simple:${SLF4J_VERSION:-1.7.36}"
