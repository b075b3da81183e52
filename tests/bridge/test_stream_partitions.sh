#!/usr/bin/env bash
#
# tests/bridge/test_stream_partitions.sh - cqlbridge stream over a
# partitioned source relation (tests/bridge/partitioned).
#
#   a partition whose replica identity does not carry the plan's key is
#   refused before anything is created, naming the partition and the ALTER
#   to run (ALTER TABLE on the partitioned table does not change its
#   partitions);
#   with usable identities the stream loads, then streams changes made in
#   the partitions (published as the partitioned table): inserts into
#   both, a row moved to the other partition, deletes, NULLs and odd text;
#   the target equals its source view; after --drop a new stream over
#   the filled target is refused (the load upserts and would keep rows the
#   source does not have).
#
# Environment: PGHOST/PGPORT/PGUSER (superuser, wal_level=logical),
# CQL_HOST, CQLBRIDGE.  Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=bridge_stream_part
KS=bridge_stream_part
FS=${KS}_cql
BRIDGE_KEYSPACES=("$KS")
bridge_begin stream_part

tap_plan 10

SPID=
part_cleanup()
{
	[ -n "$SPID" ] && kill -9 "$SPID" 2> /dev/null
	sleep 0.3
	psql -X -q -d "$DB" -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = '$DB' AND NOT active" > /dev/null 2>&1
	bridge_cleanup
}
trap part_cleanup EXIT

[ "$(psql -X -A -t -d postgres -c 'SHOW wal_level')" = logical ] ||
	bail "wal_level is not logical on this server (scripts/pg.sh sets it)"

fresh_db "$CQL_HOST"
q "SELECT cql_execute('cqlbridge', 'DROP KEYSPACE IF EXISTS $KS')" > /dev/null ||
	bail "Cassandra at $CQL_HOST not reachable through cql_fdw"
qf -f "$HERE/partitioned/schema.sql" > /dev/null || bail "schema failed"
plan_into part_rel "$HERE/partitioned/workload.sql" "plan of a workload over a partitioned relation"
"$CQLBRIDGE" apply -q --no-load "$GEN" > "$WORK/apply.out" 2>&1
ok $? "apply --no-load" || diag "$(cat "$WORK/apply.out")"

# --- a partition without a usable replica identity ---------------------------------
q "ALTER TABLE part_rel.events_2026_02 REPLICA IDENTITY NOTHING" > /dev/null
timeout 60 "$CQLBRIDGE" stream -q "$GEN" > "$WORK/ident.out" 2>&1
refused $? "$WORK/ident.out" "a partition without a usable replica identity is named, with the ALTER to run" \
	"partition part_rel.events_2026_02 of source relation part_rel.events has REPLICA IDENTITY NOTHING" \
	"ALTER TABLE part_rel.events_2026_02 REPLICA IDENTITY FULL"
no_stream_objects "the refusal created no publication and no slot"
q "ALTER TABLE part_rel.events_2026_02 REPLICA IDENTITY DEFAULT" > /dev/null

# --- streaming changes made in the partitions ------------------------------------
"$CQLBRIDGE" stream "$GEN" > "$WORK/stream.log" 2>&1 &
SPID=$!
wait_stream_phase "$KS" streaming
grep -q "loaded from the slot's snapshot" "$WORK/stream.log"
ok $? "the initial load read the partitioned relation" || diag "$(cat "$WORK/stream.log")"
q "BEGIN;
   INSERT INTO part_rel.events VALUES
     (1, date_trunc('milliseconds', timestamptz '2026-02-20 10:00:00.123+00'), 'new', NULL),
     (9, timestamptz '2026-01-03 01:02:03.456+00', 'new', E'tab\there');
   UPDATE part_rel.events SET happened_at = happened_at + interval '31 days', kind = 'moved'
    WHERE device_id = 2 AND happened_at < '2026-01-02 00:00:00+00';
   DELETE FROM part_rel.events WHERE device_id = 3 AND happened_at >= '2026-02-10 00:00:00+00';
   UPDATE part_rel.events SET payload = payload || ' (edited)' WHERE device_id = 4 AND kind = 'k1';
   COMMIT;" > /dev/null
stream_caught_up "$KS"
ok $? "the stream confirmed the changes made in the partitions" || diag "$(tail -5 "$WORK/stream.log")"
is "$(q "SELECT count(*) FROM $FS.events_by_device_id WHERE device_id = 2 AND kind = 'moved' AND happened_at >= '2026-02-01'")" \
	"$(q "SELECT count(*) FROM part_rel.events WHERE device_id = 2 AND kind = 'moved'")" \
	"rows moved to the other partition are in Cassandra under their new key"
load_targets "$GEN"
compare_all "after changes in the partitions"
kill -TERM "$SPID"
wait "$SPID"
SPID=
"$CQLBRIDGE" stream -q --drop "$GEN" > /dev/null 2>&1

# --- a new stream over tables that are not empty ------------------------------------
timeout 60 "$CQLBRIDGE" stream -q "$GEN" > "$WORK/notempty.out" 2>&1
refused $? "$WORK/notempty.out" "a new stream over a target that is not empty is refused (the load would keep rows the source lacks)" \
	"target table $KS.events_by_device_id is not empty" "TRUNCATE \"$KS\".\"events_by_device_id\""
no_stream_objects "that refusal created no publication and no slot"

exit $((TAP_FAILED > 0))
