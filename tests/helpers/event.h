/*
 * What the test processes (fake.c, standin.c) share: the event log line
 * "<time> <name> <pid> <event>" and durations on their command lines.
 * Header-only, so that each stays one file when linked statically.
 *
 * The time is wall-clock milliseconds, or with RG_EVENT_CLOCK=mono in the
 * environment the monotonic clock in microseconds (for the benchmark).
 */
#ifndef RG_TEST_EVENT_H
#define RG_TEST_EVENT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static inline long event_time(void)
{
	static int mono = -1;
	struct timespec ts;

	if (mono < 0) {
		const char *clock = getenv("RG_EVENT_CLOCK");

		mono = clock && strcmp(clock, "mono") == 0;
	}
	if (mono) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Appends one event line to fd (nothing when fd < 0); a failed write ends the process (99). */
__attribute__((format(printf, 3, 0)))
static inline void event_vlog(int fd, const char *name, const char *fmt, va_list ap)
{
	char line[512], what[256];
	int n;

	if (fd < 0)
		return;
	vsnprintf(what, sizeof(what), fmt, ap);
	n = snprintf(line, sizeof(line), "%ld %s %d %s\n", event_time(), name, (int)getpid(), what);
	if (write(fd, line, (size_t)n) < 0)
		_exit(99);
}

/* "300ms", "2s", "2" (seconds), "1.5m", "1h"; anything else ends the process (64). */
static inline long parse_ms(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		goto bad;
	if (strcmp(end, "ms") == 0)
		return (long)v;
	if (strcmp(end, "s") == 0 || *end == '\0')
		return (long)(v * 1000);
	if (strcmp(end, "m") == 0)
		return (long)(v * 60000);
	if (strcmp(end, "h") == 0)
		return (long)(v * 3600000);
bad:
	fprintf(stderr, "bad duration %s\n", s);
	exit(64);
}

#endif
