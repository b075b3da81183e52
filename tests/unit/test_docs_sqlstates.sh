#!/usr/bin/env bash
# test_docs_sqlstates.sh
#	Every SQLSTATE the extension raises is in the SQLSTATE table of
#	docs/cql_fdw.md, and the table names none it does not raise.
#
#	The codes are the ERRCODE_ names the sources of the extension use
#	(src/fdw, src/bridge/*.c, src/include; not the library's CQL_ERRCODE_
#	names), turned into their five characters by the server's
#	utils/errcodes.h (PG_CONFIG of scripts/lib_common.sh); a row of the
#	table is a line "| XXXXX | ...".  So a new errcode() without docs fails
#	here, before a user meets it.  TAP output; no services.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
# shellcheck source=../../scripts/lib_common.sh
. "$REPO_ROOT/scripts/lib_common.sh"

DOCS=$REPO_ROOT/docs/cql_fdw.md
ERRCODES_H=$("$PG_CONFIG" --includedir-server 2> /dev/null)/utils/errcodes.h
if [ ! -r "$ERRCODES_H" ]; then
	echo "1..0 # SKIP no utils/errcodes.h of $PG_CONFIG"
	exit 0
fi

echo "1..3"

# the five-character code of each ERRCODE_ name the extension uses
names=$(cd "$REPO_ROOT" && grep -ohE '(^|[^A-Z_])ERRCODE_[A-Z0-9_]+' \
	src/fdw/*.c src/fdw/*.h src/bridge/*.c src/include/*.h |
	sed 's/^[^E]*//' | sort -u)
raised=""
unknown=""
for name in $names; do
	code=$(sed -n "s/^#define $name MAKE_SQLSTATE('\(.\)', *'\(.\)', *'\(.\)', *'\(.\)', *'\(.\)').*/\1\2\3\4\5/p" "$ERRCODES_H")
	if [ -z "$code" ]; then
		unknown="$unknown $name"
	else
		raised="$raised $code"
	fi
done
raised=$(printf '%s\n' $raised | sort -u)
documented=$(sed -n 's/^| \([0-9A-Z]\{5\}\) |.*/\1/p' "$DOCS" | sort -u)

if [ -z "$unknown" ] && [ -n "$raised" ]; then
	echo "ok 1 - every ERRCODE_ name used is a SQLSTATE of errcodes.h ($(echo "$raised" | wc -l) codes)"
else
	echo "not ok 1 - every ERRCODE_ name used is a SQLSTATE of errcodes.h"
	echo "#   not found:$unknown"
fi

# result N EMPTY-IF-OK WHAT DETAIL: one TAP line (and the detail on failure)
result()
{
	if [ -z "$2" ]; then
		echo "ok $1 - $3"
	else
		echo "not ok $1 - $3"
		echo "#   $4$2"
	fi
}
result 2 "$(comm -23 <(echo "$raised") <(echo "$documented") | tr '\n' ' ')" \
	"docs/cql_fdw.md has a SQLSTATE row for every code the extension raises" "raised but not documented: "
result 3 "$(comm -13 <(echo "$raised") <(echo "$documented") | tr '\n' ' ')" \
	"every SQLSTATE row of docs/cql_fdw.md is a code the extension raises" "documented but never raised: "
