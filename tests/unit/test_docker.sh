#!/usr/bin/env bash
# test_docker.sh
#	docker/ stays true without a Docker engine: the compose files parse
#	(Debian's docker-compose, `config -q`) and pass PG_MAJOR to the build;
#	docker/Dockerfile's build stage installs the -dev package of every
#	library the Makefile links (each -lNAME's libNAME.so mapped to its
#	Debian package by dpkg -S, so a new -l needs its package in the
#	Dockerfile), checks PG_MAJOR (15-18) and uses it in both FROMs, and
#	installs the server headers at the image's server version; the final
#	stage installs no compiler and no -dev package.  TAP output; no
#	services.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
DOCKERFILE=$REPO_ROOT/docker/Dockerfile

echo "1..7"
n=0
check()
{
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || echo "#   $3"
	fi
}

# --- the compose files -------------------------------------------------------------
if command -v docker-compose > /dev/null; then
	for f in docker-compose.yml scylla.yml; do
		out=$(cd "$REPO_ROOT/docker" && docker-compose -f "$f" config -q 2>&1)
		check $? "docker/$f parses (docker-compose config -q)" "$out"
	done
	out=$(cd "$REPO_ROOT/docker" && PG_MAJOR=18 docker-compose -f docker-compose.yml config 2>&1)
	printf '%s\n' "$out" | grep -q "PG_MAJOR: '18'"
	check $? "PG_MAJOR reaches the build of the postgres service"
else
	check 1 "docker/docker-compose.yml parses" "docker-compose not installed (scripts/deps.sh installs it)"
	check 1 "docker/scylla.yml parses"
	check 1 "PG_MAJOR reaches the build of the postgres service"
fi

# --- the Dockerfile -----------------------------------------------------------------
# the stages: lines of the first FROM up to the last FROM, and from the last on
build_stage=$(awk '/^FROM /{n++} n == 1' "$DOCKERFILE")
final_stage=$(awk -v last="$(grep -c '^FROM ' "$DOCKERFILE")" '/^FROM /{n++} n == last' "$DOCKERFILE")

# every -lNAME of the Makefile (recipes and SHLIB_LINK; comments ignored)
libs=$(sed 's/#.*//' "$REPO_ROOT/Makefile" | grep -oE '(^|[[:space:]])-l[A-Za-z0-9_+]+' |
	sed 's/^[[:space:]]*-l//' | sort -u)
missing=""
unmapped=""
for l in $libs; do
	so=$(compgen -G "/usr/lib/*/lib$l.so" | head -n1 || true)
	[ -n "$so" ] || so=$(compgen -G "/usr/lib/lib$l.so" | head -n1 || true)
	pkg=$([ -n "$so" ] && dpkg -S "$so" 2> /dev/null | head -n1 | cut -d: -f1)
	if [ -z "$pkg" ]; then
		unmapped="$unmapped -l$l"
	elif ! printf '%s\n' "$build_stage" | grep -qE "(^|[[:space:]])$pkg([[:space:]]|$)"; then
		missing="$missing $pkg(-l$l)"
	fi
done
[ -n "$libs" ] && [ -z "$missing" ] && [ -z "$unmapped" ]
check $? "the build stage installs the -dev package of every library the Makefile links ($(echo $libs))" \
	"missing:$missing; no package found here for:$unmapped"

printf '%s\n' "$build_stage" | grep -q 'postgresql-server-dev-\${PG_MAJOR}' &&
	grep -qE '^ARG PG_MAJOR=1[5-8]$' "$DOCKERFILE" &&
	[ "$(grep -c '^FROM postgres:\${PG_MAJOR}-' "$DOCKERFILE")" = 2 ] &&
	printf '%s\n' "$build_stage" | grep -q '15|16|17|18'
check $? "PG_MAJOR (default 15-18, checked) picks the image and the server headers of both stages"

# the headers at the exact version of the image's server: a later minor's
# headers built a cql_fdw.so a 15.18 server could not load (CHANGELOG.md)
run_line=$(printf '%s\n' "$build_stage" | awk '/^RUN /{r++} r == 1' | tr -d '\\\n')
printf '%s\n' "$run_line" | grep -q "server_version=\$(dpkg-query -W -f='\${Version}' \"postgresql-\${PG_MAJOR}\")" &&
	printf '%s\n' "$run_line" | grep -q 'apt-get install [^|]*"postgresql-server-dev-\${PG_MAJOR}=\${server_version}"'
check $? "the server headers are pinned to the version of the image's server (dpkg-query)"

stages=$(grep -c '^FROM ' "$DOCKERFILE")
bad=$(printf '%s\n' "$final_stage" | grep -oE '(build-essential|gcc|g\+\+|clang|make|[a-z0-9.+-]+-dev)([[:space:]]|$)' | tr -d ' \n')
[ "$stages" -ge 2 ] && [ -z "$bad" ] && printf '%s\n' "$final_stage" | grep -q '^COPY --from=build '
check $? "multi-stage: the final image copies the build's files and installs no compiler or -dev package" \
	"$stages stages; in the final stage: $bad"
