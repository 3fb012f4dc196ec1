/*
 * apps/NAME on the shared volume: any container's uid may write it, with
 * any name and any content. An exit code is digits and an optional newline,
 * 0 to 255, and nothing else; a name is printable, without '/' and without
 * a leading dot. Both are checked against a plain reading of those rules.
 * The same bytes as sidecars/NAME, which rearguard sidecar writes and any
 * uid may too: "CODE HOW", read back the same when written again.
 */
#include "config.h"

#include "fuzz.h"
#include "protocol.h"

#include <errno.h>
#include <stdio.h>

/* The rule as docs/protocol.md states it; value is -1 for too big. */
static int expected_code(const char *buf, size_t len)
{
	size_t digits = 0;
	long v = 0;

	if (len == 0 || len >= PROTOCOL_READ_MAX)
		return -2;
	while (digits < len && buf[digits] >= '0' && buf[digits] <= '9') {
		if (v <= 1000)
			v = v * 10 + (buf[digits] - '0');
		digits++;
	}
	if (digits == 0 || !(digits == len || (digits + 1 == len && buf[digits] == '\n')))
		return -2;
	return v <= 255 ? (int)v : -1;
}

static int expected_name_ok(const char *name)
{
	size_t n = strlen(name), i;

	if (n < 1 || n > 63 || name[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x21 || (unsigned char)name[i] > 0x7e || name[i] == '/')
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	char *buf = fuzz_copy(data, size), *name;
	const char *why = NULL;
	int code = -7, rc, want = expected_code(buf, size);

	rc = protocol_parse_code(buf, size, &code, &why);
	if (rc == 0) {
		FUZZ_CHECK(code >= 0 && code <= PROTOCOL_CODE_MAX);
		FUZZ_CHECK(want == code);
	} else {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(want < 0);
		FUZZ_CHECK(code == -7);
		FUZZ_CHECK(why && *why && !strchr(why, '\n'));
	}
	/* sidecars/NAME: a code and how, or one line of why; written back, the same. */
	{
		char how[PROTOCOL_HOW_MAX], again[PROTOCOL_HOW_MAX], text[64];
		int end = -7, end2 = -7;

		how[0] = '\0';
		rc = protocol_parse_end(buf, size, &end, how, sizeof(how), &why);
		if (rc == 0) {
			FUZZ_CHECK(end >= 0 && end <= PROTOCOL_CODE_MAX && *how && !strchr(how, ' '));
			snprintf(text, sizeof(text), "%d %s\n", end, how);
			FUZZ_CHECK(protocol_parse_end(text, strlen(text), &end2, again, sizeof(again), &why) == 0);
			FUZZ_CHECK(end2 == end && strcmp(again, how) == 0);
		} else {
			FUZZ_CHECK(rc == -EINVAL && end == -7 && why && *why && !strchr(why, '\n'));
		}
	}
	name = fuzz_rest(&in);
	FUZZ_CHECK(!!protocol_name_ok(name) == expected_name_ok(name));
	free(name);
	free(buf);
	return 0;
}
