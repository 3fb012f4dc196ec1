/*
 * /proc/PID/stat of any process in the pod: its comm is chosen by whoever
 * runs it, spaces and parentheses included. proc_parse_stat must take what
 * the kernel writes and refuse the rest without touching its output.
 */
#include "config.h"

#include "fuzz.h"
#include "proc.h"

#include <errno.h>
#include <inttypes.h>

/* Parses what a successful parse produced, written back as the kernel would. */
static void round_trip(const struct proc_stat *st)
{
	char line[256];
	struct proc_stat again;
	int n;

	n = snprintf(line, sizeof(line),
		     "%d (%s) %c %d 1 1 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 %" PRIu64 " 1000 100 0 0 0 0 0 0 0 17 0 0\n",
		     (int)st->pid, st->comm, st->state, (int)st->ppid, st->flags, st->starttime);
	FUZZ_CHECK(n > 0 && (size_t)n < sizeof(line));
	FUZZ_CHECK(proc_parse_stat(line, (size_t)n, &again) == 0);
	FUZZ_CHECK(again.pid == st->pid && again.ppid == st->ppid && again.state == st->state);
	FUZZ_CHECK(again.flags == st->flags && again.starttime == st->starttime);
	FUZZ_CHECK(strcmp(again.comm, st->comm) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = fuzz_copy(data, size);
	const char *open, *close = NULL;
	struct proc_stat st, before;
	uint64_t pid;
	size_t n, i;
	int rc;

	memset(&st, 0xa5, sizeof(st));
	before = st;
	rc = proc_parse_stat(buf, size, &st);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL);
		FUZZ_CHECK(memcmp(&st, &before, sizeof(st)) == 0);
		free(buf);
		return 0;
	}
	FUZZ_CHECK(rc == 0);
	FUZZ_CHECK(st.pid >= 1 && st.ppid >= 0);
	/* The pid is the leading number. */
	for (i = 0, pid = 0; i < size && buf[i] >= '0' && buf[i] <= '9' && pid <= INT32_MAX; i++)
		pid = pid * 10 + (uint64_t)(buf[i] - '0');
	FUZZ_CHECK(pid == (uint64_t)st.pid);
	/* comm is what lies between the first '(' and the last ')', terminated. */
	open = memchr(buf, '(', size);
	for (i = size; i > 0; i--) {
		if (buf[i - 1] == ')') {
			close = buf + i - 1;
			break;
		}
	}
	FUZZ_CHECK(open && close && close > open);
	n = (size_t)(close - open - 1);
	FUZZ_CHECK(n <= PROC_COMM_MAX);
	FUZZ_CHECK(memcmp(st.comm, open + 1, n) == 0 && st.comm[n] == '\0');
	/* The state is the character after ") ". */
	FUZZ_CHECK(close + 2 < buf + size && close[1] == ' ' && close[2] == st.state);
	if (!memchr(st.comm, '\0', n) && st.state != '\0')
		round_trip(&st);
	free(buf);
	return 0;
}
