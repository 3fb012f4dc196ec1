/*
 * /proc/PID/cgroup of any process in the pod: "ID:CONTROLLERS:PATH" lines
 * on cgroup v1, v2 and hybrid hosts; the paths are the runtime's and may be
 * long. The key that identifies a container must be the file's text, cut
 * of trailing newlines, or an error with the output untouched; the display
 * form must be one line of it that fits.
 */
#include "config.h"

#include "fuzz.h"
#include "proc.h"

#include <errno.h>

static const size_t keylens[] = {1, 2, 8, 64, 4096};
static const size_t displens[] = {0, 1, 16, 96, 4096};

static void display(const char *key, size_t outlen)
{
	char *out = fuzz_buf(outlen);
	size_t n;

	proc_cgroup_display(key, out, outlen);
	if (outlen == 0) {
		free(out);
		return;
	}
	n = strnlen(out, outlen);
	FUZZ_CHECK(n < outlen);
	FUZZ_CHECK(!memchr(out, '\n', n));
	/* A piece of the key: the start of a line's path, or of the key itself. */
	FUZZ_CHECK(strstr(key, out) != NULL);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t pick = fuzz_byte(&in);
	size_t keylen = keylens[pick % 5], len = in.n;
	char *buf = fuzz_copy(in.p, len), *key = fuzz_buf(keylen);
	int rc;

	memset(key, 0x5a, keylen);
	rc = proc_cgroup_key(buf, len, key, keylen);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(key[0] == 0x5a);
	} else {
		FUZZ_CHECK(rc > 0 && (size_t)rc < keylen);
		FUZZ_CHECK(strlen(key) == (size_t)rc);
		FUZZ_CHECK(memcmp(key, buf, (size_t)rc) == 0);
		FUZZ_CHECK(memchr(key, ':', (size_t)rc));
		FUZZ_CHECK(key[rc - 1] != '\n');
		display(key, displens[pick / 5 % 5]);
	}
	free(key);
	free(buf);
	return 0;
}
