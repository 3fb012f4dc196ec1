/*
 * The log never blocks its caller: a pipe that nobody reads (one page big)
 * takes what fits, the rest waits in a bounded buffer, and what does not fit
 * there is dropped, counted, and said once the pipe takes lines again.
 */
#include "config.h"

#include "log.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Reads whatever the pipe holds now into buf (NUL-terminated); returns its length. */
static size_t slurp(int fd, char *buf, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	while (got < cap - 1 && (n = read(fd, buf + got, cap - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	return got;
}

int main(void)
{
	static char out[1 << 20];
	char filler[900];
	int p[2], s[2], i;
	unsigned long before;
	size_t n;
	const char *line;
	bool whole = true;

	alarm(10); /* a log call that blocks fails the test instead of hanging it */
	if (pipe2(p, O_CLOEXEC) < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0)
		bail_out("pipe");
	if (fcntl(p[1], F_SETPIPE_SZ, 4096) < 0)
		skip_all("cannot shrink a pipe here");
	memset(filler, 'x', sizeof(filler) - 1);
	filler[sizeof(filler) - 1] = '\0';
	log_setup(LOG_INFO, LOG_TEXT, p[1]);
	is_int(log_nonblocking(), 0, "a pipe: made non-blocking (through a description of its own)");
	ok(fcntl(p[1], F_GETFL) & O_NONBLOCK, "the fd is non-blocking now");

	for (i = 0; i < 200; i++)
		log_msg(LOG_INFO, FIELDS(LF_INT("n", i)), "line %s", filler);
	ok(true, "200 lines of 900 bytes into a one-page pipe nobody reads: no call blocked");
	ok(log_pending(), "lines wait for the pipe");
	ok(log_dropped() > 0, "and those that did not fit were dropped: %lu", log_dropped());
	ok(log_dropped() < 200 - 64, "but only those: %lu", log_dropped());

	/* The reader comes back: everything that waited goes out, then the count. */
	n = slurp(p[0], out, sizeof(out));
	for (i = 0; i < 100 && log_pending(); i++) {
		log_flush();
		n += slurp(p[0], out + n, sizeof(out) - n);
	}
	ok(!log_pending(), "all written once the pipe is read");
	ok(strstr(out, "log lines were dropped: the log output did not take them dropped=") != NULL,
	   "the drop is said once there is room");
	for (line = out; *line; line = strchr(line, '\n') + 1) {
		if (strncmp(line, "20", 2) != 0 || !strchr(line, '\n'))
			whole = false;
		if (!strchr(line, '\n'))
			break;
	}
	ok(whole, "in whole lines, in order");

	/* Held: kept, not written, until the owner flushes. */
	log_hold();
	log_msg(LOG_INFO, NULL, "held line");
	is_int(slurp(p[0], out, sizeof(out)), 0, "a held line is not written yet");
	log_flush();
	slurp(p[0], out, sizeof(out));
	ok(strstr(out, "held line") != NULL, "written at the flush");
	log_finish(100);

	/*
	 * A socket cannot be opened anew: its description is the one a command
	 * run as a child inherits, so it stays blocking for them, and the log
	 * still never waits on it.
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) < 0)
		bail_out("socketpair");
	log_setup(LOG_INFO, LOG_TEXT, s[1]);
	is_int(log_nonblocking(), 0, "a socket: made non-blocking for the log");
	ok(!(fcntl(s[1], F_GETFL) & O_NONBLOCK), "its description stays blocking, as a child that shares it needs");
	before = log_dropped();
	for (i = 0; i < 2000; i++)
		log_msg(LOG_INFO, FIELDS(LF_INT("n", i)), "line %s", filler);
	ok(log_dropped() > before, "2000 lines of 900 bytes into a socket nobody reads: no call blocked, %lu dropped",
	   log_dropped() - before);
	fcntl(s[0], F_SETFL, O_NONBLOCK);
	n = slurp(s[0], out, sizeof(out));
	ok(n > 0 && strncmp(out, "20", 2) == 0, "what fitted was sent: %zu bytes", n);
	return done_testing();
}
