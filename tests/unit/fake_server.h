/*-------------------------------------------------------------------------
 *
 * fake_server.h
 *		A scripted, hostile CQL "server" in a thread, for unit tests of the
 *		connection layer that need no Cassandra: it speaks just enough of
 *		protocol v4 (OPTIONS, STARTUP, optional SASL, one QUERY) and then
 *		misbehaves on purpose.
 *
 * Behaviour after the handshake, when the first QUERY arrives:
 *	FAKE_IDLE		never answer
 *	FAKE_FLOOD		send EVENT envelopes (stream -1) without pause until
 *					the client goes away or flood_ms have passed
 *	FAKE_HUGE		send the header of a RESULT claiming 'huge_len' bytes and
 *					a few bytes of it, then stay silent
 * PREPARE is answered with a statement of one int result column; every
 * EXECUTE with one row and FULL metadata whose column name alternates
 * between "a" and "b" (a server flipping metadata on every page).
 * With 'ask_auth' the server answers STARTUP with AUTHENTICATE and accepts
 * any AUTH_RESPONSE; otherwise it answers READY.
 *
 * Clients must connect with protocol_version = 4.  Accepts clients one
 * after the other until stopped.
 *
 * IDENTIFICATION
 *		tests/unit/fake_server.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef CQL_TEST_FAKE_SERVER_H
#define CQL_TEST_FAKE_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum
{
	FAKE_IDLE = 0,
	FAKE_FLOOD,
	FAKE_HUGE
};

typedef struct fake_server
{
	int			listen_fd;
	int			port;
	int			behaviour;
	bool		ask_auth;
	int			flood_ms;		/* give up flooding after this long */
	uint32_t	huge_len;
	pthread_t	thread;
	_Atomic int stop;
	_Atomic int queries;		/* QUERY requests seen */
	_Atomic int executes;		/* EXECUTE requests answered */
	_Atomic long flooded;		/* bytes of EVENT envelopes written */
} fake_server;

static int64_t
fake_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read exactly n bytes (poll with a short timeout to notice 'stop'). */
static int
fake_read(fake_server *s, int fd, uint8_t *p, size_t n)
{
	while (n > 0)
	{
		struct pollfd pf = {fd, POLLIN, 0};
		ssize_t		got;

		if (atomic_load(&s->stop))
			return 0;
		if (poll(&pf, 1, 50) <= 0)
			continue;
		got = recv(fd, p, n, 0);
		if (got <= 0)
			return 0;
		p += got;
		n -= (size_t) got;
	}
	return 1;
}

static int
fake_write(int fd, const uint8_t *p, size_t n)
{
	while (n > 0)
	{
		ssize_t		w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return 0;
		p += w;
		n -= (size_t) w;
	}
	return 1;
}

/* Append a v4 response envelope header to out; returns its length (9). */
static size_t
fake_header(uint8_t *out, int16_t stream, uint8_t opcode, uint32_t len)
{
	out[0] = 0x84;
	out[1] = 0;
	out[2] = (uint8_t) ((uint16_t) stream >> 8);
	out[3] = (uint8_t) stream;
	out[4] = opcode;
	out[5] = (uint8_t) (len >> 24);
	out[6] = (uint8_t) (len >> 16);
	out[7] = (uint8_t) (len >> 8);
	out[8] = (uint8_t) len;
	return 9;
}

static int
fake_reply(int fd, int16_t stream, uint8_t opcode, const uint8_t *body, size_t n)
{
	uint8_t		h[9];

	fake_header(h, stream, opcode, (uint32_t) n);
	return fake_write(fd, h, 9) && (n == 0 || fake_write(fd, body, n));
}

/* One EVENT envelope: STATUS_CHANGE UP 127.0.0.9:9042 */
static size_t
fake_event(uint8_t *out)
{
	static const uint8_t body[] = {
		0, 13, 'S', 'T', 'A', 'T', 'U', 'S', '_', 'C', 'H', 'A', 'N', 'G', 'E',
		0, 2, 'U', 'P',
		4, 127, 0, 0, 9,
		0, 0, 0x23, 0x52
	};

	fake_header(out, -1, 0x0C, sizeof(body));
	memcpy(out + 9, body, sizeof(body));
	return 9 + sizeof(body);
}

static void
fake_flood(fake_server *s, int fd)
{
	static uint8_t buf[1 << 20];
	size_t		n = 0;
	int64_t		until = fake_now_ms() + s->flood_ms;

	while (n + 64 < sizeof(buf))
		n += fake_event(buf + n);
	while (!atomic_load(&s->stop) && fake_now_ms() < until)
	{
		if (!fake_write(fd, buf, n))
			return;
		atomic_fetch_add(&s->flooded, (long) n);
	}
}

static void
fake_session(fake_server *s, int fd)
{
	for (;;)
	{
		uint8_t		h[9];
		uint8_t		body[4096];
		uint32_t	len;
		int16_t		stream;

		if (!fake_read(s, fd, h, 9))
			return;
		len = ((uint32_t) h[5] << 24) | ((uint32_t) h[6] << 16) |
			((uint32_t) h[7] << 8) | h[8];
		stream = (int16_t) (((uint16_t) h[2] << 8) | h[3]);
		if (len > sizeof(body) || !fake_read(s, fd, body, len))
			return;
		switch (h[4])
		{
			case 0x05:			/* OPTIONS -> SUPPORTED, empty multimap */
				{
					static const uint8_t none[2] = {0, 0};

					if (!fake_reply(fd, stream, 0x06, none, 2))
						return;
					break;
				}
			case 0x01:			/* STARTUP */
				if (s->ask_auth)
				{
					static const uint8_t cls[] = {
						0, 19, 'F', 'a', 'k', 'e', 'P', 'a', 's', 's', 'w', 'o', 'r', 'd',
						'A', 'u', 't', 'h', 'e', 'n', 't'
					};

					if (!fake_reply(fd, stream, 0x03, cls, sizeof(cls)))
						return;
				}
				else if (!fake_reply(fd, stream, 0x02, NULL, 0))
					return;
				break;
			case 0x0F:			/* AUTH_RESPONSE -> AUTH_SUCCESS, null token */
				{
					static const uint8_t tok[4] = {0xff, 0xff, 0xff, 0xff};

					if (!fake_reply(fd, stream, 0x10, tok, 4))
						return;
					break;
				}
			case 0x09:			/* PREPARE -> Prepared, no binds, one int column */
				{
					static const uint8_t prep[] = {
						0, 0, 0, 4,			/* kind Prepared */
						0, 2, 0xab, 0xcd,	/* id */
						0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,	/* binds: flags, 0 cols, 0 pk */
						0, 0, 0, 1, 0, 0, 0, 1,	/* result: global spec, 1 column */
						0, 2, 'k', 's', 0, 1, 't',
						0, 1, 'a', 0, 9
					};

					if (!fake_reply(fd, stream, 0x08, prep, sizeof(prep)))
						return;
					break;
				}
			case 0x0A:			/* EXECUTE -> Rows, full metadata, flipping */
				{
					uint8_t		rows[] = {
						0, 0, 0, 2,			/* kind Rows */
						0, 0, 0, 1, 0, 0, 0, 1,	/* global spec, 1 column */
						0, 2, 'k', 's', 0, 1, 't',
						0, 1, 'a', 0, 9,
						0, 0, 0, 1,			/* one row */
						0, 0, 0, 4, 0, 0, 0, 7
					};

					rows[21] = (atomic_fetch_add(&s->executes, 1) & 1) ? 'b' : 'a';
					if (!fake_reply(fd, stream, 0x08, rows, sizeof(rows)))
						return;
					break;
				}
			case 0x07:			/* QUERY */
				atomic_fetch_add(&s->queries, 1);
				if (s->behaviour == FAKE_FLOOD)
				{
					fake_flood(s, fd);
					return;
				}
				if (s->behaviour == FAKE_HUGE)
				{
					uint8_t		out[9 + 16];

					fake_header(out, stream, 0x08, s->huge_len);
					memset(out + 9, 0, 16);
					out[12] = 1;	/* kind VOID... of a body that never ends */
					if (!fake_write(fd, out, sizeof(out)))
						return;
				}
				break;
			default:
				return;
		}
	}
}

static void *
fake_main(void *arg)
{
	fake_server *s = arg;

	while (!atomic_load(&s->stop))
	{
		struct pollfd pf = {s->listen_fd, POLLIN, 0};
		int			fd;

		if (poll(&pf, 1, 50) <= 0)
			continue;
		fd = accept(s->listen_fd, NULL, NULL);
		if (fd < 0)
			continue;
		fake_session(s, fd);
		close(fd);
	}
	close(s->listen_fd);
	return NULL;
}

/* Start the server on 127.0.0.1, an ephemeral port (s->port). */
static int
fake_server_start(fake_server *s, int behaviour, bool ask_auth)
{
	struct sockaddr_in a;
	socklen_t	alen = sizeof(a);
	int			one = 1;

	memset(s, 0, sizeof(*s));
	s->behaviour = behaviour;
	s->ask_auth = ask_auth;
	s->flood_ms = 10000;
	s->huge_len = 200u * 1024 * 1024;
	s->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->listen_fd < 0)
		return 0;
	setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s->listen_fd, (struct sockaddr *) &a, sizeof(a)) < 0 ||
		listen(s->listen_fd, 4) < 0 ||
		getsockname(s->listen_fd, (struct sockaddr *) &a, &alen) < 0)
	{
		close(s->listen_fd);
		return 0;
	}
	s->port = ntohs(a.sin_port);
	return pthread_create(&s->thread, NULL, fake_main, s) == 0;
}

static void
fake_server_stop(fake_server *s)
{
	atomic_store(&s->stop, 1);
	pthread_join(s->thread, NULL);
}

#endif							/* CQL_TEST_FAKE_SERVER_H */
