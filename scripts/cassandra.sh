#!/usr/bin/env bash
#
# scripts/cassandra.sh - run real Apache Cassandra 5.0 test nodes from the
# Maven Central jars (no tarball, no Docker).
#
# Usage:
#   cassandra.sh fetch                     resolve the jars into the cache
#   cassandra.sh start single|auth|cluster|NODE... [--keep-data] [--reuse]
#   cassandra.sh stop [all|single|auth|cluster|NODE...]
#   cassandra.sh status
#   cassandra.sh wait [single|auth|cluster|all|NODE...]
#   cassandra.sh probe HOST [PORT]         v4 OPTIONS -> SUPPORTED check
#   cassandra.sh login HOST PORT USER PASS SASL PLAIN login check
#   cassandra.sh nodetool NODE ARGS...     needs CASSANDRA_JMX=1 at start
#   cassandra.sh cqlsh NODE [ARGS...]      cqlsh from the cache venv
#   cassandra.sh logs NODE                 tail the node's system.log
#   cassandra.sh kill NODE                 SIGKILL the node's JVM (fault tests;
#                                          'start NODE --keep-data' brings it back)
#   cassandra.sh pause|resume NODE         SIGSTOP / SIGCONT the node's JVM
#
# Nodes (all ports 9042 CQL / 7000 storage, one loopback address each):
#   single  127.0.0.1           one node, no authentication
#   node1..node3 127.0.0.1-3    "cluster": all seeds, balanced tokens
#   auth    127.0.0.4           "auth" cluster of three (auth, auth2
#   auth2   127.0.0.8           and auth3; all seeds, balanced tokens):
#   auth3   127.0.0.9           PasswordAuthenticator, cassandra/cassandra,
#                               system_auth at RF 3; dynamic data masking
#                               on, index queries need a partition key
#                               (guardrail).  In start/stop/wait "auth" is
#                               the three nodes, "auth1" the node auth
#                               alone; in the other commands "auth" is the
#                               node 127.0.0.4
#   scratch 127.0.0.5           spare single node for experiments
#   scratch2 127.0.0.10, scratch3 127.0.0.11  more spare single nodes (parallel
#                               development: one per worker)
#   tls     127.0.0.6           client encryption (PEM), optional (TLS and
#                               plaintext on one port), no client certificate
#   mtls    127.0.0.7           TLS only, client certificate required
#                               ("tls-nodes" = both; certificates in
#                               $CASSANDRA_RUN_DIR/tls-certs, made at start)
# single and node1 share 127.0.0.1, so starting one stops the other.
#
# Environment:
#   CQL_FDW_CACHE              cache dir (default ~/.cache/cql_fdw)
#   CASSANDRA_VERSION          cassandra-all version (default: cassandra/pom.xml)
#   CASSANDRA_RUN_DIR          node state (default $CQL_FDW_CACHE/run)
#   CASSANDRA_HEAP             heap per node (default 1G; the auth and
#                              TLS nodes 512M)
#   CASSANDRA_RING_DELAY_MS    gossip ring delay (default 1000)
#   CASSANDRA_JMX=1            enable local JMX (7199/7299/7399, auth
#                              7499/7899/7999)
#   CASSANDRA_JVM_OPTS         extra JVM options, appended last
#   CASSANDRA_C2=1             the full JIT (C2) on the auth and TLS nodes
#                              too (they run the C1 compiler alone: half
#                              the start-up CPU; for benchmarks)
#   CASSANDRA_MLOCK=1          as root, let mlockall lock the heap (default:
#                              CAP_IPC_LOCK dropped, see launch_node)
#   CASSANDRA_KEEP_DATA=1      same as --keep-data
#   CASSANDRA_START_TIMEOUT    seconds (default 180, cluster 300)
#   CASSANDRA_STOP_TIMEOUT     seconds before SIGKILL (default 30)
#   CASSANDRA_CDS              0: no class data sharing archive (default 1,
#                              see cds_flags)
#
set -euo pipefail

# shellcheck source=lib_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_common.sh"
# shellcheck source=lib_cqlprobe.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib_cqlprobe.sh"

POM=$REPO/cassandra/pom.xml
if [ -z "${CASSANDRA_VERSION:-}" ]; then
	CASSANDRA_VERSION=$(sed -n 's:.*<cassandra.version>\(.*\)</cassandra.version>.*:\1:p' "$POM" | head -n1)
fi
KIT=$CACHE/cassandra-$CASSANDRA_VERSION
LIB=$KIT/lib
RUN_DIR=${CASSANDRA_RUN_DIR:-$CACHE/run}
HEAP=${CASSANDRA_HEAP:-1G}
RING_DELAY_MS=${CASSANDRA_RING_DELAY_MS:-1000}
STOP_TIMEOUT=${CASSANDRA_STOP_TIMEOUT:-30}
KEEP_DATA=${CASSANDRA_KEEP_DATA:-0}
REUSE=0
CDS_ARCHIVE=$KIT/classes.jsa
STOP_KILLED=" "

# Java 17 module access Cassandra needs (conf/jvm17-server.options of the
# 5.0 tarball plus the three JDK-only ones of bin/cassandra.in.sh); without
# them the daemon dies at once ("unable to access required classes").
JPMS=(
	-Djdk.attach.allowAttachSelf=true
	--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
	--add-exports=java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
	--add-exports=java.management/com.sun.jmx.remote.security=ALL-UNNAMED
	--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
	--add-exports=java.rmi/sun.rmi.server=ALL-UNNAMED
	--add-exports=java.sql/java.sql=ALL-UNNAMED
	--add-exports=java.base/java.lang.ref=ALL-UNNAMED
	--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED
	--add-exports=jdk.attach/sun.tools.attach=ALL-UNNAMED
	--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
	--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
	--add-opens=java.base/java.lang.module=ALL-UNNAMED
	--add-opens=java.base/jdk.internal.loader=ALL-UNNAMED
	--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
	--add-opens=java.base/jdk.internal.reflect=ALL-UNNAMED
	--add-opens=java.base/jdk.internal.math=ALL-UNNAMED
	--add-opens=java.base/jdk.internal.module=ALL-UNNAMED
	--add-opens=java.base/jdk.internal.util.jar=ALL-UNNAMED
	--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED
	--add-opens=java.base/sun.nio.ch=ALL-UNNAMED
	--add-opens=java.base/java.io=ALL-UNNAMED
	--add-opens=java.base/java.lang.reflect=ALL-UNNAMED
	--add-opens=java.base/java.lang=ALL-UNNAMED
	--add-opens=java.base/java.util=ALL-UNNAMED
	--add-opens=java.base/java.nio=ALL-UNNAMED
)

ALL_NODES="single node1 node2 node3 auth auth2 auth3 scratch scratch2 scratch3 tls mtls"
CLUSTER_NODES="node1 node2 node3"
CLUSTER_SEEDS="127.0.0.1:7000,127.0.0.2:7000,127.0.0.3:7000"
AUTH_NODES="auth auth2 auth3"
AUTH_SEEDS="127.0.0.4:7000,127.0.0.8:7000,127.0.0.9:7000"

# node_attr NODE -> sets ADDR CLUSTER SEEDS TOKEN AUTH JMX_PORT TLS, and
#	GROUP: the nodes of its multi-node cluster (empty for a one-node
#	cluster), PEERS: their addresses
node_attr()
{
	AUTH=0 TLS= GROUP= PEERS=
	case $1 in
		single)
			ADDR=127.0.0.1 CLUSTER="cql_fdw single" SEEDS=127.0.0.1:7000
			TOKEN=-9223372036854775808 JMX_PORT=7199 ;;
		node1|node2|node3)
			CLUSTER="cql_fdw cluster" SEEDS=$CLUSTER_SEEDS
			GROUP=$CLUSTER_NODES PEERS="127.0.0.1 127.0.0.2 127.0.0.3" ;;&
		node1) ADDR=127.0.0.1 TOKEN=-9223372036854775808 JMX_PORT=7199 ;;
		node2) ADDR=127.0.0.2 TOKEN=-3074457345618258603 JMX_PORT=7299 ;;
		node3) ADDR=127.0.0.3 TOKEN=3074457345618258602 JMX_PORT=7399 ;;
		auth|auth2|auth3)
			CLUSTER="cql_fdw auth" SEEDS=$AUTH_SEEDS AUTH=1
			GROUP=$AUTH_NODES PEERS="127.0.0.4 127.0.0.8 127.0.0.9" ;;&
		auth) ADDR=127.0.0.4 TOKEN=-9223372036854775808 JMX_PORT=7499 ;;
		auth2) ADDR=127.0.0.8 TOKEN=-3074457345618258603 JMX_PORT=7899 ;;
		auth3) ADDR=127.0.0.9 TOKEN=3074457345618258602 JMX_PORT=7999 ;;
		scratch)
			ADDR=127.0.0.5 CLUSTER="cql_fdw scratch" SEEDS=127.0.0.5:7000
			TOKEN=-9223372036854775808 JMX_PORT=7599 ;;
		scratch2)
			ADDR=127.0.0.10 CLUSTER="cql_fdw scratch2" SEEDS=127.0.0.10:7000
			TOKEN=-9223372036854775808 JMX_PORT=7099 ;;
		scratch3)
			ADDR=127.0.0.11 CLUSTER="cql_fdw scratch3" SEEDS=127.0.0.11:7000
			TOKEN=-9223372036854775808 JMX_PORT=7098 ;;
		tls)
			ADDR=127.0.0.6 CLUSTER="cql_fdw tls" SEEDS=127.0.0.6:7000
			TOKEN=-9223372036854775808 JMX_PORT=7699 TLS=server ;;
		mtls)
			ADDR=127.0.0.7 CLUSTER="cql_fdw mtls" SEEDS=127.0.0.7:7000
			TOKEN=-9223372036854775808 JMX_PORT=7799 TLS=mutual ;;
		*)
			die "unknown node '$1' (nodes: $ALL_NODES)" ;;
	esac
}

# expand GROUP|NODE... -> node names
expand_nodes()
{
	local a out=""
	for a in "$@"; do
		case $a in
			all) out="$out $ALL_NODES" ;;
			cluster) out="$out $CLUSTER_NODES" ;;
			auth) out="$out $AUTH_NODES" ;;
			auth1) out="$out auth" ;;
			tls-nodes) out="$out tls mtls" ;;
			single|node1|node2|node3|auth2|auth3|scratch|scratch2|scratch3|tls|mtls) out="$out $a" ;;
			*) die "unknown node or group '$a'" ;;
		esac
	done
	echo $out
}

# one_node NAME -> the node NAME names in a command about one node: the
#	node itself, or "auth" for its alias auth1 ("auth" there is the node
#	127.0.0.4, not the auth cluster)
one_node()
{
	case $1 in
		auth1) echo auth ;;
		*) node_attr "$1"; echo "$1" ;;
	esac
}

node_dir() { echo "$RUN_DIR/$1"; }

# Pid of the node's JVM if it is alive and really is that node's JVM (the
# pid file may be stale and the pid reused by another process).
node_pid()
{
	local dir pid
	dir=$(node_dir "$1")
	[ -f "$dir/pid" ] || return 1
	pid=$(cat "$dir/pid" 2>/dev/null) || return 1
	[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
	tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "file://$dir/conf/cassandra.yaml" || return 1
	echo "$pid"
}

# JVMs started from this run dir that no pid file knows about (e.g. a pid
# file removed by hand): found by their config path, never by name.
stray_pids()
{
	local p
	for p in /proc/[0-9]*; do
		[ -r "$p/cmdline" ] || continue
		if tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -qF -- "-Dcassandra.config=file://$RUN_DIR/"; then
			echo "${p#/proc/}"
		fi
	done
}

# ---------------------------------------------------------------------------
# Jars
# ---------------------------------------------------------------------------

lib_complete()
{
	local f n=0
	[ -f "$LIB/.complete" ] || return 1
	while read -r f; do
		[ -s "$LIB/$f" ] || return 1
		n=$((n + 1))
	done < "$LIB/.complete"
	[ "$n" -gt 50 ] && compgen -G "$LIB/cassandra-all-*.jar" > /dev/null
}

fetch_jars()
{
	local t0 tmp
	if lib_complete; then
		return 0
	fi
	command -v mvn > /dev/null || die "mvn not found: run scripts/deps.sh"
	say "resolving cassandra-all $CASSANDRA_VERSION from Maven Central into $LIB"
	t0=$(now)
	tmp=$KIT/lib.tmp
	rm -rf "$tmp"
	mkdir -p "$KIT"
	# .mvn/maven.config (jmc/visualvm paths for sjk's poms) is found from cwd.
	(cd "$REPO/cassandra" &&
		mvn -B -q dependency:copy-dependencies \
			-Dcassandra.version="$CASSANDRA_VERSION" -Dcassandra.lib="$tmp") \
		> "$KIT/mvn.log" 2>&1 || {
		tail -n 40 "$KIT/mvn.log" >&2
		die "maven could not resolve cassandra-all $CASSANDRA_VERSION (log: $KIT/mvn.log)"
	}
	(cd "$tmp" && ls -1 *.jar > .complete)
	rm -rf "$LIB"
	mv "$tmp" "$LIB"
	say "jars ready: $(wc -l < "$LIB/.complete") jars, $(du -sh "$LIB" | cut -f1), $(elapsed "$t0") s"
}

# ---------------------------------------------------------------------------
# Start
# ---------------------------------------------------------------------------

render_yaml()
{
	local node=$1 dir=$2 authn=AllowAllAuthenticator authz=AllowAllAuthorizer
	node_attr "$node"
	if [ "$AUTH" = 1 ]; then
		authn=PasswordAuthenticator authz=CassandraAuthorizer
	fi
	sed -e "s|@CLUSTER_NAME@|$CLUSTER|g" \
		-e "s|@INITIAL_TOKEN@|$TOKEN|g" \
		-e "s|@SEEDS@|$SEEDS|g" \
		-e "s|@ADDRESS@|$ADDR|g" \
		-e "s|@STORAGE_PORT@|7000|g" \
		-e "s|@CQL_PORT@|9042|g" \
		-e "s|@AUTHENTICATOR@|$authn|g" \
		-e "s|@AUTHORIZER@|$authz|g" \
		-e "s|@DATA_DIR@|$dir/data|g" \
		"$REPO/cassandra/cassandra.yaml.in" > "$dir/conf/cassandra.yaml"
	grep -q '@[A-Z_]*@' "$dir/conf/cassandra.yaml" && die "unreplaced placeholder in $dir/conf/cassandra.yaml"
	if [ "$AUTH" = 1 ]; then
		# the auth nodes also have Cassandra 5.0's optional behaviours on
		# (all three: any of them may coordinate a request):
		# dynamic data masking (roles without UNMASK read masked values)
		# and the guardrail that refuses index queries without a partition
		# key (tests/pgtap/50_cassandra5.sql)
		cat >> "$dir/conf/cassandra.yaml" <<-YAML

		dynamic_data_masking_enabled: true
		non_partition_restricted_index_query_enabled: false
		YAML
	fi
	if [ -n "$TLS" ]; then
		# client encryption from PEM files, no Java keystore (Cassandra 5.0)
		cat >> "$dir/conf/cassandra.yaml" <<-YAML

		client_encryption_options:
		  enabled: true
		  optional: $([ "$TLS" = mutual ] && echo false || echo true)
		  require_client_auth: $([ "$TLS" = mutual ] && echo true || echo false)
		  ssl_context_factory:
		    class_name: org.apache.cassandra.security.PEMBasedSslContextFactory
		  keystore: $CERT_DIR/server.pem
		  truststore: $CERT_DIR/ca.pem
		YAML
	fi
	return 0
}

# ---------------------------------------------------------------------------
# TLS test certificates: made with openssl at start-up, never checked in
# ---------------------------------------------------------------------------
CERT_DIR=$RUN_DIR/tls-certs

# make_certs: a CA, a server certificate for the TLS nodes (IP SANs
#	127.0.0.6 and .7, DNS localhost) and a client certificate, valid 30
#	days; remade when missing or expiring within a day.
make_certs()
{
	local d=$CERT_DIR tmp
	if [ -s "$d/server.pem" ] && [ -s "$d/client.pem" ] &&
		openssl x509 -checkend 86400 -noout -in "$d/server.crt" > /dev/null 2>&1; then
		return 0
	fi
	command -v openssl > /dev/null || die "openssl not found: run scripts/deps.sh"
	tmp=$d.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	(
		cd "$tmp"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 30 \
			-subj "/CN=cql_fdw test CA" -addext "basicConstraints=critical,CA:TRUE" \
			-addext "keyUsage=critical,keyCertSign,cRLSign"
		openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out server.key
		openssl req -new -key server.key -out server.csr -subj "/CN=cql_fdw test node"
		printf 'subjectAltName=IP:127.0.0.6,IP:127.0.0.7,DNS:localhost\nextendedKeyUsage=serverAuth\n' > server.ext
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
			-out server.crt -days 30 -extfile server.ext
		cat server.key server.crt > server.pem
		openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out client.key
		openssl req -new -key client.key -out client.csr -subj "/CN=cql_fdw test client"
		printf 'extendedKeyUsage=clientAuth\n' > client.ext
		openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
			-out client.pem -days 30 -extfile client.ext
		chmod 600 ./*.key server.pem
	) > "$RUN_DIR/tls-certs.log" 2>&1 || { cat "$RUN_DIR/tls-certs.log" >&2; die "openssl could not make the test certificates"; }
	rm -rf "$d"
	mv "$tmp" "$d"
	say "TLS test certificates made in $d (CA ca.pem, server.pem, client.pem + client.key)"
}

# cds_flags DIR: the JVM options of class data sharing for the node in DIR,
#	in the array CDS.  Cassandra's classes, parsed and verified once into
#	an archive ($CDS_ARCHIVE) that every later start maps (one node, the
#	same machine: 9.4-10.7 CPU-s until ready instead of 13.3-13.6, ready
#	1-2 s sooner; a CI run starts nodes some fifteen times).  With no
#	archive yet, one node of its own (not of the cluster or the auth
#	cluster) at a time records it (mkdir lock) and writes it at its clean
#	exit; cds_collect installs it when 'stop' is done.  A node
#	killed with SIGKILL writes nothing and the next start records again.
#	The JVM refuses an archive that does not match it (another JDK build,
#	another class path) and starts without it; one older than the JVM's
#	library is removed here.  The jamm agent needs the diagnostic
#	AllowArchivingWithJavaAgent, to record and to use the archive; and no
#	non-empty directory may be on the class path (conf/ is not: the node's
#	cassandra.yaml, logback.xml and triggers are given by path).
cds_flags()
{
	local dir=$1 libjvm owner
	CDS=()
	[ "${CASSANDRA_CDS:-1}" = 1 ] || return 0
	CDS=(-XX:+UnlockDiagnosticVMOptions -XX:+AllowArchivingWithJavaAgent)
	libjvm=$(dirname "$(readlink -f "$(command -v java)")")/../lib/server/libjvm.so
	if [ -f "$CDS_ARCHIVE" ] && [ -f "$libjvm" ] && [ "$libjvm" -nt "$CDS_ARCHIVE" ]; then
		rm -f "$CDS_ARCHIVE"
	fi
	if [ -f "$CDS_ARCHIVE" ]; then
		CDS+=(-XX:SharedArchiveFile="$CDS_ARCHIVE")
		return 0
	fi
	# a recorder that is gone (killed, its run directory removed, or this
	# very node restarted) leaves the lock: take it over
	owner=$(cat "$CDS_ARCHIVE.lock/owner" 2> /dev/null || true)
	if [ -d "$CDS_ARCHIVE.lock" ] &&
		{ [ "$owner" = "$dir" ] || ! kill -0 "$(cat "$owner/pid" 2> /dev/null || echo 999999999)" 2> /dev/null; }; then
		rm -rf "$CDS_ARCHIVE.lock"
	fi
	# only a node of its own records: a cluster node slowed while the
	# others start is what a gossip race at start needs (a peer silent
	# past the ring delay is dropped as a fat client, and the schema then
	# stays split: seen on a start of all eight nodes at once)
	if [ -z "$GROUP" ] && mkdir "$CDS_ARCHIVE.lock" 2> /dev/null; then
		echo "$dir" > "$CDS_ARCHIVE.lock/owner"
		rm -f "$dir/classes.jsa"
		CDS+=(-XX:ArchiveClassesAtExit="$dir/classes.jsa")
	fi
}

# cds_collect DIR KILLED: after the node in DIR stopped, install the
#	archive it recorded (see cds_flags) and release the lock; KILLED=1 when
#	the node had to be killed (its archive may be cut short: dropped).
cds_collect()
{
	local dir=$1 killed=$2
	[ "$(cat "$CDS_ARCHIVE.lock/owner" 2> /dev/null || true)" = "$dir" ] || return 0
	if [ "$killed" != 1 ] && [ -s "$dir/classes.jsa" ] && [ ! -f "$CDS_ARCHIVE" ]; then
		mv -f "$dir/classes.jsa" "$CDS_ARCHIVE.tmp" && mv -f "$CDS_ARCHIVE.tmp" "$CDS_ARCHIVE"
	fi
	rm -f "$dir/classes.jsa"
	rm -rf "$CDS_ARCHIVE.lock"
}

launch_node()
{
	local node=$1 dir jamm cp heap setup_delay=0
	local -a jvm extra CDS
	dir=$(node_dir "$node")
	node_attr "$node"

	if bash -c "</dev/tcp/$ADDR/9042" 2> /dev/null; then
		die "$ADDR:9042 is already in use by another process (not node '$node'): stop it first"
	fi

	mkdir -p "$dir/conf/triggers" "$dir/logs"
	if [ "$KEEP_DATA" != 1 ]; then
		rm -rf "$dir/data"
	fi
	mkdir -p "$dir/data"
	# Keep one generation of old logs for debugging.
	rm -rf "$dir/logs.prev"
	if [ -n "$(ls -A "$dir/logs" 2>/dev/null)" ]; then
		mv "$dir/logs" "$dir/logs.prev"
		mkdir -p "$dir/logs"
	fi
	render_yaml "$node" "$dir"
	cp "$REPO/cassandra/logback.xml" "$dir/conf/logback.xml"

	jamm=$(compgen -G "$LIB/jamm-*.jar" | head -n1) || die "no jamm jar in $LIB"
	# the TLS and auth nodes hold little data: half the memory unless told
	# otherwise
	heap=$HEAP
	if [ -z "${CASSANDRA_HEAP:-}" ] && { [ -n "$TLS" ] || [ "$AUTH" = 1 ]; }; then
		heap=512M
	fi
	cp="$LIB/*"
	cds_flags "$dir"
	# The auth cluster creates system_auth with RF 3 (Cassandra's default
	# is 1: a login would fail whenever the one replica of the role is
	# down).  The default superuser is then written at QUORUM, which fails
	# until the node sees a peer; the role manager retries its setup after
	# superuser_setup_delay_ms, so a delay of 0 would retry in a busy loop.
	if [ "$AUTH" = 1 ] && [ -n "$GROUP" ]; then
		setup_delay=500
	fi

	jvm=(
		-Xms"$heap" -Xmx"$heap" -Xss256k
		-XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxTenuringThreshold=1
		-XX:G1RSetUpdatingPauseTimePercent=5 -XX:MaxGCPauseMillis=300
		-XX:InitiatingHeapOccupancyPercent=70
		-XX:+UseThreadPriorities -XX:+ExitOnOutOfMemoryError
		-XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath="$dir/logs"
		-ea -da:net.openhft...
		-Djava.net.preferIPv4Stack=true -Dchronicle.analytics.disable=true
		"${JPMS[@]}"
		-Dio.netty.tryReflectionSetAccessible=true
		-Dio.netty.allocator.useCacheForAllThreads=true
		-Dio.netty.allocator.maxOrder=11
		# where things are
		-Dcassandra.config="file://$dir/conf/cassandra.yaml"
		-Dcassandra.storagedir="$dir/data"
		-Dcassandra.logdir="$dir/logs"
		-Dcassandra.triggers_dir="$dir/conf/triggers"
		-Dlogback.configurationFile="$dir/conf/logback.xml"
		-Dcassandra-foreground=yes
		# fast, disposable test node
		-Dcassandra.libjemalloc=-
		-Dcassandra.skip_wait_for_gossip_to_settle=0
		-Dcassandra.ring_delay_ms="$RING_DELAY_MS"
		# a node whose schema differs from a peer's pulls it after 1 s
		# (default 60 s): a DDL pushed while a freshly started peer was
		# not yet seen alive otherwise stays unagreed for a minute, which
		# a 30 s schema-agreement wait right after the start measured
		-Dcassandra.migration_delay_ms=1000
		-Dcassandra.schema_pull_interval_ms=5000
		-Dcassandra.superuser_setup_delay_ms="$setup_delay"
		-Dcassandra.skip_sync=true
		-javaagent:"$jamm"
		"${CDS[@]}"
	)
	# The auth nodes serve light test traffic: the C1 compiler alone halves
	# the CPU a node burns until it is ready (14 instead of 28 CPU-s each,
	# measured on the two cores), which is what three JVMs starting at
	# once wait for.  bcrypt with 2^4 rounds instead of 2^10 for the
	# passwords they hash (the superuser, the roles tests create): every
	# login checks one, and a cluster connect logs in on every node.
	# The TLS nodes serve the TLS tests' light traffic too: C1 as well
	# (bench/tls_vs_plain.py compares TLS and plaintext on the same node,
	# so both sides see the same compiler; CASSANDRA_C2=1 gives any node
	# the full JIT for a benchmark).
	if [ "$AUTH" = 1 ]; then
		jvm+=(-Dcassandra.auth_bcrypt_gensalt_log2_rounds=4)
	fi
	if { [ "$AUTH" = 1 ] || [ -n "$TLS" ]; } && [ "${CASSANDRA_C2:-0}" != 1 ]; then
		jvm+=(-XX:TieredStopAtLevel=1)
	fi
	if [ "$AUTH" = 1 ] && [ -n "$GROUP" ]; then
		jvm+=(-Dcassandra.system_auth.default_rf=3)
	fi
	# unsafesystem skips the commit log for the system keyspaces: a node
	# killed with SIGKILL would come back without the schema it had and fail
	# requests with "keyspace does not exist" until it pulls it from its
	# peers.  The fault tests kill cluster nodes, so those keep the schema
	# durable (skip_sync alone loses nothing the kernel has: the OS stays up).
	case $node in
		node1|node2|node3) ;;
		*) jvm+=(-Dcassandra.unsafesystem=true) ;;
	esac
	# extra options last: a later -D wins, so this can override the above
	if [ -n "${CASSANDRA_JVM_OPTS:-}" ]; then
		read -r -a extra <<< "$CASSANDRA_JVM_OPTS"
		jvm+=("${extra[@]}")
	fi
	if [ "${CASSANDRA_JMX:-0}" = 1 ]; then
		jvm+=(-Dcassandra.jmx.local.port="$JMX_PORT" -Dcom.sun.management.jmxremote.authenticate=false)
	fi

	rm -f "$dir/pid"
	echo "$(now)" > "$dir/started_at"
	# setsid: the node survives the terminal or script that started it; it
	# is stopped only by 'cassandra.sh stop'.  The inner shell writes its own
	# pid and then becomes the JVM, so the pid file is the JVM's pid.
	# As root, Cassandra's mlockall(MCL_CURRENT) succeeds and faults in the
	# whole committed heap: ~1.4 GB RSS per idle node instead of ~0.4 GB.
	# Dropping CAP_IPC_LOCK makes it fail harmlessly (a WARN), as it does
	# for any non-root user with the default 8 MB memlock limit.
	local -a nolock=()
	if [ "$(id -u)" -eq 0 ] && [ "${CASSANDRA_MLOCK:-0}" != 1 ] && command -v setpriv > /dev/null; then
		nolock=(setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock)
	fi
	setsid "${nolock[@]}" bash -c 'echo $$ > "$0"; exec "$@"' "$dir/pid" \
		java "${jvm[@]}" -cp "$cp" org.apache.cassandra.service.CassandraDaemon \
		> "$dir/logs/stdout.log" 2>&1 < /dev/null &

	for _ in $(seq 50); do
		[ -s "$dir/pid" ] && break
		sleep 0.1
	done
	say "started $node ($ADDR:9042) pid $(cat "$dir/pid" 2>/dev/null || echo '?'), logs $dir/logs"
}

# Is NODE ready?  0 ready, 1 not yet, 2 dead.
node_ready()
{
	local node=$1 dir log pid peer
	dir=$(node_dir "$node")
	log=$dir/logs/system.log
	node_attr "$node"
	pid=$(node_pid "$node") || return 2
	[ -f "$log" ] || return 1
	grep -q 'Starting listening for CQL clients' "$log" || return 1
	if [ -n "$TLS" ]; then
		cql_tls_probe "$ADDR" 9042 "$CERT_DIR" || return 1
	else
		cql_options_probe "$ADDR" 9042 || return 1
	fi
	# every peer must be seen UP, or early queries at CL>ONE fail (and
	# the auth cluster's logins read the role at QUORUM)
	for peer in $PEERS; do
		[ "$peer" = "$ADDR" ] && continue
		grep -q "/$peer:7000 is now UP" "$log" || return 1
	done
	# the superuser exists once some node of the cluster created it (one
	# or two of the three log 'Created default superuser role'): a real
	# login on this node says so
	if [ "$AUTH" = 1 ]; then
		cql_login_probe "$ADDR" 9042 cassandra cassandra > /dev/null 2>&1 || return 1
	fi
	return 0
}

# wait_nodes TIMEOUT NODE...
wait_nodes()
{
	local timeout=$1 node dir rc t0 pending left
	shift
	t0=$(now)
	pending="$*"
	while [ -n "$pending" ]; do
		left=""
		for node in $pending; do
			rc=0
			node_ready "$node" || rc=$?
			dir=$(node_dir "$node")
			case $rc in
				0)
					say "$node ready after $(awk -v a="$(cat "$dir/started_at")" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s (since start)"
					echo "$(now)" > "$dir/ready_at" ;;
				2)
					say "$node died during startup; last log lines:"
					tail -n 25 "$dir/logs/system.log" >&2 2>/dev/null || true
					tail -n 25 "$dir/logs/stdout.log" >&2 2>/dev/null || true
					return 1 ;;
				*)
					left="$left $node" ;;
			esac
		done
		pending=${left# }
		[ -z "$pending" ] && break
		if awk -v a="$t0" -v b="$(now)" -v t="$timeout" 'BEGIN { exit !(b - a > t) }'; then
			for node in $pending; do
				say "$node not ready after $timeout s; last log lines:"
				tail -n 25 "$(node_dir "$node")/logs/system.log" >&2 2>/dev/null || true
			done
			return 1
		fi
		sleep 1
	done
	return 0
}

# start_timeout NODE...: seconds to wait for them (CASSANDRA_START_TIMEOUT,
#	else 180, or 300 when more than one node of a cluster starts: they
#	share the two cores)
start_timeout()
{
	case " $* " in
		*" node2 "*|*" node3 "*|*" auth2 "*|*" auth3 "*) echo "${CASSANDRA_START_TIMEOUT:-300}" ;;
		*) echo "${CASSANDRA_START_TIMEOUT:-180}" ;;
	esac
}

cmd_start()
{
	local -a args=()
	local a nodes node peer group to_start="" restart="" timeout
	for a in "$@"; do
		case $a in
			--keep-data) KEEP_DATA=1 ;;
			--reuse) REUSE=1 ;;
			*) args+=("$a") ;;
		esac
	done
	[ "${#args[@]}" -gt 0 ] || die "usage: cassandra.sh start single|auth|cluster|NODE... [--keep-data] [--reuse]"
	nodes=$(expand_nodes "${args[@]}")
	fetch_jars
	case " $nodes " in
		*" tls "*|*" mtls "*) mkdir -p "$RUN_DIR"; make_certs ;;
	esac
	command -v java > /dev/null || die "java not found: run scripts/deps.sh"

	# single and node1 both want 127.0.0.1:9042
	case " $nodes " in
		*" single "*) stop_nodes node1 node2 node3 ;;
	esac
	case " $nodes " in
		*" node1 "*) stop_nodes single ;;
	esac

	for node in $nodes; do
		if node_pid "$node" > /dev/null; then
			if [ "$REUSE" = 1 ] && node_ready "$node"; then
				say "$node already running and ready: reused"
				continue
			fi
			restart="$restart $node"
		fi
		to_start="$to_start $node"
	done
	# running nodes are stopped together (each drains in parallel)
	[ -z "$restart" ] || stop_nodes $restart
	restart=""
	# A cluster node restarted with wiped data while its peers remember
	# its old host id is refused ("A node with address ... already
	# exists"): wipe and restart the whole cluster together instead.
	if [ "$KEEP_DATA" != 1 ]; then
		for group in "$CLUSTER_NODES" "$AUTH_NODES"; do
			for peer in $group; do
				case " $to_start " in *" $peer "*) ;; *) continue ;; esac
				for node in $group; do
					case " $to_start " in *" $node "*) continue ;; esac
					if node_pid "$node" > /dev/null; then
						say "$node restarts too: its peers start with fresh data"
						restart="$restart $node"
					fi
				done
				break
			done
		done
		if [ -n "$restart" ]; then
			stop_nodes $restart
			to_start="$to_start$restart"
			nodes="$nodes$restart"
		fi
	fi
	# Launch all first (a cluster starts together, every node is a seed),
	# then wait for all.
	for node in $to_start; do
		launch_node "$node"
	done
	timeout=$(start_timeout $nodes)
	[ -z "$to_start" ] || wait_nodes "$timeout" $to_start
}

cmd_wait()
{
	local nodes node running=""
	nodes=$(expand_nodes "${@:-all}")
	for node in $nodes; do
		node_pid "$node" > /dev/null && running="$running $node"
	done
	[ -n "$running" ] || die "no running node among: $nodes"
	wait_nodes "$(start_timeout $running)" $running
}

# ---------------------------------------------------------------------------
# Stop
# ---------------------------------------------------------------------------

# Send SIGTERM (the shutdown hook drains the node), wait, then SIGKILL.
stop_pids()
{
	local pids="$*" p alive
	[ -n "$pids" ] || return 0
	kill -TERM $pids 2> /dev/null || true
	for _ in $(seq $((STOP_TIMEOUT * 5))); do
		alive=""
		for p in $pids; do
			kill -0 "$p" 2> /dev/null && alive="$alive $p"
		done
		[ -z "$alive" ] && return 0
		sleep 0.2
	done
	say "pids$alive still alive after ${STOP_TIMEOUT}s: SIGKILL"
	STOP_KILLED="$STOP_KILLED$alive "
	kill -KILL $alive 2> /dev/null || true
	sleep 0.5
}

stop_nodes()
{
	local node pid pids="" names="" killed
	local -A pid_of=()
	STOP_KILLED=" "
	for node in "$@"; do
		if pid=$(node_pid "$node"); then
			pids="$pids $pid"
			names="$names $node"
			pid_of[$node]=$pid
		fi
		rm -f "$(node_dir "$node")/ready_at"
	done
	if [ -n "$pids" ]; then
		say "stopping$names"
		stop_pids $pids
	fi
	for node in "$@"; do
		rm -f "$(node_dir "$node")/pid"
		killed=0
		[[ "$STOP_KILLED" == *" ${pid_of[$node]:-none} "* ]] && killed=1
		cds_collect "$(node_dir "$node")" "$killed"
	done
}

# cmd_signal kill|pause|resume NODE: a real fault for the fault tests.
#	kill -9 leaves the pid file: 'start NODE --keep-data' restarts the node
#	with its data (the cluster nodes keep their schema durable, see
#	launch_node).
cmd_signal()
{
	local what=$1 node pid sig
	node=$(one_node "$2")
	pid=$(node_pid "$node") || die "$node is not running"
	case $what in
		kill) sig=KILL ;;
		pause) sig=STOP ;;
		resume) sig=CONT ;;
	esac
	kill -s "$sig" "$pid"
	[ "$what" = kill ] && rm -f "$(node_dir "$node")/ready_at"
	say "$what $node (pid $pid, SIG$sig)"
}

cmd_stop()
{
	local nodes strays
	nodes=$(expand_nodes "${@:-all}")
	stop_nodes $nodes
	if [ "${1:-all}" = all ]; then
		strays=$(stray_pids)
		if [ -n "$strays" ]; then
			say "stopping stray test JVMs:" $strays
			stop_pids $strays
		fi
	fi
}

# ---------------------------------------------------------------------------
# Status and tools
# ---------------------------------------------------------------------------

cmd_status()
{
	local node pid state rss any=1
	printf '%-7s %-16s %-8s %-8s %s\n' NODE ADDRESS PID RSS_MB STATE
	for node in $ALL_NODES; do
		node_attr "$node"
		if pid=$(node_pid "$node"); then
			rss=$(awk '/VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$pid/status" 2>/dev/null || echo '?')
			if node_ready "$node"; then state=ready; else state=starting; fi
			any=0
		else
			pid=- rss=- state=stopped
		fi
		printf '%-7s %-16s %-8s %-8s %s\n' "$node" "$ADDR:9042" "$pid" "$rss" "$state"
	done
	echo "jars: $LIB ($(lib_complete && echo complete || echo missing))"
	echo "run dir: $RUN_DIR"
	return $any
}

cmd_nodetool()
{
	local node
	node=$(one_node "${1:?node}")
	shift
	node_attr "$node"
	fetch_jars
	exec java -Xmx128m "${JPMS[@]}" \
		-Dcassandra.logdir=/tmp -Dlogback.configurationFile="$REPO/cassandra/logback.xml" \
		-cp "$LIB/*" org.apache.cassandra.tools.NodeTool -h 127.0.0.1 -p "$JMX_PORT" "$@"
}

cmd_cqlsh()
{
	local node
	node=$(one_node "${1:?node}")
	shift
	node_attr "$node"
	[ -x "$VENV/bin/cqlsh" ] || die "cqlsh not installed: run scripts/deps.sh"
	if [ "$AUTH" = 1 ]; then
		exec "$VENV/bin/cqlsh" -u "${CQL_USER:-cassandra}" -p "${CQL_PASSWORD:-cassandra}" "$ADDR" 9042 "$@"
	fi
	exec "$VENV/bin/cqlsh" "$ADDR" 9042 "$@"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
	fetch) fetch_jars ;;
	start) cmd_start "$@" ;;
	stop) cmd_stop "$@" ;;
	status) cmd_status ;;
	wait) cmd_wait "$@" ;;
	probe) cql_options_probe "${1:?host}" "${2:-9042}" && echo "CQL ready at $1:${2:-9042}" ;;
	login) cql_login_probe "${1:?host}" "${2:?port}" "${3:?user}" "${4:?password}" && echo "login ok" ;;
	nodetool) cmd_nodetool "$@" ;;
	cqlsh) cmd_cqlsh "$@" ;;
	logs) node=$(one_node "${1:?node}"); tail -n "${2:-50}" "$(node_dir "$node")/logs/system.log" ;;
	kill|pause|resume) cmd_signal "$cmd" "${1:?node}" ;;
	*) awk 'NR >= 3 && /^set -euo/ { exit } NR >= 3 { sub(/^# ?/, ""); print }' "$0"; [ -z "$cmd" ] || exit 2 ;;
esac
