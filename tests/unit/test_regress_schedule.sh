#!/usr/bin/env bash
# test_regress_schedule.sh
#	Every pg_regress file runs: each sql/NAME.sql is in sql/schedule.txt
#	(what make installcheck, scripts/test.sh and scripts/check.sh run) or
#	in NOT_SCHEDULED below with the reason, each scheduled test has its
#	sql/NAME.sql and expected/NAME.out, each expected file (NAME.out and
#	its alternatives NAME_N.out) belongs to a scheduled test, no test is
#	scheduled twice, and the tests scripts/test.sh leaves out on a version
#	(REGRESS_OMIT) or runs on the cluster (CLUSTER_REGRESS) are scheduled
#	ones (a renamed test would otherwise drop out of those lists unseen).  A new sql/*.sql that nobody scheduled never ran
#	(sql/bridge_cpu_priority.sql, until issue 41): it fails here.  TAP
#	output; no services.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)

# Files of sql/ that are deliberately not in the schedule, one per line:
# "NAME  reason" (a name without a reason does not count).  None at present.
NOT_SCHEDULED=""

cd "$REPO_ROOT" || exit 1
echo "1..6"

scheduled=$(tr -s ' \t' '\n\n' < sql/schedule.txt | sed '/^$/d')
not_scheduled=$(awk 'NF >= 2 { print $1 }' <<< "$NOT_SCHEDULED")

# ok_if LIST DESCRIPTION: ok when LIST (what is wrong) is empty
n=0
failed=0
ok_if()
{
	n=$((n + 1))
	if [ -z "$1" ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
		printf '#   %s\n' $1
	fi
}

missing=""
for f in sql/*.sql; do
	t=$(basename "$f" .sql)
	grep -qxF "$t" <<< "$scheduled" && continue
	grep -qxF "$t" <<< "$not_scheduled" && continue
	missing="$missing $t"
done
if [ -z "$scheduled" ]; then
	ok_if "sql/schedule.txt:empty" "sql/schedule.txt names tests"
else
	ok_if "" "sql/schedule.txt names tests ($(wc -l <<< "$scheduled"))"
fi
ok_if "$missing" "every sql/*.sql is scheduled or listed in NOT_SCHEDULED with a reason"

nofile=""
for t in $scheduled; do
	[ -f "sql/$t.sql" ] || nofile="$nofile sql/$t.sql"
	[ -f "expected/$t.out" ] || nofile="$nofile expected/$t.out"
done
ok_if "$nofile" "every scheduled test has its sql/NAME.sql and expected/NAME.out"

stray=""
for f in expected/*.out; do
	t=$(basename "$f" .out)
	grep -qxF "$t" <<< "$scheduled" && continue
	[[ "$t" =~ ^(.+)_[0-9]+$ ]] && grep -qxF "${BASH_REMATCH[1]}" <<< "$scheduled" && continue
	grep -qxF "$t" <<< "$not_scheduled" && continue
	stray="$stray $f"
done
ok_if "$stray" "every expected/*.out belongs to a scheduled test"

ok_if "$(sort <<< "$scheduled" | uniq -d)" "no test is scheduled twice"

named=$(sed -n -e 's/^declare -A REGRESS_OMIT=(\(.*\))$/\1/p' -e 's/^CLUSTER_REGRESS="\(.*\)"$/\1/p' scripts/test.sh |
	sed 's/\[[0-9]*\]=//g; s/"//g' | tr -s ' ' '\n' | sed '/^$/d' | sort -u)
unknown=""
for t in $named; do
	grep -qxF "$t" <<< "$scheduled" || unknown="$unknown $t"
done
if [ -z "$named" ]; then
	ok_if "scripts/test.sh:no-REGRESS_OMIT-or-CLUSTER_REGRESS-found" "REGRESS_OMIT and CLUSTER_REGRESS of scripts/test.sh name scheduled tests"
else
	ok_if "$unknown" "REGRESS_OMIT and CLUSTER_REGRESS of scripts/test.sh name scheduled tests ($(wc -l <<< "$named"))"
fi
[ "$failed" -eq 0 ]
