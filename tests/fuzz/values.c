/*
 * The values users type into options, variables and specs: durations,
 * counts, booleans and signal names. Each parser stores a value within its
 * bounds or leaves the output alone; durations and signals survive being
 * written back out and parsed again.
 */
#include "config.h"

#include "fuzz.h"
#include "parse.h"

#include <errno.h>
#include <strings.h>

static void duration(const char *s)
{
	int64_t ms = -7, again = -7;
	char text[32];
	int rc = parse_duration_ms(s, &ms);

	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL || rc == -ERANGE);
		FUZZ_CHECK(ms == -7);
		return;
	}
	FUZZ_CHECK(ms >= 0 && ms <= DURATION_MAX_MS);
	format_duration(ms, text);
	FUZZ_CHECK(parse_duration_ms(text, &again) == 0 && again == ms);
}

static void uint_in(const char *s, unsigned long min, unsigned long max)
{
	unsigned long v = 12345678, ref = 0;
	int rc = parse_uint(s, min, max, &v);
	const char *p;
	int overflow = 0;

	for (p = s; *p >= '0' && *p <= '9'; p++) {
		if (ref > (~0UL - 9) / 10)
			overflow = 1;
		else
			ref = ref * 10 + (unsigned long)(*p - '0');
	}
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL || rc == -ERANGE);
		FUZZ_CHECK(v == 12345678);
		FUZZ_CHECK(p == s || *p || overflow || ref < min || ref > max);
		return;
	}
	FUZZ_CHECK(p != s && *p == '\0' && !overflow);
	FUZZ_CHECK(v == ref && v >= min && v <= max);
}

static void boolean(const char *s)
{
	static const char *const words[] = {"1", "true", "yes", "on", "0", "false", "no", "off"};
	bool v = true, known = false, yes = false;
	size_t i;
	int rc = parse_bool(s, &v);

	for (i = 0; i < 8; i++) {
		if (strcasecmp(s, words[i]) == 0) {
			known = true;
			yes = i < 4;
		}
	}
	FUZZ_CHECK((rc == 0) == known);
	if (rc == 0)
		FUZZ_CHECK(v == yes);
	else
		FUZZ_CHECK(rc == -EINVAL && v == true);
}

static void signal_value(const char *s)
{
	int sig = -7, again = -7;
	int rc = parse_signal(s, &sig);

	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL && sig == -7);
		return;
	}
	FUZZ_CHECK(sig >= 1 && sig <= 31);
	FUZZ_CHECK(strcmp(signal_name(sig), "?") != 0);
	FUZZ_CHECK(parse_signal(signal_name(sig), &again) == 0 && again == sig);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned long min = fuzz_u32(&in) % 2000, max = min + fuzz_u32(&in);
	char *s = fuzz_rest(&in);

	duration(s);
	uint_in(s, min, max);
	boolean(s);
	signal_value(s);
	free(s);
	return 0;
}
