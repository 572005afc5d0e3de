// SPDX-License-Identifier: BSD-2-Clause
/*
 * Running under systemd without libsystemd: the readiness datagram to
 * $NOTIFY_SOCKET (a path and an abstract name) and the "<N>" priority of
 * each line when stderr is the journal's stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "sdnotify.h"

/* A datagram socket bound to @name (a path, or '@' and an abstract
 * name), as systemd's own listener would be. */
static int listener(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memcpy(sa.sun_path, name, n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	else
		unlink(name);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	return fd;
}

/* The next datagram on @fd, NUL-terminated in @buf. */
static void receive(int fd, char *buf, size_t len)
{
	ssize_t n = recv(fd, buf, len - 1, MSG_DONTWAIT);

	assert_true(n >= 0);
	buf[n] = '\0';
}

static void test_notify_path(void **state)
{
	char path[64], buf[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/ibw-notify-%d.sock", (int)getpid());
	fd = listener(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(ibw_sd_notify("READY=1"), 1);
	receive(fd, buf, sizeof(buf));
	assert_string_equal(buf, "READY=1");
	assert_int_equal(ibw_sd_notify("STOPPING=1"), 1);
	receive(fd, buf, sizeof(buf));
	assert_string_equal(buf, "STOPPING=1");
	close(fd);
	unlink(path);
	/* Nobody listening any more: the error, not a crash or a hang. */
	assert_int_equal(ibw_sd_notify("READY=1"), -ENOENT);
	unsetenv("NOTIFY_SOCKET");
}

/* systemd's own socket is a path; a container manager or a test may
 * name an abstract one ("@name"), whose exact length is the address. */
static void test_notify_abstract(void **state)
{
	char name[64], buf[64];
	int fd;

	snprintf(name, sizeof(name), "@ibw-notify-%d", (int)getpid());
	fd = listener(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(ibw_sd_notify("READY=1"), 1);
	receive(fd, buf, sizeof(buf));
	assert_string_equal(buf, "READY=1");
	close(fd);
	/* A name that is a prefix of the bound one is another address. */
	name[strlen(name) - 1] = '\0';
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(ibw_sd_notify("READY=1"), -ECONNREFUSED);
	unsetenv("NOTIFY_SOCKET");
}

static void test_notify_unset_and_unusable(void **state)
{
	char longname[200];

	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(ibw_sd_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "", 1);
	assert_int_equal(ibw_sd_notify("READY=1"), 0);
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	assert_int_equal(ibw_sd_notify("READY=1"), -EAFNOSUPPORT);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	setenv("NOTIFY_SOCKET", longname, 1);
	assert_int_equal(ibw_sd_notify("READY=1"), -ENAMETOOLONG);
	unsetenv("NOTIFY_SOCKET");
}

/* Run the logger with stderr on a fresh file and JOURNAL_STREAM set by
 * @stream ("match": that file's device and inode; else the text given),
 * and return what it wrote. */
static char *log_with_stream(const char *stream, int *journal)
{
	static char out[1024];
	char path[64], env[64];
	struct stat st;
	int saved = dup(STDERR_FILENO), fd;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/tmp/ibw-journal-%d.txt", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && saved >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	if (!strcmp(stream, "match"))
		snprintf(env, sizeof(env), "%ju:%ju", (uintmax_t)st.st_dev,
			 (uintmax_t)st.st_ino);
	else
		snprintf(env, sizeof(env), "%s", stream);
	setenv("JOURNAL_STREAM", env, 1);
	dup2(fd, STDERR_FILENO);
	close(fd);

	*journal = ibw_log_detect_journal();
	ibw_log_set_level(IBW_LOG_DEBUG);
	log_err("main", "bad %d", 1);
	log_warn("snmp", "careful");
	log_info("http", "listening");
	log_debug("engine", "detail");
	ibw_log_stderr_text(IBW_LOG_ERR, "ibwatchd: one\nf.conf:2: two\n");

	dup2(saved, STDERR_FILENO);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	ibw_log_detect_journal();
	ibw_log_set_level(IBW_LOG_INFO);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	fclose(f);
	unlink(path);
	return out;
}

static void test_journal_priorities(void **state)
{
	int journal;
	const char *out = log_with_stream("match", &journal);

	assert_int_equal(journal, 1);
	assert_string_equal(out, "<3>main: bad 1\n"
				 "<4>snmp: careful\n"
				 "<6>http: listening\n"
				 "<7>engine: detail\n"
				 "<3>ibwatchd: one\n"
				 "<3>f.conf:2: two\n");
}

/* JOURNAL_STREAM inherited, but stderr is some other file now (a
 * redirection in ExecStart, a child): plain lines. */
static void test_journal_other_stream(void **state)
{
	int journal;
	const char *out = log_with_stream("1:2", &journal);

	assert_int_equal(journal, 0);
	assert_string_equal(out, "ibwatchd[err] main: bad 1\n"
				 "ibwatchd[warn] snmp: careful\n"
				 "ibwatchd[info] http: listening\n"
				 "ibwatchd[debug] engine: detail\n"
				 "ibwatchd: one\n"
				 "f.conf:2: two\n");
	out = log_with_stream("garbage", &journal);
	assert_int_equal(journal, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notify_path),
		cmocka_unit_test(test_notify_abstract),
		cmocka_unit_test(test_notify_unset_and_unusable),
		cmocka_unit_test(test_journal_priorities),
		cmocka_unit_test(test_journal_other_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
