#include "config.h"

#include "log.h"

#include "json.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static enum log_level max_level = LOG_INFO;
static enum log_format format = LOG_TEXT;
static int out_fd = 2;
/* REARGUARD_LOG_MONO=1 (for benchmarks): each line also carries the monotonic clock in microseconds,
 * the clock every process on the machine shares, so events in several containers can be put in order. */
static bool with_mono;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

/*
 * What is waiting to be written: lines kept while the log is held, and
 * what a non-blocking output did not take yet. A line that does not fit is
 * dropped and counted, never waited for.
 */
static char pending[65536];
static size_t npending;
static bool held, nonblocking;
static bool sock; /* the output is a socket: sent to without waiting, its flags untouched */
/* stderr as rearguard was given it, kept for its children when the log's own replaced it. */
static int inherit_fd = -1;
static unsigned long dropped, dropped_total;

/* Writes what the output takes now; blocking only where the output was left blocking. */
static void drain(void)
{
	size_t done = 0;

	while (done < npending) {
		ssize_t n = sock ? send(out_fd, pending + done, npending - done, MSG_DONTWAIT | MSG_NOSIGNAL)
				 : write(out_fd, pending + done, npending - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EAGAIN: the rest waits; another error: the rest is lost */
		done += (size_t)n;
	}
	if (done < npending && !nonblocking)
		done = npending; /* a blocking output failed: nothing will take it */
	memmove(pending, pending + done, npending - done);
	npending -= done;
}

static void keep(const char *line, size_t len)
{
	if (npending + len > sizeof(pending)) {
		dropped++;
		dropped_total++;
		return;
	}
	memcpy(pending + npending, line, len);
	npending += len;
}

void log_flush(void)
{
	unsigned long n;

	drain();
	if (!dropped || npending)
		return;
	/* Room again: say what was lost meanwhile (this line goes through emit, which drains again). */
	n = dropped;
	dropped = 0;
	log_msg(LOG_WARN, FIELDS(LF_INT("dropped", n)), "log lines were dropped: the log output did not take them");
}

void log_hold(void)
{
	held = true;
}


void log_finish(int timeout_ms)
{
	int64_t end = mono_us() + (int64_t)timeout_ms * 1000;

	held = false;
	log_flush();
	while (npending && nonblocking) {
		struct pollfd p = { .fd = out_fd, .events = POLLOUT };
		int64_t left = (end - mono_us()) / 1000;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		log_flush();
	}
}

bool log_pending(void)
{
	return npending > 0;
}

unsigned long log_dropped(void)
{
	return dropped_total;
}

int log_fd(void)
{
	return out_fd;
}

/*
 * The output, made non-blocking without touching anybody else's view of
 * it: a pipe or FIFO (a container runtime's log pipe) is opened anew
 * through /proc/self/fd, which gives a file description of our own; a
 * socket cannot be opened anew, so its flags are left alone (a command run
 * as a child shares it) and every send says MSG_DONTWAIT. Terminals and
 * files stay as they are: they do not stall.
 */
int log_nonblocking(void)
{
	struct stat st;
	char path[64];
	int fd;

	if (fstat(out_fd, &st) < 0)
		return -errno;
	if (S_ISSOCK(st.st_mode)) {
		sock = true;
		nonblocking = true;
		return 0;
	}
	if (!S_ISFIFO(st.st_mode))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", out_fd);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A command run as a child keeps the stderr it would have had: blocking, and its own. */
	if (out_fd == STDERR_FILENO && inherit_fd < 0)
		inherit_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
	/* The new description replaces ours; the old one stays with whoever else has it. */
	if (dup3(fd, out_fd, O_CLOEXEC) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	nonblocking = true;
	return 0;
}

/* One whole line: kept while held or while earlier ones wait, else written now. */
static void emit(const char *line, size_t len)
{
	keep(line, len);
	if (!held)
		log_flush();
}

void log_setup(enum log_level level, enum log_format fmt, int fd)
{
	const char *mono = getenv("REARGUARD_LOG_MONO");

	max_level = level;
	format = fmt;
	out_fd = fd;
	nonblocking = sock = false;
	with_mono = mono && strcmp(mono, "1") == 0;
}

int log_inherited_fd(void)
{
	return inherit_fd;
}

/* Text values are quoted only when they would otherwise be ambiguous. */
static void text_value(struct jbuf *j, const char *s)
{
	bool plain = *s != '\0';
	const char *p;

	for (p = s; *p && plain; p++)
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\')
			plain = false;
	if (plain) {
		jbuf_append(j, s, strlen(s));
		return;
	}
	jbuf_append(j, "\"", 1);
	jbuf_escaped(j, s, strlen(s));
	jbuf_append(j, "\"", 1);
}

static void text_field(struct jbuf *j, const struct log_field *f)
{
	char num[48];

	jbuf_append(j, " ", 1);
	jbuf_append(j, f->key, strlen(f->key));
	jbuf_append(j, "=", 1);
	switch (f->type) {
	case LOGF_STR:
		text_value(j, f->s);
		break;
	case LOGF_INT:
		snprintf(num, sizeof(num), "%lld", f->i);
		jbuf_append(j, num, strlen(num));
		break;
	case LOGF_DURATION:
		snprintf(num, sizeof(num), "%lld.%03lldms", f->i / 1000, f->i % 1000);
		jbuf_append(j, num, strlen(num));
		break;
	case LOGF_JSON:
		jbuf_append(j, f->s, strlen(f->s));
		break;
	}
}

static void json_field(struct jbuf *j, const struct log_field *f)
{
	jbuf_key(j, f->key);
	switch (f->type) {
	case LOGF_STR: jbuf_str(j, f->s); break;
	case LOGF_INT: jbuf_int(j, f->i); break;
	case LOGF_DURATION: jbuf_duration(j, f->i); break;
	case LOGF_JSON: jbuf_raw_value(j, f->s); break;
	}
}

void log_msg(enum log_level level, const struct log_field *fields, const char *fmt, ...)
{
	int saved_errno = errno;
	/* Static: one thread, and never called from a signal handler. */
	static char line[65536];
	char msg[2048], ts[UTC_MS_MAX];
	const struct log_field *f;
	struct jbuf j;
	va_list ap;

	if (level > max_level)
		return;
	struct log_field mono = LF_INT("mono_us", mono_us());

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	format_utc_ms(real_us(), ts);

	/* Leave room for the newline that ends every line, even a cut one. */
	jbuf_init_fixed(&j, line, sizeof(line) - 1);
	if (format == LOG_JSON) {
		jbuf_begin(&j, '{');
		jbuf_key(&j, "ts");
		jbuf_str(&j, ts);
		jbuf_key(&j, "level");
		jbuf_str(&j, level_names[level]);
		jbuf_key(&j, "msg");
		jbuf_str(&j, msg);
		for (f = fields; f && f->key; f++)
			if (f->type != LOGF_STR || f->s)
				json_field(&j, f);
		if (with_mono)
			json_field(&j, &mono);
		jbuf_end(&j, '}');
	} else {
		jbuf_append(&j, ts, strlen(ts));
		jbuf_append(&j, " ", 1);
		jbuf_append(&j, level_names[level], strlen(level_names[level]));
		/* Pad "info" and "warn" to the width of "error" and "debug". */
		jbuf_append(&j, "  ", strlen(level_names[level]) == 4 ? 2 : 1);
		jbuf_append(&j, msg, strlen(msg));
		for (f = fields; f && f->key; f++)
			if (f->type != LOGF_STR || f->s)
				text_field(&j, f);
		if (with_mono)
			text_field(&j, &mono);
	}
	line[j.len] = '\n';
	emit(line, j.len + 1);
	errno = saved_errno;
}
