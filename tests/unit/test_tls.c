/*
 * test_tls.c
 *		TLS configuration errors of the library (src/cql/cql_tls.c), no
 *		server needed: sslmode names, a verifying mode without a root
 *		certificate, half a client certificate, missing and garbage files,
 *		a key that does not belong to the certificate.  Messages name the
 *		option and the reason, never the path of a key or its contents.
 *		Certificates are made with openssl in a temporary directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "cql_conn.h"

static char dir[] = "/tmp/cql_tls_unit.XXXXXX";

static char *
path(const char *name)
{
	static char buf[4][256];
	static int	k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static int
run(const char *cmd)
{
	char		full[1024];

	snprintf(full, sizeof(full), "cd %s && %s > /dev/null 2>&1", dir, cmd);
	return system(full);
}

static cql_status
try_config(cql_ssl_mode mode, const char *root, const char *cert, const char *key,
		   cql_error *err)
{
	cql_tls_config c;
	cql_tls_context *t = NULL;
	cql_status	st;

	memset(&c, 0, sizeof(c));
	c.mode = mode;
	c.rootcert = root;
	c.cert = cert;
	c.key = key;
	st = cql_tls_context_new(&c, &t, err);
	cql_tls_context_free(t);
	return st;
}

int
main(void)
{
	cql_ssl_mode m;
	cql_error	err;
	FILE	   *f;

	if (mkdtemp(dir) == NULL)
		skip_all("no temporary directory");
	if (run("openssl req -x509 -newkey rsa:2048 -nodes -keyout a.key -out a.pem -days 1 -subj /CN=a") != 0 ||
		run("openssl req -x509 -newkey rsa:2048 -nodes -keyout b.key -out b.pem -days 1 -subj /CN=b") != 0)
		skip_all("openssl could not make test certificates");
	f = fopen(path("garbage.pem"), "w");
	fputs("this is not a certificate\n", f);
	fclose(f);

	plan(22);
	ok(cql_ssl_mode_parse("verify-full", &m) == CQL_OK && m == CQL_SSL_VERIFY_FULL,
	   "verify-full parses");
	ok(cql_ssl_mode_parse("disable", &m) == CQL_OK && m == CQL_SSL_DISABLE, "disable parses");
	ok(cql_ssl_mode_parse("prefer", &m) == CQL_ERR_INVALID_ARG,
	   "prefer is refused (a silent fallback to plaintext is not offered)");
	is_str(cql_ssl_mode_name(CQL_SSL_VERIFY_CA), "verify-ca", "mode names");

	is_int(try_config(CQL_SSL_VERIFY_FULL, NULL, NULL, NULL, &err), CQL_ERR_INVALID_ARG,
		   "verify-full without a root certificate is refused");
	ok(strstr(err.message, "sslrootcert") != NULL, "... naming sslrootcert (%s)", err.message);
	is_int(try_config(CQL_SSL_REQUIRE, NULL, NULL, NULL, &err), CQL_OK,
		   "require without a root certificate: encryption only");
	is_int(try_config(CQL_SSL_REQUIRE, NULL, path("a.pem"), NULL, &err), CQL_ERR_INVALID_ARG,
		   "a client certificate without its key is refused");
	is_int(try_config(CQL_SSL_VERIFY_CA, path("a.pem"), NULL, NULL, &err), CQL_OK,
		   "verify-ca with a root certificate");

	is_int(try_config(CQL_SSL_VERIFY_CA, path("missing.pem"), NULL, NULL, &err), CQL_ERR_TLS,
		   "a missing root certificate");
	ok(strstr(err.message, "sslrootcert") && strstr(err.message, "No such file") &&
	   !strstr(err.message, dir), "... names the option and the reason, not the path (%s)",
	   err.message);
	is_int(try_config(CQL_SSL_VERIFY_CA, path("garbage.pem"), NULL, NULL, &err), CQL_ERR_TLS,
		   "a root certificate file that is no PEM");
	is_int(try_config(CQL_SSL_REQUIRE, NULL, path("a.pem"), path("missing.key"), &err),
		   CQL_ERR_TLS, "a missing client key");
	ok(strstr(err.message, "sslkey") && !strstr(err.message, dir),
	   "... names sslkey, not the path (%s)", err.message);
	is_int(try_config(CQL_SSL_REQUIRE, NULL, path("a.pem"), path("b.key"), &err), CQL_ERR_TLS,
		   "a key that belongs to another certificate");
	ok(strstr(err.message, "does not match") != NULL, "... says it does not match (%s)",
	   err.message);
	ok(strstr(err.message, "PRIVATE KEY") == NULL, "... without key material");
	run("chmod 644 a.key");
	is_int(try_config(CQL_SSL_REQUIRE, NULL, path("a.pem"), path("a.key"), &err), CQL_ERR_TLS,
		   "a client key readable by others is refused (libpq's rule)");
	ok(strstr(err.message, "sslkey") && strstr(err.message, "0600") && !strstr(err.message, dir),
	   "... names sslkey and the permissions wanted, not the path (%s)", err.message);
	run("chmod 600 a.key");
	is_int(try_config(CQL_SSL_REQUIRE, NULL, path("a.pem"), path("a.key"), &err), CQL_OK,
		   "mutual TLS configuration with the right key");
	is_int(try_config(CQL_SSL_REQUIRE, NULL, path("garbage.pem"), path("a.key"), &err),
		   CQL_ERR_TLS, "a client certificate file that is no PEM");
	ok(strstr(err.message, "sslcert") != NULL, "... names sslcert (%s)", err.message);

	run("rm -f a.key a.pem b.key b.pem garbage.pem");
	rmdir(dir);
	return done_testing();
}
