/*
 * Minimal TAP producer for the unit tests: ok(), is_int(), is_str(),
 * skip_all(), bail_out(), and done_testing() which prints the plan and
 * returns the exit status.
 */
#ifndef RG_TAP_H
#define RG_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count, tap_failures;

__attribute__((format(printf, 4, 5), unused))
static int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", pass ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		printf("#   failed at %s:%d\n", file, line);
		tap_failures++;
	}
	fflush(stdout);
	return pass;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                           \
	do {                                                                             \
		long long got_ = (long long)(got), want_ = (long long)(want);            \
		if (!tap_ok(got_ == want_, __FILE__, __LINE__, __VA_ARGS__))              \
			printf("#   got %lld, want %lld\n", got_, want_);                    \
	} while (0)

#define is_str(got, want, ...)                                                           \
	do {                                                                             \
		const char *got_ = (got), *want_ = (want);                               \
		int same_ = got_ && want_ ? strcmp(got_, want_) == 0 : got_ == want_;    \
		if (!tap_ok(same_, __FILE__, __LINE__, __VA_ARGS__))                      \
			printf("#   got \"%s\", want \"%s\"\n", got_ ? got_ : "(null)",     \
			       want_ ? want_ : "(null)");                                 \
	} while (0)

/* Nothing to test here (the kernel lacks what is tested): the plan says so, and why. */
#define skip_all(reason)                                  \
	do {                                              \
		printf("1..0 # SKIP %s\n", (reason));    \
		exit(0);                                  \
	} while (0)

/* The test cannot go on at all. */
#define bail_out(reason)                                  \
	do {                                              \
		printf("Bail out! %s\n", (reason));      \
		exit(1);                                  \
	} while (0)

__attribute__((unused))
static int done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_failures ? 1 : 0;
}

#endif
