/*
 * bench/java/src/CqlBench.java - the DataStax Java driver 4.x as a benchmark
 * anchor, beside the Python driver scripts (bench/py_*.py).  Same table shape
 * (KS.rows: id int PRIMARY KEY, a bigint, b text, c double, d timestamp), same
 * rows (a = id * 7, b = 'row ' || id, c = id / 3.0, d = 2024-01-01 + id s),
 * same output line, plus the client's CPU seconds over the timed part.
 *
 *   CqlBench create              CREATE KEYSPACE/TABLEs IF NOT EXISTS (RF 1)
 *   CqlBench insert [ROWS]       TRUNCATE + prepared INSERT of ids 1..ROWS,
 *                                async, up to 256 in flight   (default 1000000)
 *   CqlBench scan                SELECT id, a, b, c, d FROM KS.rows, fetch size
 *                                5000, synchronous paging (ResultSet iteration)
 *   CqlBench scan-async          the same with executeAsync + fetchNextPage,
 *                                the next page requested before this one is read
 *   CqlBench lookup [N] [ROWS]   prepared single-partition SELECT by random id,
 *                                N sequential executions (default 5000 of 1..1000000)
 *   CqlBench drop                DROP KEYSPACE KS (refuses 'bench' and system ones)
 *
 * Environment: CQL_HOST (127.0.0.1), CQL_PORT (9042), CQL_DC (datacenter1),
 * BENCH_KS (bench), BENCH_TABLE (rows: the table read by scan/lookup),
 * BENCH_INSERT_TABLE (rows: the table insert truncates and fills),
 * BENCH_CONCURRENCY (256), BENCH_FETCH (5000), CASSANDRA_PID (pids, comma-
 * separated: if set, the nodes' CPU seconds over the timed part are read from
 * /proc and printed too),
 * CLK_TCK (100).
 *
 * Protocol v5, LZ4, consistency LOCAL_ONE.
 */
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.internal.core.context.InternalDriverContext;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;

public final class CqlBench {
    static final String HOST = env("CQL_HOST", "127.0.0.1");
    static final int PORT = Integer.parseInt(env("CQL_PORT", "9042"));
    static final String DC = env("CQL_DC", "datacenter1");
    static final String KS = env("BENCH_KS", "bench");
    static final String TABLE = env("BENCH_TABLE", "rows");
    static final String INSERT_TABLE = env("BENCH_INSERT_TABLE", "rows");
    static final int CONCURRENCY = Integer.parseInt(env("BENCH_CONCURRENCY", "256"));
    static final int FETCH = Integer.parseInt(env("BENCH_FETCH", "5000"));
    static final Instant EPOCH = Instant.parse("2024-01-01T00:00:00Z");

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    /* ---- CPU accounting ---------------------------------------------------- */

    /** CPU seconds of this JVM (all threads: driver I/O, GC, JIT, the caller) */
    static double clientCpu() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean)
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() / 1e9;
        return procCpu("self");
    }

    /** utime + stime of /proc/PID/stat in seconds, -1 if unreadable */
    static double procCpu(String pid) {
        try {
            String s = new String(Files.readAllBytes(Paths.get("/proc", pid, "stat")));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            double hz = Double.parseDouble(env("CLK_TCK", "100"));
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / hz;
        } catch (Exception e) {
            return -1;
        }
    }

    /** CPU seconds of the node JVMs in PIDS (comma-separated), -1 if none or unreadable */
    static double nodeCpu(String pids) {
        if (pids == null || pids.isEmpty()) return -1;
        double sum = 0;
        for (String pid : pids.split(",")) {
            double c = procCpu(pid.trim());
            if (c < 0) return -1;
            sum += c;
        }
        return sum;
    }

    /** wall clock, client CPU and (optionally) node CPU over a timed part */
    static final class Meter {
        final String nodePids = System.getenv("CASSANDRA_PID");
        final long t0 = System.nanoTime();
        final double cpu0 = clientCpu();
        final double node0 = nodeCpu(nodePids);
        double secs, cpu, node = -1;

        Meter stop() {
            secs = (System.nanoTime() - t0) / 1e9;
            cpu = clientCpu() - cpu0;
            if (node0 >= 0) node = nodeCpu(nodePids) - node0;
            return this;
        }

        String suffix() {
            String s = String.format(", client CPU %.2f s", cpu);
            if (node >= 0) s += String.format(", Cassandra CPU %.2f s", node);
            return s + String.format(" (JVM total %.2f s)", clientCpu());
        }
    }

    /* ---- session ------------------------------------------------------------ */

    static CqlSession connect() {
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
                .withString(DefaultDriverOption.PROTOCOL_VERSION, "V5")
                .withString(DefaultDriverOption.PROTOCOL_COMPRESSION, "lz4")
                .withString(DefaultDriverOption.REQUEST_CONSISTENCY, DefaultConsistencyLevel.LOCAL_ONE.name())
                .withInt(DefaultDriverOption.REQUEST_PAGE_SIZE, FETCH)
                .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(60))
                .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
                .withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(30))
                .withInt(DefaultDriverOption.CONNECTION_MAX_REQUESTS, Math.max(1024, CONCURRENCY))
                .build();
        CqlSession s = CqlSession.builder()
                .addContactPoint(new InetSocketAddress(HOST, PORT))
                .withLocalDatacenter(DC)
                .withConfigLoader(config)
                .build();
        InternalDriverContext ctx = (InternalDriverContext) s.getContext();
        System.err.printf("java-driver %s: %s:%d protocol %s, compression %s, keyspace %s%n",
                com.datastax.oss.driver.api.core.session.Session.OSS_DRIVER_COORDINATES.getVersion(),
                HOST, PORT, ctx.getProtocolVersion(), ctx.getCompressor().algorithm(), KS);
        return s;
    }

    /* ---- modes -------------------------------------------------------------- */

    static final String COLUMNS = "(id int PRIMARY KEY, a bigint, b text, c double, d timestamp)";

    static void create(CqlSession s) {
        s.execute("CREATE KEYSPACE IF NOT EXISTS " + KS
                + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
        s.execute("CREATE TABLE IF NOT EXISTS " + KS + "." + TABLE + " " + COLUMNS);
        if (!INSERT_TABLE.equals(TABLE))
            s.execute("CREATE TABLE IF NOT EXISTS " + KS + "." + INSERT_TABLE + " " + COLUMNS);
        System.out.printf("java-driver: created %s.%s%s%n", KS, TABLE,
                INSERT_TABLE.equals(TABLE) ? "" : " and " + KS + "." + INSERT_TABLE);
    }

    static void drop(CqlSession s) {
        if (KS.equals("bench") || KS.startsWith("system"))
            throw new IllegalArgumentException("refusing to drop keyspace " + KS);
        s.execute(SimpleStatement.newInstance("DROP KEYSPACE IF EXISTS " + KS)
                .setTimeout(Duration.ofSeconds(60)));
        System.out.printf("java-driver: dropped keyspace %s%n", KS);
    }

    static void insert(CqlSession s, int nrows) throws Exception {
        s.execute(SimpleStatement.newInstance("TRUNCATE " + KS + "." + INSERT_TABLE)
                .setTimeout(Duration.ofSeconds(60)));
        PreparedStatement ps = s.prepare(
                "INSERT INTO " + KS + "." + INSERT_TABLE + " (id, a, b, c, d) VALUES (?, ?, ?, ?, ?)");
        Semaphore inflight = new Semaphore(CONCURRENCY);
        AtomicReference<Throwable> error = new AtomicReference<>();
        Meter m = new Meter();
        for (int i = 1; i <= nrows && error.get() == null; i++) {
            inflight.acquire();
            CompletionStage<AsyncResultSet> f = s.executeAsync(ps.bind(
                    i, (long) i * 7, "row " + i, i / 3.0, EPOCH.plusSeconds(i)));
            f.whenComplete((rs, t) -> {
                if (t != null) error.compareAndSet(null, t);
                inflight.release();
            });
        }
        inflight.acquire(CONCURRENCY);        // wait for the last ones
        m.stop();
        if (error.get() != null) throw new RuntimeException("insert failed", error.get());
        System.out.printf("java-driver async insert (%d in flight): %d rows in %.2f s = %.0f rows/s%s%n",
                CONCURRENCY, nrows, m.secs, nrows / m.secs, m.suffix());
    }

    static String scanQuery() {
        return "SELECT id, a, b, c, d FROM " + KS + "." + TABLE;
    }

    static void scan(CqlSession s) {
        Meter m = new Meter();
        long n = 0, total = 0;
        ResultSet rs = s.execute(SimpleStatement.newInstance(scanQuery()).setPageSize(FETCH));
        for (Row row : rs) {
            n++;
            total += row.getLong(1);
        }
        m.stop();
        System.out.printf("java-driver full scan: %d rows in %.2f s = %.0f rows/s (checksum %d)%s%n",
                n, m.secs, n / m.secs, total, m.suffix());
    }

    static void scanAsync(CqlSession s) throws Exception {
        Meter m = new Meter();
        long n = 0, total = 0;
        AsyncResultSet rs = s.executeAsync(SimpleStatement.newInstance(scanQuery()).setPageSize(FETCH))
                .toCompletableFuture().get();
        while (true) {
            // ask for the next page first, then read this one while it travels
            CompletionStage<AsyncResultSet> next = rs.hasMorePages() ? rs.fetchNextPage() : null;
            for (Row row : rs.currentPage()) {
                n++;
                total += row.getLong(1);
            }
            if (next == null) break;
            rs = next.toCompletableFuture().get();
        }
        m.stop();
        System.out.printf("java-driver async paged scan: %d rows in %.2f s = %.0f rows/s (checksum %d)%s%n",
                n, m.secs, n / m.secs, total, m.suffix());
    }

    static void lookup(CqlSession s, int count, int nrows) {
        PreparedStatement ps = s.prepare("SELECT id, a, b, c, d FROM " + KS + "." + TABLE + " WHERE id = ?");
        Random rnd = new Random(42);
        for (int i = 0; i < 200; i++)         // warm up
            s.execute(ps.bind(1 + rnd.nextInt(nrows)));
        int found = 0;
        Meter m = new Meter();
        for (int i = 0; i < count; i++)
            if (s.execute(ps.bind(1 + rnd.nextInt(nrows))).one() != null) found++;
        m.stop();
        System.out.printf("java-driver prepared lookup: %d in %.2f s, mean %.3f ms (%d found)%s%n",
                count, m.secs, 1000 * m.secs / count, found, m.suffix());
        if (found != count) throw new IllegalStateException(found + " of " + count + " lookups found a row");
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: CqlBench create|insert [ROWS]|scan|scan-async|lookup [N] [ROWS]|drop");
            System.exit(2);
        }
        int rc = 0;
        try (CqlSession s = connect()) {
            switch (args[0]) {
                case "create": create(s); break;
                case "drop": drop(s); break;
                case "insert": insert(s, args.length > 1 ? Integer.parseInt(args[1]) : 1000000); break;
                case "scan": scan(s); break;
                case "scan-async": scanAsync(s); break;
                case "lookup":
                    lookup(s, args.length > 1 ? Integer.parseInt(args[1]) : 5000,
                            args.length > 2 ? Integer.parseInt(args[2]) : 1000000);
                    break;
                default:
                    System.err.println("unknown mode " + args[0]);
                    rc = 2;
            }
        } catch (com.datastax.oss.driver.api.core.DriverException e) {
            // one line (connection refused, timeouts); BENCH_DEBUG=1 for the trace
            System.err.println("CqlBench " + args[0] + ": " + e);
            if (System.getenv("BENCH_DEBUG") != null) e.printStackTrace();
            rc = 1;
        } catch (IllegalArgumentException | IllegalStateException e) {
            System.err.println("CqlBench " + args[0] + ": " + e.getMessage());
            rc = 1;
        } catch (Exception e) {
            e.printStackTrace();
            rc = 1;
        }
        System.exit(rc);
    }
}
