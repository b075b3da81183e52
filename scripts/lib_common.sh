# shellcheck shell=bash disable=SC2034
# scripts/lib_common.sh - helpers shared by the test-bed scripts.
#
# Sourced, never executed.  Sets REPO and CACHE and defines small helpers.
# The cache lives outside the repository so a fresh clone reuses the jars,
# the cqlsh venv and the node directories of earlier runs.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${CQL_FDW_CACHE:-$HOME/.cache/cql_fdw}
export CQL_FDW_CACHE=$CACHE

# PostgreSQL major version the project targets.
PG_MAJOR=${PG_MAJOR:-15}
PG_BINDIR=/usr/lib/postgresql/$PG_MAJOR/bin
PG_CONFIG=${PG_CONFIG:-$PG_BINDIR/pg_config}
[ -x "$PG_CONFIG" ] || PG_CONFIG=$(command -v pg_config 2>/dev/null || echo pg_config)

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
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
