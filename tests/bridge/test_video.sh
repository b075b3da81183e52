#!/usr/bin/env bash
#
# tests/bridge/test_video.sh - cqlbridge on a second, unrelated schema.
#
# The video site of migrations/video (users, videos, comments, tags) shows
# that nothing in the bridge is hotel-shaped:
#   plan   -> model.txt equals migrations/video/generated/model.txt (the
#             published keys, newest-first clustering C↓, the tag set)
#   apply  -> every foreign table equals its source view, and so does
#             every Cassandra table read by the Python driver (read_back.py)
#   verify -> every query gives the same answers on both sides
#   sync   -> a new comment, an edited video title and a removed tag reach
#             the query tables at COMMIT; verify passes again; a change
#             under REPEATABLE READ is refused
#   diff   -> no difference; a missing newest comment (C↓) and a removed
#             tag made in Cassandra are found, --repair fixes them
#
# Environment: PGHOST/PGPORT/PGUSER (superuser), CQL_HOST (default
# 127.0.0.1), CQLBRIDGE (default build/cqlbridge), BRIDGE_VIDEO_DB /
# BRIDGE_VIDEO_KEYSPACE (default bridge_video_test).
# To refresh the golden model after an intended change:
#   cqlbridge plan -d DB --schema video_rel \
#     --workload migrations/video/workload.sql -o migrations/video/generated
# Output: TAP.
#
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

DB=${BRIDGE_VIDEO_DB:-bridge_video_test}
KS=${BRIDGE_VIDEO_KEYSPACE:-bridge_video_test}
FS=video_cql
VIDEO=$REPO/migrations/video
BRIDGE_KEYSPACES=("$KS")
bridge_begin video
tap_plan 31

fresh_db "$CQL_HOST"
load_migrations "$VIDEO"

# --- plan: the golden model (default keyspace/RF), then the test's own ---------
"$CQLBRIDGE" plan -q --schema video_rel --workload "$VIDEO/workload.sql" \
	-o "$WORK/golden" > "$WORK/plan.out" 2>&1
ok $? "plan of the video workload"
diff -u "$VIDEO/generated/model.txt" "$WORK/golden/model.txt" > "$WORK/model.diff"
rc=$?
ok $rc "model.txt equals migrations/video/generated/model.txt"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/model.diff" | head -40

grep -q '^table video.comments_by_video_id$' "$WORK/golden/model.txt"
ok $? "Q1 is served by comments_by_video_id (plural table names stay plural)"
grep -q 'key: ((video_id), created_at, comment_id)' "$WORK/golden/model.txt" &&
	grep -q 'C↓ created_at' "$WORK/golden/model.txt"
ok $? "comments of a video: newest first (C↓ created_at), comment_id keeps rows unique"
grep -q 'tags .*set<text>' "$WORK/golden/model.txt"
ok $? "a video's tags become a set<text>"

plan_into video_rel "$VIDEO/workload.sql" "plan into the test keyspace"

# --- apply, compare, verify ------------------------------------------------------------
apply_and_compare "apply loads every table" "after apply"
# the load as an independent reader sees it: the Python driver, not cql_fdw
read_back_all "after apply"

"$CQLBRIDGE" verify --samples 5 "$GEN" > "$WORK/verify.out" 2>&1
rc=$?
ok $rc "verify: every query gives the same answers"
[ $rc -eq 0 ] && [ "$(grep -c ' pass ' "$WORK/verify.out")" -eq 5 ]
ok $? "verify: 5 queries pass, all single partition"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/verify.out"

# --- sync ---------------------------------------------------------------------------------
"$CQLBRIDGE" sync -q "$GEN" > "$WORK/sync.out" 2>&1
ok $? "sync installs the triggers"
q "BEGIN;
   INSERT INTO video_rel.comments (comment_id, video_id, user_id, created_at, body)
   SELECT 999999, v.video_id, u.user_id, timestamptz '2030-01-01 00:00:00+00', 'synced'
   FROM (SELECT video_id FROM video_rel.videos ORDER BY video_id LIMIT 1) v,
        (SELECT user_id FROM video_rel.users ORDER BY user_id LIMIT 1) u;
   UPDATE video_rel.videos SET title = title || ' (edited)'
   WHERE video_id = (SELECT video_id FROM video_rel.video_tag ORDER BY video_id, tag_id LIMIT 1);
   DELETE FROM video_rel.video_tag
   WHERE (video_id, tag_id) = (SELECT video_id, tag_id FROM video_rel.video_tag ORDER BY video_id, tag_id LIMIT 1);
   COMMIT;" > "$WORK/change.out" 2>&1
rc=$?
ok $rc "relational changes commit with sync installed"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/change.out"
compare_all "after the changes"
# the COMMIT-time recompute needs READ COMMITTED: other levels are refused
out=$(q "BEGIN ISOLATION LEVEL REPEATABLE READ;
   UPDATE video_rel.videos SET title = title || '!' WHERE video_id = (SELECT video_id FROM video_rel.videos ORDER BY video_id LIMIT 1);
   COMMIT;" 2>&1)
grep -q 'cqlbridge sync needs READ COMMITTED' <<< "$out"
ok $? "a synced change under REPEATABLE READ is refused with a clear error"
"$CQLBRIDGE" verify --samples 5 "$GEN" > "$WORK/verify2.out" 2>&1
ok $? "verify passes again after the synced changes"

# --- diff: newest-first clustering (C↓), a tag set (test_diff.sh has the rest) ----------------
"$CQLBRIDGE" diff -q "$GEN" > "$WORK/diff1.out" 2>&1
rc=$?
ok $rc "diff after the synced changes: no difference"
[ $rc -eq 0 ] || sed 's/^/# /' "$WORK/diff1.out" | head -20
vid=$(q "SELECT video_id FROM $FS.comments_by_video_id ORDER BY video_id, created_at DESC LIMIT 1")
ts=$(q "SELECT to_char(max(created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+0000' FROM $FS.comments_by_video_id WHERE video_id = '$vid'")
tv=$(q "SELECT video_id FROM $FS.videos WHERE tags IS NOT NULL ORDER BY video_id LIMIT 1")
q "SELECT cql_execute('cqlbridge', \$c\$DELETE FROM $KS.comments_by_video_id WHERE video_id = $vid AND created_at = '$ts'\$c\$),
          cql_execute('cqlbridge', \$c\$UPDATE $KS.videos SET tags = tags - {'$(q "SELECT tags[1] FROM $FS.videos WHERE video_id = '$tv'")'} WHERE video_id = $tv\$c\$)" > /dev/null
"$CQLBRIDGE" diff --json "$WORK/diff.json" "$GEN" > "$WORK/diff2.out" 2>&1
rc=$?
is "$rc:$(jq -c '[.tables[] | .missing, .extra, .different] | add' "$WORK/diff.json"):$(jq -c '[.tables[] | .examples[] | .kind + " " + (.columns // "")]' "$WORK/diff.json")" \
	'1:2:["missing ","different tags"]' "diff finds the newest comment missing (C↓) and the removed tag (set)"
"$CQLBRIDGE" diff -q --repair "$GEN" > "$WORK/diff3.out" 2>&1 && "$CQLBRIDGE" diff -q "$GEN" > "$WORK/diff4.out" 2>&1
ok $? "diff --repair fixes them; the next diff finds nothing"

exit $((TAP_FAILED > 0))
