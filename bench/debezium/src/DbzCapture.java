/*
 * bench/debezium/src/DbzCapture.java - the Debezium anchor of
 * bench/stream_compare.sh: Debezium's embedded engine (PostgreSQL connector,
 * pgoutput, its own slot and publication) reading the benchmark's changes,
 * capture only: every change event is counted and its lag measured (receipt
 * time minus the commit time the event carries, source.ts_us), nothing is
 * written anywhere.  Offsets are kept in memory and committed after every
 * batch, so the slot's confirmed position follows what was received.
 *
 * Configuration from system properties: dbz.host, dbz.port, dbz.db,
 * dbz.user, dbz.slot, dbz.publication, dbz.tables (table.include.list).
 * Prints "events N" every second; on SIGTERM (or stdin closed) a summary
 * line "summary events N, span S s, events/s R, lag p50 A s, p99 B s, max
 * C s" and exits.  The slot is dropped on exit (slot.drop.on.stop).
 */
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;

import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;

public class DbzCapture
{
	private static long[] lags = new long[1 << 16];
	private static int n = 0;
	private static long firstUs = 0;
	private static long lastUs = 0;

	private static long nowUs()
	{
		java.time.Instant i = java.time.Instant.now();

		return i.getEpochSecond() * 1000000L + i.getNano() / 1000;
	}

	/* one change event: its commit time (us) -> lag, kept */
	private static synchronized void record(SourceRecord r)
	{
		long		now = nowUs();
		Object		v = r.value();

		if (!(v instanceof Struct))
			return;
		Struct		value = (Struct) v;
		Field		sf = value.schema().field("source");

		if (sf == null)
			return;
		Struct		source = value.getStruct("source");
		long		commitUs;

		if (source.schema().field("ts_us") != null && source.getInt64("ts_us") != null)
			commitUs = source.getInt64("ts_us");
		else
			commitUs = source.getInt64("ts_ms") * 1000L;
		if (n == lags.length)
			lags = Arrays.copyOf(lags, n * 2);
		lags[n++] = now - commitUs;
		if (firstUs == 0)
			firstUs = now;
		lastUs = now;
	}

	private static synchronized String summary()
	{
		long[]		s = Arrays.copyOf(lags, n);

		Arrays.sort(s);
		double		span = n > 1 ? (lastUs - firstUs) / 1e6 : 0;

		return String.format("summary events %d, span %.3f s, events/s %.1f, lag p50 %.3f s, p99 %.3f s, max %.3f s",
							 n, span, span > 0 ? n / span : 0.0,
							 n > 0 ? s[Math.min(n - 1, (int) (0.50 * n))] / 1e6 : Double.NaN,
							 n > 0 ? s[Math.min(n - 1, (int) (0.99 * n))] / 1e6 : Double.NaN,
							 n > 0 ? s[n - 1] / 1e6 : Double.NaN);
	}

	private static String need(String key)
	{
		String		v = System.getProperty(key);

		if (v == null || v.isEmpty())
		{
			System.err.println("DbzCapture: -D" + key + " is required");
			System.exit(2);
		}
		return v;
	}

	public static void main(String[] args) throws Exception
	{
		Properties	p = new Properties();

		p.setProperty("name", "cql_fdw-bench-anchor");
		p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
		p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
		p.setProperty("offset.flush.interval.ms", "0");
		p.setProperty("topic.prefix", "bench");
		p.setProperty("database.hostname", need("dbz.host"));
		p.setProperty("database.port", need("dbz.port"));
		p.setProperty("database.user", need("dbz.user"));
		p.setProperty("database.password", System.getProperty("dbz.password", ""));
		p.setProperty("database.dbname", need("dbz.db"));
		p.setProperty("plugin.name", "pgoutput");
		p.setProperty("slot.name", need("dbz.slot"));
		p.setProperty("slot.drop.on.stop", "true");
		p.setProperty("publication.name", need("dbz.publication"));
		p.setProperty("publication.autocreate.mode", "filtered");
		p.setProperty("table.include.list", need("dbz.tables"));
		p.setProperty("snapshot.mode", "no_data");

		DebeziumEngine<RecordChangeEvent<SourceRecord>> engine =
			DebeziumEngine.create(ChangeEventFormat.of(io.debezium.embedded.Connect.class))
			.using(p)
			.notifying((List<RecordChangeEvent<SourceRecord>> records,
						DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) -> {
				for (RecordChangeEvent<SourceRecord> r : records)
				{
					record(r.record());
					committer.markProcessed(r);
				}
				committer.markBatchFinished();
			})
			.using((success, message, error) -> {
				if (!success)
					System.err.println("DbzCapture: engine stopped: " + message +
									   (error != null ? ": " + error : ""));
			})
			.build();
		ExecutorService ex = Executors.newSingleThreadExecutor();

		ex.execute(engine);
		Runtime.getRuntime().addShutdownHook(new Thread(() -> {
			System.out.println(summary());
			System.out.flush();
			try
			{
				engine.close();
			}
			catch (IOException e)
			{
				System.err.println("DbzCapture: close: " + e);
			}
		}));
		Thread		ticker = new Thread(() -> {
			try
			{
				while (true)
				{
					Thread.sleep(1000);
					synchronized (DbzCapture.class)
					{
						System.out.println("events " + n);
					}
				}
			}
			catch (InterruptedException e)
			{
			}
		});

		ticker.setDaemon(true);
		ticker.start();
		/* stdin closed (or EOF) also stops */
		while (System.in.read() >= 0)
			;
		System.exit(0);
	}
}
