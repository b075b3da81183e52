#!/usr/bin/env bash
#
# tests/bridge/test_buckets.sh - cqlbridge on a time series whose naive
# partitions pass the sizing limits (migrations/telemetry).
#
#   plan   -> every generated file equals migrations/telemetry/generated/;
#             readings (read by time range) get the coarsest time bucket
#             that fits, alerts (read by site) a hash bucket, sensors none;
#             the widest bucket matches what SQL counts on the data
#   apply  -> every foreign table equals its source view; no Cassandra
#             partition holds more rows than the plan measured
#   verify -> every query gives the same answers, reading the buckets its
#             range covers (1-2 partitions) or all hash buckets (merged in
#             clustering order), never a scan
#   sync   -> new readings in a new bucket, a reading moved to another
#             bucket, deletes and new alerts reach the tables at COMMIT
#   diff   -> a missing and a stray reading and a changed alert made in
#             Cassandra are found, and nothing else; a diff interrupted by
#             SIGINT or SIGKILL resumes (Cassandra read only after the
#             recorded ranges) and reports the same (with the default
#             --jobs 2: the workers stop with their parent); --repair (also
#             one killed and resumed)
#             fixes them
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST (default
# 127.0.0.1), CQLBRIDGE (default build/cqlbridge), BRIDGE_BUCKETS_DB /
# BRIDGE_BUCKETS_KEYSPACE (default bridge_buckets_test).
# To refresh the golden files after an intended change:
#   cqlbridge plan -d DB --schema telemetry_rel \
#     --workload migrations/telemetry/workload.sql -o migrations/telemetry/generated
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_BUCKETS_DB:-bridge_buckets_test}
KS=${BRIDGE_BUCKETS_KEYSPACE:-bridge_buckets_test}
FS=telemetry_cql
TELEMETRY=$REPO/migrations/telemetry
GOLDEN=$TELEMETRY/generated
BRIDGE_KEYSPACES=("$KS")
bridge_begin buckets
tap_plan 49

fresh_db "$CQL_HOST"
load_migrations "$TELEMETRY"

# --- plan: the golden files (default keyspace, limits, growth) ----------------------------
"$CQLBRIDGE" plan -q --schema telemetry_rel --workload "$TELEMETRY/workload.sql" \
	-o "$WORK/golden" > "$WORK/plan.out" 2>&1
rc=$?
ok $rc "plan of the telemetry workload"
[ $rc -eq 0 ] || bail "plan failed: $(cat "$WORK/plan.out")"
same_files "$GOLDEN" "$WORK/golden" migrations/telemetry/generated \
	model.txt report.md 001_schema.cql 002_foreign_tables.sql 003_load.sql 004_verify.sql 005_sync.sql \
	logical.dot physical.dot
M=$WORK/golden/model.txt

# the naive key is over the limit: 2 values a row, 100,000 values a partition
naive=$(q "SELECT max(c) FROM (SELECT count(*) c FROM telemetry_rel.readings GROUP BY sensor_id) s")
[ $((naive * 2)) -gt 100000 ]
ok $? "the naive readings partition passes the limit ($naive rows, $((naive * 2)) values)"
# with growth x2 a bucket may hold 25,000 rows: 2 weeks fits, a month does not
cnt() { q "SELECT max(c) FROM (SELECT count(*) c FROM telemetry_rel.readings GROUP BY sensor_id, cql_time_bucket('$1', reported_at)) s"; }
b2w=$(cnt '2 weeks')
bm=$(cnt month)
grep -qF "key: ((sensor_id, reported_at_bucket), reported_at)" "$M" &&
	grep -qE "^  B  reported_at_bucket timestamp" "$M" &&
	grep -qF "bucket: 2 weeks of reported_at (applied)" "$M" &&
	grep -qE "^      2 weeks +max $b2w rows, .*: chosen$" "$M" &&
	grep -qE "^      month +max $bm rows, .*: too wide$" "$M" &&
	[ $((b2w * 2 * 2)) -le 100000 ] && [ $((bm * 2 * 2)) -gt 100000 ]
ok $? "readings: the coarsest time bucket that fits x2 is 2 weeks ($b2w rows; a month has $bm)"
grep -qE "^      2 weeks .* reads mean 1\\.[0-9]+, max 2: chosen$" "$M"
ok $? "the report gives the partitions a 7-day range reads (1 or 2 for 2-week buckets)"
# alerts: read by site only, so a hash bucket; 4 values a row
h2=$(q "SELECT max(c) FROM (SELECT count(*) c FROM telemetry_rel.alerts GROUP BY site_id, cql_hash_bucket(2, alert_id::text)) s")
h4=$(q "SELECT max(c) FROM (SELECT count(*) c FROM telemetry_rel.alerts GROUP BY site_id, cql_hash_bucket(4, alert_id::text)) s")
grep -qF "key: ((site_id, bucket), alert_id)" "$M" &&
	grep -qF "bucket: hash 4 of (alert_id) (applied)" "$M" &&
	grep -qE "^      hash 2 +max $h2 rows, .*: too wide$" "$M" &&
	grep -qE "^      hash 4 +max $h4 rows, .*: chosen$" "$M"
ok $? "alerts: the smallest hash bucket count that fits is 4 ($h4 rows; 2 buckets hold $h2)"
grep -qF "key: ((site_id), sensor_id)" "$M" && ! grep -A12 "^table telemetry.sensors_by_site_id" "$M" | grep -q "bucket"
ok $? "sensors: small partitions stay unbucketed"
! grep -q "wide partition" "$M"
ok $? "no table of the plan is left wide"
grep -qF "Q1_readings_by_sensor_range: published telemetry.readings_by_sensor_id ((sensor_id, reported_at_bucket), reported_at): unique on the data" "$M"
ok $? "MR5 is checked on the bucketed key"
grep -qF "| Q1_readings_by_sensor_range | readings_by_sensor_id | ((sensor_id, reported_at_bucket), reported_at) | no: buckets 2 weeks of reported_at |" "$WORK/golden/report.md" &&
	grep -qF "| 2 weeks | $b2w |" "$WORK/golden/report.md"
ok $? "report.md shows the bucket per query and the candidates"
grep -qF "| reported_at_bucket timestamp B  |" "$WORK/golden/report.md" &&
	grep -qF "| reported_at_bucket | timestamp | bucket: widest partition 57600 rows over the limits" "$WORK/golden/report.md"
ok $? "the Chebotko diagram marks the bucket column B"

plan_into telemetry_rel "$TELEMETRY/workload.sql" "plan into the test keyspace"

# --- apply, compare -------------------------------------------------------------------------
apply_and_compare "apply loads every table" "after apply"
widest=$(q "SELECT max(c) FROM (SELECT count(*) c FROM $FS.readings_by_sensor_id GROUP BY sensor_id, reported_at_bucket) s")
is "$widest" "$b2w" "the widest readings partition in Cassandra holds the $b2w rows the plan measured"

# --- reads: the application's SQL, buckets enumerated by cql_fdw ----------------------------
acc=$(q "EXPLAIN SELECT * FROM $FS.readings_by_sensor_id WHERE sensor_id = 1
	AND reported_at >= '2026-01-15' AND reported_at < '2026-01-22' ORDER BY reported_at DESC" | grep Access)
is "$(sed 's/^ *//' <<< "$acc")" "Access: 2 partitions (2 weeks buckets of reported_at), clustering order" \
	"a 7-day range across a bucket edge reads 2 buckets, newest first, without a Sort"

"$CQLBRIDGE" verify --samples 20 "$GEN" > "$WORK/verify.out" 2>&1
rc=$?
ok $rc "verify: every query gives the same answers"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/verify.out"
grep -qE '^Q1_readings_by_sensor_range +20 +pass .*buckets of reported_at.* (1-2|1|2)$' "$WORK/verify.out"
ok $? "verify: Q1 reads 1 or 2 time buckets per sample and says so"
grep -qE '^Q2_alerts_by_site +[0-9]+ +pass +4 partitions \(hash 4 buckets of alert_id\), merged in clustering order .* 4$' "$WORK/verify.out"
ok $? "verify: Q2 reads the 4 hash buckets merged in clustering order"
grep -qE '^Q3_sensors_by_site +[0-9]+ +pass +single partition .* 1$' "$WORK/verify.out"
ok $? "verify: Q3 reads one partition"

# --- sync -----------------------------------------------------------------------------------------
"$CQLBRIDGE" sync -q "$GEN" > "$WORK/sync.out" 2>&1
ok $? "sync installs the triggers"
q "BEGIN;
   INSERT INTO telemetry_rel.readings (sensor_id, reported_at, value, quality)
   VALUES (1, '2027-06-01 12:00:00+00', 1.5, 0), (1, '2027-06-01 12:01:00+00', 2.5, 1);
   UPDATE telemetry_rel.readings SET value = -1 WHERE sensor_id = 2 AND reported_at = '2026-01-03 00:00:02+00';
   UPDATE telemetry_rel.readings SET reported_at = '2026-02-20 00:00:01+00'
    WHERE sensor_id = 1 AND reported_at = '2026-01-02 00:00:01+00';
   DELETE FROM telemetry_rel.readings WHERE sensor_id = 2 AND reported_at < '2026-01-01 01:00:00+00';
   INSERT INTO telemetry_rel.alerts (alert_id, site_id, sensor_id, raised_at, severity, message)
   VALUES (99999999, 1, 1, '2027-06-01 12:00:00+00', 4, 'synced');
   DELETE FROM telemetry_rel.alerts WHERE alert_id BETWEEN 10 AND 19;
   COMMIT;" > "$WORK/change.out" 2>&1
rc=$?
ok $rc "relational changes commit with sync installed"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/change.out"
compare_all "after the changes"
is "$(q "SELECT count(*) FROM $FS.readings_by_sensor_id WHERE sensor_id = 1 AND reported_at >= '2027-06-01' AND reported_at < '2027-06-02'")" \
	"2" "the readings in a new bucket are read back through the application's range query"
is "$(q "SELECT reported_at_bucket FROM $FS.readings_by_sensor_id WHERE sensor_id = 1 AND reported_at = '2026-02-20 00:00:01+00'")" \
	"$(q "SELECT cql_time_bucket('2 weeks', timestamptz '2026-02-20 00:00:01+00')")" "a reading moved in time lives in its new bucket"
is "$(q "SELECT count(*) FROM $FS.readings_by_sensor_id WHERE sensor_id = 1 AND reported_at = '2026-01-02 00:00:01+00'")" \
	"0" "and is gone from its old bucket"
"$CQLBRIDGE" verify --samples 10 "$GEN" > "$WORK/verify2.out" 2>&1
ok $? "verify passes again after the synced changes"

# --- diff: time and hash buckets, DESC clustering (test_diff.sh has the rest) ------------------
# (exactly these differences and no other: the tables equal their views after sync)
bkt=$(q "SELECT cql_time_bucket('2 weeks', timestamptz '2026-01-10 00:00:00+00')")
hb=$(q "SELECT bucket FROM $FS.alerts_by_site_id WHERE site_id = 1 AND alert_id = 100")
q "SELECT cql_execute('cqlbridge', \$c\$DELETE FROM $KS.readings_by_sensor_id WHERE sensor_id = 1 AND reported_at_bucket = '$bkt' AND reported_at = '2026-01-10 00:00:01+00'\$c\$),
          cql_execute('cqlbridge', \$c\$INSERT INTO $KS.readings_by_sensor_id (sensor_id, reported_at_bucket, reported_at, value) VALUES (1, '$bkt', '2026-01-10 00:00:00.500+00', 7)\$c\$),
          cql_execute('cqlbridge', \$c\$UPDATE $KS.alerts_by_site_id SET message = 'changed' WHERE site_id = 1 AND bucket = $hb AND alert_id = 100\$c\$)" > /dev/null
"$CQLBRIDGE" diff --json "$WORK/diff.json" "$GEN" > "$WORK/diff2.out" 2>&1
rc=$?
is "$rc:$(jq -c '[.tables[] | [.missing, .extra, .different]]' "$WORK/diff.json")" "1:[[1,1,0],[0,0,1],[0,0,0]]" \
	"diff finds the missing and the stray reading (time bucket, DESC) and the changed alert (hash bucket)"
# stop_when_recorded SIG PID: once some token ranges of the readings are
# recorded, send SIG to the diff PID and wait for it; sets rc (its exit
# status) and n (the ranges recorded)
stop_when_recorded()
{
	local sql="SELECT count(*) FROM cqlbridge.diff_progress WHERE target = '$KS.readings_by_sensor_id'"

	for _ in $(seq 1 400); do
		n=$(q "$sql" 2> /dev/null)
		[ "${n:-0}" -gt 0 ] && break
		sleep 0.02
	done
	kill -"$1" "$2"
	{ wait "$2"; } 2> /dev/null
	rc=$?
	n=$(q "$sql")
}
# interrupted (SIGINT, then SIGKILL) once some token ranges of the readings
# are recorded, a diff resumes after them and reports the same
for sig in INT KILL; do
	"$CQLBRIDGE" diff -q --json "$WORK/diff_$sig.json" "$GEN" > "$WORK/diff_$sig.out" 2>&1 &
	stop_when_recorded "$sig" $!
	# SIGINT: cqlbridge cancels, says so and exits 2; SIGKILL: 128 + 9
	said=0
	if [ "$sig" = INT ]; then
		want_rc=2
		grep -q "interrupted (SIGINT)" "$WORK/diff_$sig.out" || said=1
	else
		want_rc=137
	fi
	ok $(( rc == want_rc && said == 0 && n > 0 && n < 64 ? 0 : 1 )) \
		"diff stopped by SIG$sig after $n of 64 token ranges of the readings (exit $rc, want $want_rc$([ "$sig" = INT ] && echo ", 'interrupted (SIGINT)' said: $([ "$said" = 0 ] && echo yes || echo no)"))" ||
		diag "$(tail -n 5 "$WORK/diff_$sig.out")"
	"$CQLBRIDGE" diff --json "$WORK/diff_$sig.json" "$GEN" > "$WORK/diff_$sig.out" 2>&1
	rc=$?
	is "$rc:$(jq -S -c "del(.finished_at)" "$WORK/diff_$sig.json")" "1:$(jq -S -c "del(.finished_at)" "$WORK/diff.json")" \
		"the diff resumed after SIG$sig reports what an uninterrupted one does"
	# and its Cassandra scan started after those ranges (cql_fdw.token_scan_after)
	grep -q "^diff of $KS.readings_by_sensor_id: resumed after $n of 64 token ranges (Cassandra read from token -\?[0-9]* on)" "$WORK/diff_$sig.out"
	ok $? "the resumed diff read the readings from Cassandra only after range $n"
done
# a --repair killed once ranges of the readings are recorded resumes: it
# repairs the differences of the recorded ranges (their keys were recorded)
# and of the rest.  One more stray reading, in the first of the 64 ranges
# (the lowest token of 2,000 sensors), makes a difference in a recorded range.
low=$(q "SELECT s FROM generate_series(100000, 101999) s
         ORDER BY cql_token('{int,timestamp}', s, timestamptz '$bkt') LIMIT 1")
q "SELECT cql_execute('cqlbridge', \$c\$INSERT INTO $KS.readings_by_sensor_id (sensor_id, reported_at_bucket, reported_at, value) VALUES ($low, '$bkt', '2026-01-10 00:00:00+00', 1)\$c\$)" > /dev/null
"$CQLBRIDGE" diff -q --repair "$GEN" > "$WORK/diff3.out" 2>&1 &
stop_when_recorded KILL $!
rec=$(q "SELECT bool_and(repair) FROM cqlbridge.diff_progress")
"$CQLBRIDGE" diff --repair --json "$WORK/diff3.json" "$GEN" > "$WORK/diff3.out" 2>&1
rc=$?
grep -q "^diff of $KS.readings_by_sensor_id: resumed after $n of 64 token ranges" "$WORK/diff3.out"
resumed=$?
[ "$rec" = t ]
marked=$?
ok $(( rc == 0 && resumed == 0 && marked == 0 ? 0 : 1 )) "a --repair killed after $n of 64 ranges of the readings (its records marked repair: $rec) resumes (exit $rc)"
is "$(jq -c '[.tables[] | [.missing + .extra + .different, .repaired, .still_different]]' "$WORK/diff3.json")" \
	"[[3,3,0],[1,1,0],[0,0,0]]" "the resumed --repair repaired every difference found, those of recorded ranges too"
"$CQLBRIDGE" diff -q "$GEN" > "$WORK/diff4.out" 2>&1
ok $? "diff --repair fixes them; the next diff finds nothing"

exit $((TAP_FAILED > 0))
