/*
 * /proc/PID/cmdline of any process in the pod: NUL-separated, possibly
 * rewritten by the process itself (setproctitle), cut at our read size.
 * The scanner takes the basename of argv[0] from it (of its part before
 * ": ", for the programs that rewrite it as "name: what"); the agent parses the
 * command line of every `rearguard run` it finds for the report name, as
 * the agent does: split at NULs, at most 63 arguments.
 */
#include "config.h"

#include "fuzz.h"
#include "options.h"
#include "proc.h"
#include "protocol.h"


static const size_t outlens[] = {0, 1, 2, 5, 16, 17, 64, 256};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Nothing here should print; if it does, it must not flood the fuzzer's output. */
	fuzz_quiet_stdout();
	return 0;
}

static void argv0(const char *buf, size_t len, size_t outlen)
{
	char *out = fuzz_buf(outlen);
	size_t first = strnlen(buf, len), start = 0, i, want;
	const char *colon;

	/* "name: what" (nginx, postgres) is named by what precedes the first ": ". */
	for (colon = buf; (colon = memchr(colon, ':', first - (size_t)(colon - buf))); colon++)
		if ((size_t)(colon - buf) + 1 < first && colon[1] == ' ') {
			first = (size_t)(colon - buf);
			break;
		}
	for (i = 0; i < first; i++)
		if (buf[i] == '/')
			start = i + 1;
	proc_parse_argv0(buf, len, out, outlen);
	if (outlen > 0) {
		want = first - start < outlen - 1 ? first - start : outlen - 1;
		FUZZ_CHECK(strnlen(out, outlen) == want);
		FUZZ_CHECK(memcmp(out, buf + start, want) == 0);
		FUZZ_CHECK(!strchr(out, '/'));
	}
	free(out);
}

static void run_name(char *buf, size_t len)
{
	char *cmdline = malloc(len + 1), *argv[64], name[64];
	size_t i;
	int argc = 0;

	/* The agent reads into a buffer one byte longer, for the terminator. */
	FUZZ_CHECK(cmdline);
	memcpy(cmdline, buf, len);
	cmdline[len] = '\0';
	for (i = 0; i < len && argc < 63; i += strlen(cmdline + i) + 1)
		argv[argc++] = cmdline + i;
	argv[argc] = NULL;
	memset(name, 0x5a, sizeof(name));
	if (options_run_name(argc, argv, name, sizeof(name)) == 0) {
		FUZZ_CHECK(argc >= 2 && strcmp(argv[1], "run") == 0);
		FUZZ_CHECK(memchr(name, '\0', sizeof(name)));
		FUZZ_CHECK(protocol_name_ok(name));
	} else {
		FUZZ_CHECK(name[0] == 0x5a);
	}
	free(cmdline);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	size_t outlen = outlens[fuzz_byte(&in) % (sizeof(outlens) / sizeof(outlens[0]))];
	char *buf = fuzz_copy(in.p, in.n);

	argv0(buf, in.n, outlen);
	run_name(buf, in.n);
	free(buf);
	return 0;
}
