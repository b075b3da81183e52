#!/usr/bin/env bash
#
# tests/bridge/test_bridge_e2e.sh - cqlbridge end to end on the hotel example.
#
#   relational schema + generate.sql (small defaults)
#     -> cqlbridge plan -> apply -> verify (all pass)
#     -> sync -> relational INSERT/UPDATE/DELETE (fan-out, join table, child
#        collection, ROLLBACK) -> every foreign table equals its source view,
#        verify passes again
#     -> verify detects a row deleted behind its back (exit 1, names the query)
#     -> apply interrupted by SIGINT and by SIGKILL, resumed -> same contents,
#        both in hash chunks (--chunks) and streamed (batches, resumed from
#        the recorded partition key)
#   The keyspace and the database are dropped at the end.
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST (default 127.0.0.1),
# CQLBRIDGE (default build/cqlbridge), BRIDGE_E2E_DB / BRIDGE_E2E_KEYSPACE
# (default bridge_e2e), BRIDGE_E2E_GEN: use this generated directory instead
# of running plan (its keyspace name "bridge_e2e_dev" is replaced).
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=tests/bridge/lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_E2E_DB:-bridge_e2e}
KS=${BRIDGE_E2E_KEYSPACE:-bridge_e2e}
FS=${KS}_cql
BRIDGE_KEYSPACES=("$KS")
BRIDGE_KEEP=${BRIDGE_E2E_KEEP:-}
bridge_begin e2e

APPLY_PID=""
trap '[ -n "$APPLY_PID" ] && kill -KILL "$APPLY_PID" 2> /dev/null; bridge_cleanup' EXIT
tap_plan 83

# --- setup: database, server, relational data ---------------------------------
fresh_db "$CQL_HOST"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null ||
	bail "Cassandra at $CQL_HOST not reachable through cql_fdw"
load_migrations "$REPO/migrations/hotel"

# --- command line -----------------------------------------------------------------
"$CQLBRIDGE" apply > /dev/null 2>&1
is "$?" 2 "usage error (apply without DIR) exits 2"
"$CQLBRIDGE" apply "$WORK/none" --samples 3 > /dev/null 2>&1
is "$?" 2 "an option of another command is a usage error"
"$CQLBRIDGE" verify --help | grep -q -- '--samples'
ok $? "verify --help lists its options"

# --- plan -----------------------------------------------------------------------------
if [ -n "${BRIDGE_E2E_GEN:-}" ]; then
	mkdir -p "$GEN"
	for f in "$BRIDGE_E2E_GEN"/00[1-4]_*; do
		sed "s/bridge_e2e_dev/$KS/g" "$f" > "$GEN/$(basename "$f")"
	done
	ok 0 "generated directory copied from $BRIDGE_E2E_GEN (plan skipped)"
else
	"$CQLBRIDGE" plan -q --workload "$REPO/migrations/hotel/workload.sql" --schema hotel_rel \
		--keyspace "$KS" --foreign-schema "$FS" --server cqlbridge \
		--replication-factor 1 -o "$GEN" > "$WORK/plan.out" 2>&1
	rc=$?
	ok $rc "plan writes the generated directory"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$WORK/plan.out"; bail "plan failed"; }
fi
for f in 001_schema.cql 002_foreign_tables.sql 003_load.sql 004_verify.sql; do
	[ -s "$GEN/$f" ] || bail "$GEN/$f missing"
done

load_targets "$GEN"
mapfile -t QUERIES < <(meta "$GEN/004_verify.sql" query)
if [ "${#FTS[@]}" -eq 0 ] || [ "${#FTS[@]}" -ne "${#VIEWS[@]}" ]; then
	bail "003 metadata incomplete"
fi


# every foreign table equals its source view
check_all_tables()
{
	local what=$1 i bad=0 a b
	for i in "${!FTS[@]}"; do
		a=$(fingerprint "${FTS[$i]}" "${COLS[$i]}") &&
			b=$(fingerprint "${VIEWS[$i]}" "${COLS[$i]}") || b="(not compared: a query failed)"
		if [ "$a" != "$b" ]; then
			bad=1
			diag "${FTS[$i]}: $a" "${VIEWS[$i]}: $b"
		fi
	done
	ok $bad "$what: every foreign table equals its source view (${#FTS[@]} tables)"
}

# --- apply ----------------------------------------------------------------------------
t0=$(date +%s.%N)
"$CQLBRIDGE" apply "$GEN" > "$WORK/apply.out" 2>&1
rc=$?
t1=$(date +%s.%N)
ok $rc "apply creates and loads ${#FTS[@]} tables"
[ $rc -eq 0 ] || { sed 's/^/# /' "$WORK/apply.out"; bail "apply failed"; }
rows=$(q "SELECT sum(rows) FROM cqlbridge.apply_progress")
diag "$(awk -v r="$rows" -v a="$t0" -v b="$t1" 'BEGIN { printf "apply: %d rows in %.2f s (%.0f rows/s, DDL included)", r, b - a, r / (b - a) }')"
check_all_tables "after apply"
n=$(grep -cE '^[^ ]+: [0-9]+ rows in ' "$WORK/apply.out")
is "$n" "${#FTS[@]}" "apply prints one line per table when stderr is not a terminal"

# a damaged 003 is refused with file:line before anything runs
mkdir -p "$WORK/bad"
cp "$GEN"/00[1-4]_* "$WORK/bad/"
ln=$(grep -n '^[^-].*;$' "$WORK/bad/003_load.sql" | head -n1 | cut -d: -f1)
sed -i "${ln}s/;\$//" "$WORK/bad/003_load.sql"
"$CQLBRIDGE" apply "$WORK/bad" > "$WORK/bad.out" 2>&1
is "$?" 2 "apply of a damaged 003_load.sql exits 2 (an error)"
grep -qE '003_load\.sql:[0-9]+: statement starting here does not end with' "$WORK/bad.out"
ok $? "the error names 003_load.sql and the line"

"$CQLBRIDGE" apply "$GEN" > "$WORK/apply2.out" 2>&1
ok $? "apply again succeeds"
grep -q "(0 loaded by this run)" "$WORK/apply2.out"
ok $? "apply again loads nothing (all chunks recorded)"

# --- verify -----------------------------------------------------------------------------
"$CQLBRIDGE" verify "$GEN" --samples 5 > "$WORK/verify.out" 2>&1
rc=$?
ok $rc "verify: all ${#QUERIES[@]} queries pass"
sed 's/^/# /' "$WORK/verify.out"
n=$(grep -cE '^[A-Za-z0-9_]+ +[0-9]+ +pass ' "$WORK/verify.out")
is "$n" "${#QUERIES[@]}" "verify prints one pass line per query"

# --- negative: a row deleted behind the bridge's back ------------------------------------
# A query whose parameter is the (one-column) partition key of its table:
# delete one row of a partition that verify samples, directly in Cassandra.
neg_query="" neg_ft="" neg_key="" neg_pk="" neg_value=""
while IFS=$'\t' read -r qn tbl params sample; do
	for i in "${!FTS[@]}"; do
		[ "$(meta "$GEN/003_load.sql" table | sed -n "$((i + 1))p")" = "$tbl" ] || continue
		pk=$(meta "$GEN/003_load.sql" partition_key | sed -n "$((i + 1))p")
		case $pk in *,*) continue ;; esac
		pos=$(tr ',' '\n' <<< "$params" | awk -v pk="$pk" '{ if ($1 == pk) { print NR; exit } }')
		[ -n "$pos" ] || continue
		neg_value=$(q "PREPARE s(int) AS ${sample%;}; EXECUTE s(5);" | head -n1 | cut -d'|' -f"$pos")
		[ -n "$neg_value" ] || continue
		neg_query=$qn neg_ft=${FTS[$i]} neg_pk=$pk
		neg_key=$(meta "$GEN/003_load.sql" key | sed -n "$((i + 1))p")
		break 2
	done
done < <(awk '
	function flush() { if (qn != "") print qn "\t" tbl "\t" params "\t" sample; qn = ""; sample = "" }
	/^-- query: /{ flush(); qn = $3; s = 0; tbl = ""; params = "" }
	/^-- table: /{ tbl = $3 }
	/^-- params: /{ params = substr($0, 12) }
	/^-- (source|target)$/{ s = 0 }
	s { sample = sample " " $0 }
	/^-- sample$/{ s = 1 }
	END { flush() }' "$GEN/004_verify.sql")
[ -n "$neg_query" ] || bail "no query with its partition key as a parameter in 004"
keycols=$(sed 's/\([A-Za-z_][A-Za-z0-9_]*\)/"\1"/g' <<< "$neg_key")
match=$(sed -E 's/"([A-Za-z0-9_]+)"/t."\1" = v."\1"/g; s/, / AND /g' <<< "$keycols")
deleted=$(q "WITH v AS (SELECT $keycols FROM $neg_ft WHERE \"$neg_pk\" = '${neg_value//\'/\'\'}' LIMIT 1)
             DELETE FROM $neg_ft t USING v WHERE $match RETURNING 1" | wc -l)
is "$deleted" 1 "one row of $neg_ft deleted directly (query $neg_query, $neg_pk = $neg_value)"
"$CQLBRIDGE" verify "$GEN" --samples 5 > "$WORK/verify_neg.out" 2>&1
is "$?" 1 "verify exits 1 on a difference"
grep -qE "^$neg_query +[0-9]+ +FAIL" "$WORK/verify_neg.out"
ok $? "verify names the failing query $neg_query"
grep -q "source: " "$WORK/verify_neg.out" && grep -q "target: " "$WORK/verify_neg.out"
ok $? "verify prints the first differing row of both sides"
sed 's/^/# /' "$WORK/verify_neg.out" | head -n 20

# --- sync ---------------------------------------------------------------------------------
"$CQLBRIDGE" sync "$GEN" > "$WORK/sync.out" 2>&1
ok $? "sync installs the triggers"
[ -s "$GEN/005_sync.sql" ]
ok $? "005_sync.sql exists"
"$CQLBRIDGE" sync -q "$GEN" > /dev/null 2>&1
ok $? "sync is re-runnable"
n=$(q "SELECT count(*) FROM pg_foreign_table t, unnest(t.ftoptions) o WHERE o = 'write_mode=on_commit'")
is "$n" "${#FTS[@]}" "every foreign table has write_mode on_commit"

# reload the row deleted above
"$CQLBRIDGE" apply -q --restart "$GEN" > "$WORK/apply3.out" 2>&1
ok $? "apply --restart reloads everything"
check_all_tables "after apply --restart"
n=$(q "SELECT count(*) FROM pg_foreign_table t, unnest(t.ftoptions) o WHERE o = 'write_mode=on_commit'")
is "$n" "${#FTS[@]}" "apply with sync installed keeps write_mode on_commit"

# fan-out: rename the hotel with the most POIs
hotel=$(q "SELECT hotel_id FROM hotel_rel.hotel_poi GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
npoi=$(q "SELECT count(*) FROM hotel_rel.hotel_poi WHERE hotel_id = '$hotel'")
q "UPDATE hotel_rel.hotel SET name = 'Renamed by bridge_e2e' WHERE id = '$hotel'" > /dev/null
setup_step $? "rename hotel $hotel (near $npoi POIs)"
renamed=0 RENAME_FT=""
for i in "${!FTS[@]}"; do
	if grep -qw name <<< "${COLS[$i]}" && grep -qw hotel_id <<< "${COLS[$i]}"; then
		RENAME_FT=${FTS[$i]}
		c=$(q "SELECT count(*) FROM ${FTS[$i]} WHERE name = 'Renamed by bridge_e2e'")
		renamed=$((renamed + c))
		diag "${FTS[$i]}: $c rows carry the new name"
	fi
done
[ "$renamed" -ge "$npoi" ]
ok $? "the rename reached at least $npoi denormalized rows ($renamed)"
check_all_tables "after the rename"

# join table: a new hotel_poi link and a removed one, then delete+reinsert in one transaction
newpoi=$(q "SELECT p.id FROM hotel_rel.point_of_interest p
            WHERE NOT EXISTS (SELECT 1 FROM hotel_rel.hotel_poi hp WHERE hp.poi_id = p.id AND hp.hotel_id = '$hotel')
              AND NOT EXISTS (SELECT 1 FROM hotel_rel.hotel_poi hp JOIN hotel_rel.point_of_interest p2 ON p2.id = hp.poi_id
                              WHERE hp.hotel_id = '$hotel' AND p2.name = p.name)
            ORDER BY p.id LIMIT 1")
q "INSERT INTO hotel_rel.hotel_poi VALUES ('$hotel', $newpoi)" > /dev/null
setup_step $? "insert hotel_poi ($hotel, $newpoi)"
oldpoi=$(q "SELECT poi_id FROM hotel_rel.hotel_poi WHERE hotel_id = '$hotel' AND poi_id <> $newpoi ORDER BY poi_id DESC LIMIT 1")
q "DELETE FROM hotel_rel.hotel_poi WHERE hotel_id = '$hotel' AND poi_id = $oldpoi" > /dev/null
setup_step $? "delete hotel_poi ($hotel, $oldpoi)"
check_all_tables "after the join-table insert and delete"
q "BEGIN;
   DELETE FROM hotel_rel.hotel_poi WHERE hotel_id = '$hotel' AND poi_id = $newpoi;
   INSERT INTO hotel_rel.hotel_poi VALUES ('$hotel', $newpoi);
   COMMIT;" > /dev/null
setup_step $? "delete and re-insert the same link in one transaction"
check_all_tables "after delete + re-insert in one transaction"

# child collection: emails of a guest
guest=$(q "SELECT guest_id FROM hotel_rel.guest ORDER BY guest_id LIMIT 1")
q "INSERT INTO hotel_rel.guest_email VALUES ('$guest', 'bridge.e2e@example.com')" > /dev/null
setup_step $? "insert guest_email of $guest"
check_all_tables "after the guest_email insert"
q "DELETE FROM hotel_rel.guest_email WHERE guest_id = '$guest'" > /dev/null
check_all_tables "after deleting every email of the guest (empty set)"

# ON DELETE CASCADE: deleting a POI deletes its hotel_poi links (row
# triggers of both tables fire); a guest without reservations takes their
# emails, phones and addresses along
cpoi=$(q "SELECT poi_id FROM hotel_rel.hotel_poi GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
cguest=$(q "SELECT g.guest_id FROM hotel_rel.guest g
            WHERE NOT EXISTS (SELECT 1 FROM hotel_rel.reservation r WHERE r.guest_id = g.guest_id)
              AND EXISTS (SELECT 1 FROM hotel_rel.guest_email e WHERE e.guest_id = g.guest_id)
            ORDER BY 1 LIMIT 1")
q "DELETE FROM hotel_rel.point_of_interest WHERE id = $cpoi;
   DELETE FROM hotel_rel.guest WHERE guest_id = '$cguest'" > /dev/null
setup_step $? "delete POI $cpoi and guest $cguest (cascading to their child rows)"
check_all_tables "after cascading deletes"

# a key change: a guest's new last name moves their reservations to another
# partition of the by-last-name table (old keys deleted, new keys written)
rguest=$(q "SELECT guest_id FROM hotel_rel.reservation GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
q "UPDATE hotel_rel.guest SET last_name = 'Bridgeworth' WHERE guest_id = '$rguest'" > /dev/null
setup_step $? "change the last name of guest $rguest (who has reservations)"
check_all_tables "after a change of a key column of several targets"

# a new reservation and a deleted one (several reservation tables each)
q "INSERT INTO hotel_rel.reservation
   SELECT 'E2E001', '$rguest'::uuid, r.hotel_id, r.room_number, date '2031-01-01', date '2031-01-05'
   FROM hotel_rel.room r ORDER BY 1, 2 LIMIT 1;
   DELETE FROM hotel_rel.reservation
   WHERE confirm_number = (SELECT min(confirm_number) FROM hotel_rel.reservation WHERE confirm_number <> 'E2E001');" > /dev/null
setup_step $? "insert one reservation, delete another"
check_all_tables "after the reservation insert and delete"

# two concurrent transactions change different source rows of the same target
# rows: A renames the hotel and commits after B linked it to another POI.
# A's recomputation at COMMIT must include B's link (and B's must not undo
# A's name).
otherpoi=$(q "SELECT p.id FROM hotel_rel.point_of_interest p
              WHERE NOT EXISTS (SELECT 1 FROM hotel_rel.hotel_poi hp JOIN hotel_rel.point_of_interest p2 ON p2.id = hp.poi_id
                                WHERE hp.hotel_id = '$hotel' AND p2.name = p.name)
              ORDER BY p.id LIMIT 1")
# A is open once its UPDATE holds the row lock on hotel (this database's
# pg_locks, up to 10 s); B must then run and commit while A still sleeps,
# or the two did not interleave and the check fails
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "BEGIN" \
	-c "UPDATE hotel_rel.hotel SET name = 'Concurrent A' WHERE id = '$hotel'" \
	-c "SELECT pg_sleep(4)" -c "COMMIT" > /dev/null 2>&1 &
conc_pid=$!
a_open=no
for i in $(seq 1 200); do
	if [ "$(q "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
	        WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	          AND c.relname = 'hotel' AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()")" -ge 1 ]; then
		a_open=yes
		break
	fi
	sleep 0.05
done
q "INSERT INTO hotel_rel.hotel_poi VALUES ('$hotel', $otherpoi)" > /dev/null
b_rc=$?
kill -0 "$conc_pid" 2> /dev/null && a_still=yes || a_still=no
[ "$b_rc" -eq 0 ] && [ "$a_open" = yes ] && [ "$a_still" = yes ]
ok $? "B links hotel $hotel to POI $otherpoi while A's rename is open (B's status $b_rc, A seen open: $a_open, A still open after B: $a_still)"
wait "$conc_pid"
ok $? "A commits its rename after B"
check_all_tables "after two interleaved transactions"

# ROLLBACK: Cassandra untouched
before=$(table_fingerprints)
rb=$?
q "BEGIN;
   UPDATE hotel_rel.hotel SET name = 'Rolled back' WHERE id = '$hotel';
   DELETE FROM hotel_rel.hotel_poi WHERE hotel_id = '$hotel';
   INSERT INTO hotel_rel.guest_email VALUES ('$guest', 'rolled.back@example.com');
   ROLLBACK;" > /dev/null
after=$(table_fingerprints)
ra=$?
# a fingerprint query failing alike before and after would compare equal
if [ $rb -eq 0 ] && [ $ra -eq 0 ]; then
	is "$after" "$before" "ROLLBACK sends nothing to Cassandra (all foreign tables unchanged)"
else
	ok 1 "ROLLBACK sends nothing to Cassandra (all foreign tables unchanged)"
	diag "before: $before" "after: $after"
fi
n=0
for i in "${!FTS[@]}"; do
	if grep -qw name <<< "${COLS[$i]}"; then
		c=$(q "SELECT count(*) FROM ${FTS[$i]} WHERE name = 'Rolled back'")
		n=$((n + c))
	fi
done
is "$n" 0 "no foreign table row carries the rolled-back name"

# savepoint: the part after ROLLBACK TO is not sent, the rest is
q "BEGIN;
   UPDATE hotel_rel.hotel SET name = 'Kept by savepoint' WHERE id = '$hotel';
   SAVEPOINT a;
   UPDATE hotel_rel.hotel SET name = 'Undone by savepoint' WHERE id = '$hotel';
   ROLLBACK TO a;
   COMMIT;" > /dev/null
check_all_tables "after ROLLBACK TO SAVEPOINT"

# TRUNCATE is refused while sync is installed
q "TRUNCATE hotel_rel.guest_email" > "$WORK/truncate.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "cannot TRUNCATE hotel_rel.guest_email while cqlbridge sync is installed" "$WORK/truncate.out"
ok $? "TRUNCATE of a synced relation is refused by the sync trigger (psql status $rc)" || diag "$(cat "$WORK/truncate.out")"

"$CQLBRIDGE" verify "$GEN" --samples 5 > "$WORK/verify2.out" 2>&1
ok $? "verify passes after the relational changes"
grep -E 'FAIL|params' "$WORK/verify2.out" | sed 's/^/# /'

# --- interrupted apply, resumed ------------------------------------------------------------
# Empty the Cassandra tables, then load in 20 chunks.  A test trigger on the
# progress table holds the second chunk's commit, so the interruption lands
# mid-load deterministically; then resume and compare.
truncate_all()
{
	local t
	for t in $(meta "$GEN/003_load.sql" table); do
		q "SELECT cql_execute('cqlbridge', 'TRUNCATE $t')" > /dev/null || return 1
	done
}
q "CREATE FUNCTION cqlbridge.e2e_stall() RETURNS trigger LANGUAGE plpgsql AS
   \$\$BEGIN IF NEW.chunk = 1 THEN PERFORM pg_sleep(60); END IF; RETURN NEW; END\$\$;
   CREATE TRIGGER e2e_stall BEFORE INSERT ON cqlbridge.apply_progress
   FOR EACH ROW EXECUTE FUNCTION cqlbridge.e2e_stall();" > /dev/null

# wait_for SQL: until the count SQL gives at least 1, while apply runs
wait_for()
{
	local i
	for i in $(seq 1 600); do
		[ "$(q "$1")" -ge 1 ] && return 0
		kill -0 "$APPLY_PID" 2> /dev/null || return 1
	done
	return 1
}

# interrupt_apply SIG WHAT OUT: stop the running apply with SIG; it exits
# non-zero (saying "interrupted" on SIGINT); the sessions a killed client
# leaves behind (a backend inside the stalled progress insert) are ended
interrupt_apply()
{
	local rc
	kill -"$1" "$APPLY_PID"
	wait "$APPLY_PID" 2> /dev/null
	rc=$?
	APPLY_PID=""
	[ "$rc" -ne 0 ]
	ok $? "$2: apply exits non-zero ($rc)"
	if [ "$1" = INT ]; then
		grep -q "interrupted" "$3"
		ok $? "$2: the message says interrupted (statements cancelled)"
	fi
	q "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
	   WHERE datname = current_database() AND application_name = 'cqlbridge'" > /dev/null
}

# tables_incomplete WHAT: some foreign table differs from its source view
tables_incomplete()
{
	local i a b partial=0
	for i in "${!FTS[@]}"; do
		# a failing query is not a difference
		if ! a=$(fingerprint "${FTS[$i]}" "${COLS[$i]}") ||
			! b=$(fingerprint "${VIEWS[$i]}" "${COLS[$i]}"); then
			partial="a fingerprint query failed"
			diag "$a" "${b:-}"
			break
		fi
		[ "$a" != "$b" ] && partial=1
	done
	is "$partial" 1 "$1: the Cassandra tables are incomplete"
}

for sig in INT KILL; do
	truncate_all
	"$CQLBRIDGE" apply --chunks 20 "$GEN" > "$WORK/apply_$sig.out" 2>&1 &
	APPLY_PID=$!
	wait_for "SELECT count(*) FROM cqlbridge.apply_progress WHERE chunks = 20"
	ok $? "SIG$sig: the first chunk of the 20-chunk load is recorded"
	# the backend is now inside chunk 1's progress insert (stalled)
	interrupt_apply "$sig" "SIG$sig" "$WORK/apply_$sig.out"
	done_chunks=$(q "SELECT count(*) FROM cqlbridge.apply_progress WHERE chunks = 20")
	is "$done_chunks" 1 "SIG$sig: exactly one chunk recorded"
	tables_incomplete "SIG$sig"

	q "DROP TRIGGER e2e_stall ON cqlbridge.apply_progress" > /dev/null
	"$CQLBRIDGE" apply --chunks 20 "$GEN" > "$WORK/resume_$sig.out" 2>&1
	ok $? "SIG$sig: apply resumes"
	grep -q "already loaded" "$WORK/resume_$sig.out"
	ok $? "SIG$sig: the resumed apply skips the recorded chunk"
	check_all_tables "SIG$sig: after resume"
	q "CREATE TRIGGER e2e_stall BEFORE INSERT ON cqlbridge.apply_progress
	   FOR EACH ROW EXECUTE FUNCTION cqlbridge.e2e_stall();
	   DELETE FROM cqlbridge.apply_progress WHERE chunks = 20;" > /dev/null
done
q "DROP TRIGGER e2e_stall ON cqlbridge.apply_progress; DROP FUNCTION cqlbridge.e2e_stall()" > /dev/null

# --- interrupted streamed apply, resumed -----------------------------------------------------
# The default load streams each table in batches (here 50 rows).  A test
# trigger holds the progress commit that would record more than 100 rows of
# a table, so the stream stops after two batches of the first table with
# more rows, while its cursor is open; then resume from the recorded key.
q "CREATE FUNCTION cqlbridge.e2e_stall_stream() RETURNS trigger LANGUAGE plpgsql AS
   \$\$BEGIN IF NEW.chunks = 0 AND NOT NEW.finished AND NEW.rows > 100 THEN PERFORM pg_sleep(60); END IF;
   RETURN NEW; END\$\$" > /dev/null

for sig in INT KILL; do
	truncate_all
	q "DELETE FROM cqlbridge.apply_progress;
	   CREATE TRIGGER e2e_stall_stream BEFORE INSERT OR UPDATE ON cqlbridge.apply_progress
	   FOR EACH ROW EXECUTE FUNCTION cqlbridge.e2e_stall_stream();" > /dev/null
	"$CQLBRIDGE" apply --batch-rows 50 "$GEN" > "$WORK/stream_$sig.out" 2>&1 &
	APPLY_PID=$!
	wait_for "SELECT count(*) FROM cqlbridge.apply_progress WHERE chunks = 0 AND NOT finished AND rows = 100"
	ok $? "stream SIG$sig: two batches (100 rows) of a table are recorded"
	interrupt_apply "$sig" "stream SIG$sig" "$WORK/stream_$sig.out"
	is "$(q "SELECT string_agg(rows::text, ',') FROM cqlbridge.apply_progress WHERE NOT finished AND resume_key IS NOT NULL")" 100 \
		"stream SIG$sig: one table stopped at 100 rows, with its resume key"
	stopped=$(q "SELECT target FROM cqlbridge.apply_progress WHERE NOT finished")
	tables_incomplete "stream SIG$sig"

	q "DROP TRIGGER e2e_stall_stream ON cqlbridge.apply_progress" > /dev/null
	"$CQLBRIDGE" apply --batch-rows 50 "$GEN" > "$WORK/stream_resume_$sig.out" 2>&1
	ok $? "stream SIG$sig: apply resumes"
	grep -q "resumed after 100 rows" "$WORK/stream_resume_$sig.out" &&
		grep -q "already loaded" "$WORK/stream_resume_$sig.out"
	ok $? "stream SIG$sig: finished tables are skipped, the stopped one resumes after its 100 rows" ||
		sed 's/^/# /' "$WORK/stream_resume_$sig.out"
	check_all_tables "stream SIG$sig: after resume"
	# resumed from the key, not from the start: besides the 100 rows
	# recorded, only the 100th row (>= its key) was sent again
	mapfile -t TARGETS < <(meta "$GEN/003_load.sql" table)
	for i in "${!TARGETS[@]}"; do
		[ "${TARGETS[$i]}" = "$stopped" ] || continue
		sent=$(q "SELECT rows FROM cqlbridge.apply_progress WHERE target = '$stopped'")
		have=$(q "SELECT count(*) FROM ${VIEWS[$i]}")
		[ "$sent" -eq $((have + 1)) ]
		ok $? "stream SIG$sig: $stopped: $sent rows sent for $have (resumed from the recorded key)"
	done
	is "$(q "SELECT count(*) FROM cqlbridge.apply_progress WHERE chunks <> 0 OR NOT finished")" 0 \
		"stream SIG$sig: every table recorded as streamed and finished"
done
q "DROP FUNCTION cqlbridge.e2e_stall_stream()" > /dev/null

# --- 003 of an older plan: INSERT statements taking (chunk, chunk count) -----------------------
mkdir -p "$WORK/old"
cp "$GEN"/00[1-4]_* "$WORK/old/"
awk '/^-- foreign_table: / { ft = substr($0, 19) }
     /^-- columns: / { cols = substr($0, 13) }
     /^-- partition_key: / { n = split(substr($0, 19), pk, ", ") }
     /^SELECT / { print "INSERT INTO " ft " (" cols ")" }
     /^FROM .* s;$/ {
         h = ""
         for (i = 1; i <= n; i++) h = h (i > 1 ? " || '"'|'"' || " : "") "(s." pk[i] ")::text"
         sub(/;$/, ""); print; print "WHERE (hashtext(" h ") & 2147483647) % $2 = $1;"; next }
     { print }' "$GEN/003_load.sql" > "$WORK/old/003_load.sql"
truncate_all
q "DELETE FROM cqlbridge.apply_progress" > /dev/null
"$CQLBRIDGE" apply "$WORK/old" > "$WORK/old.out" 2>&1
ok $? "apply of an older plan's 003 (INSERT statements) succeeds"
is "$(grep -c 'loaded in chunks: its 003 statement is an INSERT of an older plan' "$WORK/old.out")" "${#FTS[@]}" \
	"every table of the older 003 is loaded in chunks, saying why"
check_all_tables "older 003"

"$CQLBRIDGE" verify -q "$GEN" > "$WORK/verify3.out" 2>&1
ok $? "verify passes after the interrupted and resumed loads"

# --- uninstall ---------------------------------------------------------------------------------
"$CQLBRIDGE" sync --uninstall "$GEN" > /dev/null 2>&1
ok $? "sync --uninstall"
n=$(q "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'cqlbridge\_sync\_%'")
is "$n" 0 "no sync trigger left"
q "UPDATE hotel_rel.hotel SET name = 'After uninstall' WHERE id = '$hotel'" > /dev/null
n=$(q "SELECT count(*) FROM $RENAME_FT WHERE name = 'After uninstall'")
is "$n" 0 "after uninstall a relational change is not propagated"
n=$(q "SELECT count(*) FROM pg_foreign_table t, unnest(t.ftoptions) o WHERE o = 'write_mode=on_commit'")
is "$n" 0 "after uninstall the foreign tables write immediately again"

exit $((TAP_FAILED > 0))
