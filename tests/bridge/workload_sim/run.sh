#!/usr/bin/env bash
#
# tests/bridge/workload_sim/run.sh - the hotel application, simulated with
# pgbench against a database holding migrations/hotel (schema, generated
# data), for "cqlbridge workload" to draft its workload from
# pg_stat_statements.
#
# Usage: run.sh DB SECONDS [CLIENTS]
#
# The application runs the nine queries of migrations/hotel/workload.sql
# (taken from that file, so it runs exactly them: psql's :'name' becomes
# pgbench's :name, a parameter of the extended protocol), each with
# parameter values picked at random from the data (qN.pick; schema sim,
# made by setup.sql), in the proportions of a booking site; statements
# the mapping cannot serve (u_*.sql: LIKE, OR, a function on the key
# column, an aggregate, IN lists of two and three values); and writes
# (w_*.sql).  Then Q9 twenty times over the simple protocol, whose text
# pg_stat_statements numbers differently.  Output: pgbench's.
#
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORKLOAD=$HERE/../../../migrations/hotel/workload.sql
DB=${1:?usage: run.sh DB SECONDS [CLIENTS]}
SECONDS_=${2:?usage: run.sh DB SECONDS [CLIENTS]}
CLIENTS=${3:-2}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/workload_sim.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# statement N MODE: the statement of block QN_ of workload.sql for pgbench
# (MODE prepared: :'x' -> :x; simple: :'x' -> ':x', a quoted literal)
statement()
{
	awk -v n="Q$1_" -v mode="$2" '
		/^-- name: / { on = (index($3, n) == 1); meta = 1; next }
		on && /^-- / && meta { next }
		on && /^$/ { on = 0 }
		on {
			meta = 0
			line = $0
			out = ""
			while (match(line, /:\x27[A-Za-z0-9_]+\x27/)) {
				v = substr(line, RSTART + 2, RLENGTH - 3)
				out = out substr(line, 1, RSTART - 1) (mode == "simple" ? "\x27:" v "\x27" : ":" v)
				line = substr(line, RSTART + RLENGTH)
			}
			print out line
		}' "$WORKLOAD"
}

for n in 1 2 3 4 5 6 7 8 9; do
	{ cat "$HERE/q$n.pick"; statement "$n" prepared; } > "$TMP/q$n.sql"
	grep -q ';$' "$TMP/q$n.sql" || { echo "run.sh: no statement Q${n}_ in $WORKLOAD" >&2; exit 1; }
done
{ cat "$HERE/q9.pick"; statement 9 simple; } > "$TMP/q9_simple.sql"
cp "$HERE"/u_*.sql "$HERE"/w_*.sql "$TMP/"

defs=$(psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$DB" -c "
	SELECT format('-Dnpoi=%s -Dnhotel=%s -Dnavail=%s -Dnroom=%s -Dnres=%s -Dnguest=%s',
	  (SELECT count(*) FROM sim.poi), (SELECT count(*) FROM sim.hotel), (SELECT count(*) FROM sim.avail),
	  (SELECT count(*) FROM sim.room), (SELECT count(*) FROM sim.res), (SELECT count(*) FROM sim.guest))")

cd "$TMP"
# shellcheck disable=SC2086
pgbench -n -M prepared -c "$CLIENTS" -T "$SECONDS_" $defs \
	-f q1.sql@10 -f q2.sql@15 -f q3.sql@10 -f q4.sql@20 -f q5.sql@10 -f q6.sql@10 \
	-f q7.sql@5 -f q8.sql@5 -f q9.sql@10 \
	-f u_like.sql@2 -f u_or.sql@1 -f u_lower.sql@2 -f u_count.sql@2 -f u_latest.sql@2 -f u_in2.sql@2 -f u_in3.sql@2 \
	-f w_avail.sql@8 -f w_res.sql@4 -f w_guest.sql@2 "$DB"
# shellcheck disable=SC2086
pgbench -n -M simple -t 20 $defs -f q9_simple.sql "$DB"
