#!/usr/bin/env bash
#
# scripts/pg.sh - a throwaway PostgreSQL cluster (15, 16 or 18) for tests
# and the demo.
#
# Usage:
#   pg.sh start [--keep]   initdb (fresh unless --keep) and start
#   pg.sh stop             fast shutdown
#   pg.sh restart          fast shutdown and start again, data kept (a
#                          fault for tests/bridge/test_stream.sh)
#   pg.sh status
#   pg.sh install          make install of the extension (root or sudo for
#                          15; 16/18 are the project's own trees)
#   pg.sh env              print export lines: eval "$(scripts/pg.sh env)"
#   pg.sh psql [ARGS...]   psql against the throwaway cluster
#
# The server binaries are always taken from pg_config --bindir of the
# chosen version (15: /usr/lib/postgresql/15/bin; 16 and 18: the trees
# scripts/pgtrees.sh unpacks, see lib_common.sh): a pg_ctl found first in
# PATH may be a wrapper, not the real one.  As root, the cluster runs as the 'postgres'
# user in a directory it owns (root's cache dir is not traversable for
# it); as a normal user it runs as that user under the cache dir.
#
# Environment:
#   PG_VERSION    15 (default), 16 or 18; each has its own port and
#                 directory, so the three can run side by side
#   CQL_PG_PORT   TCP port on 127.0.0.1 of 15 (default 54329; 16 and 18
#                 get CQL_PG_PORT+1 and +3, by default 54316 and 54318)
#   CQL_PG_DIR    cluster directory of 15 (default: $CQL_FDW_CACHE/pg, or
#                 /tmp/cql_fdw_pg when root); 16 and 18 add "16"/"18"
#   CQL_PG_DB     database created at start (default cql_fdw_test)
#
set -euo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"

# 15 keeps the names it always had; other versions get a suffix
if [ "$PG_VERSION" = 15 ]; then
	PORT=${CQL_PG_PORT:-54329}
	SUFFIX=""
elif [ -n "${CQL_PG_PORT:-}" ]; then
	PORT=$((CQL_PG_PORT + PG_VERSION - 15))
	SUFFIX=$PG_VERSION
else
	PORT=$((54300 + PG_VERSION))
	SUFFIX=$PG_VERSION
fi
DB=${CQL_PG_DB:-cql_fdw_test}
BINDIR=$("$PG_CONFIG" --bindir 2>/dev/null || echo "$PG_BINDIR")
if [ "$(id -u)" -eq 0 ]; then
	OWNER=postgres
	PGDIR=${CQL_PG_DIR:-${TMPDIR:-/tmp}/cql_fdw_pg}$SUFFIX
else
	OWNER=$(id -un)
	PGDIR=${CQL_PG_DIR:-$CACHE/pg}$SUFFIX
fi
DATA=$PGDIR/data
LOG=$PGDIR/postgres.log

# Run a PostgreSQL program as the cluster owner.
as_owner()
{
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u "$OWNER" -- "$@"
	else
		"$@"
	fi
}

print_env()
{
	echo "export PGHOST=$PGDIR"
	echo "export PGPORT=$PORT"
	echo "export PGUSER=$OWNER"
	echo "export PGDATABASE=$DB"
}

is_running()
{
	[ -f "$DATA/postmaster.pid" ] && as_owner "$BINDIR/pg_ctl" -D "$DATA" status > /dev/null 2>&1
}

cmd_start()
{
	local keep=0
	[ "${1:-}" = --keep ] && keep=1
	if [ ! -x "$BINDIR/pg_ctl" ] && [ "$PG_VERSION" != 15 ]; then
		bash "$REPO/scripts/pgtrees.sh" install "$PG_VERSION"
		BINDIR=$("$PG_CONFIG" --bindir)
	fi
	[ -x "$BINDIR/pg_ctl" ] || die "no pg_ctl in $BINDIR: run scripts/deps.sh"
	if is_running; then
		[ "$keep" = 1 ] && { say "PostgreSQL already running on port $PORT"; return 0; }
		cmd_stop
	fi
	if [ "$keep" = 0 ] || [ ! -f "$DATA/PG_VERSION" ]; then
		rm -rf "$PGDIR"
		mkdir -p "$PGDIR"
		[ "$(id -u)" -eq 0 ] && chown "$OWNER:" "$PGDIR"
		chmod 700 "$PGDIR"
		as_owner "$BINDIR/initdb" -D "$DATA" -U "$OWNER" --auth=trust \
			--encoding=UTF8 --locale=C.UTF-8 > "$PGDIR/initdb.log" 2>&1 || {
			cat "$PGDIR/initdb.log" >&2
			die "initdb failed"
		}
		cat >> "$DATA/postgresql.conf" <<-EOF
			# cql_fdw throwaway test cluster
			port = $PORT
			listen_addresses = '127.0.0.1'
			unix_socket_directories = '$PGDIR'
			fsync = off
			synchronous_commit = off
			full_page_writes = off
			shared_buffers = 64MB
			max_connections = 40
			log_min_messages = warning
			log_min_error_statement = error
			# cqlbridge stream: logical decoding (pgoutput) of the source
			wal_level = logical
			max_replication_slots = 10
			max_wal_senders = 10
		EOF
		# pg_stat_statements, for "cqlbridge workload" (tests/bridge/
		# test_workload.sh), where the version ships it (15 and 18 do,
		# 16's wheel does not)
		if [ -f "$("$PG_CONFIG" --pkglibdir)/pg_stat_statements.so" ]; then
			# (compute_query_id = regress: the query ids pg_stat_statements
			# needs are computed, but EXPLAIN VERBOSE does not print them, so
			# pg_regress output is the same with and without the module)
			printf "shared_preload_libraries = 'pg_stat_statements'\ncompute_query_id = regress\n" >> "$DATA/postgresql.conf"
		fi
	fi
	# -c: a backend that crashes may leave a core file in the data
	# directory (kernel.core_pattern permitting), which the test run turns
	# into a backtrace (scripts/lib_tap.sh, server_crashes)
	if ! as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -c -w -t 60 start > /dev/null; then
		tail -n 30 "$LOG" >&2 || true
		die "PostgreSQL did not start (log: $LOG)"
	fi
	as_owner "$BINDIR/psql" -h "$PGDIR" -p "$PORT" -U "$OWNER" -d postgres -qAt \
		-c "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1 ||
		as_owner "$BINDIR/createdb" -h "$PGDIR" -p "$PORT" -U "$OWNER" "$DB"
	say "PostgreSQL $("$BINDIR/postgres" -V | awk '{print $3}') running: port $PORT, socket dir $PGDIR, user $OWNER, db $DB"
}

cmd_stop()
{
	if [ -f "$DATA/postmaster.pid" ]; then
		as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w -t 60 stop > /dev/null 2>&1 ||
			as_owner "$BINDIR/pg_ctl" -D "$DATA" -m immediate -w stop > /dev/null 2>&1 || true
		say "PostgreSQL $PG_VERSION on port $PORT stopped"
	fi
}

cmd_install()
{
	# Build as the invoking user, copy into the server's directories as root
	# (15, the system's) or as the user (16/18, the project's own trees).
	[ -x "$PG_CONFIG" ] || [ "$PG_VERSION" = 15 ] || bash "$REPO/scripts/pgtrees.sh" install "$PG_VERSION"
	make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" > /dev/null
	if [ -w "$("$PG_CONFIG" --pkglibdir)" ]; then
		make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install > /dev/null
	else
		as_root make -C "$REPO" -s PG_CONFIG="$PG_CONFIG" install > /dev/null
	fi
	say "extension installed into $("$PG_CONFIG" --sharedir)/extension and $("$PG_CONFIG" --pkglibdir)"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
	start) cmd_start "$@" ;;
	stop) cmd_stop ;;
	restart)
		is_running || die "PostgreSQL $PG_VERSION is not running (dir $PGDIR)"
		as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$LOG" -c -m fast -w -t 60 restart > /dev/null ||
			die "PostgreSQL did not restart (log: $LOG)"
		say "PostgreSQL $PG_VERSION on port $PORT restarted"
		;;
	status)
		if is_running; then
			echo "PostgreSQL $PG_VERSION running: port $PORT, dir $PGDIR"
		else
			echo "PostgreSQL $PG_VERSION not running (dir $PGDIR)"
			exit 1
		fi ;;
	install) cmd_install ;;
	env) print_env ;;
	psql) exec "$BINDIR/psql" -h "$PGDIR" -p "$PORT" -U "$OWNER" -d "$DB" "$@" ;;
	*) awk 'NR >= 3 && /^set -euo/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' "$0"; [ -z "$cmd" ] || exit 2 ;;
esac
