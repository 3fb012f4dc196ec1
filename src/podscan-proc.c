/*
 * One process's files, read for the agent's other parts (its start time,
 * command line, uids, signal masks, ancestors): podscan's too, for podscan
 * is the only reader of /proc, through the same descriptors and reserve.
 */
#include "config.h"

#include "podscan.h"
#include "podscan-private.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int podscan_start_time(const struct podscan *ps, pid_t pid, uint64_t *start, bool *zombie)
{
	struct proc_stat st;
	char buf[1024];
	size_t len;
	int rc;

	rc = podscan_read_pid_file(ps, buf, sizeof(buf), pid, "stat", &len);
	if (rc < 0)
		return rc;
	if (proc_parse_stat(buf, len, &st) < 0)
		return -EINVAL;
	*start = st.starttime;
	*zombie = st.state == 'Z' || st.state == 'X';
	return 0;
}

int64_t podscan_age(uint64_t start, int64_t boot)
{
	long hz = sysconf(_SC_CLK_TCK);
	int64_t began;

	if (hz <= 0 || start >= (uint64_t)(INT64_MAX / US_PER_S))
		return 0;
	began = (int64_t)(start + 1) * US_PER_S / hz;
	return boot > began ? boot - began : 0;
}

int podscan_cmdline(const struct podscan *ps, pid_t pid, uint64_t start, char *buf, size_t cap, size_t *len)
{
	uint64_t now_start;
	bool zombie;
	int rc;

	/* Once the drain has begun a process stuck in the kernel must not hold the stop up (podscan_names_only). */
	if (podscan_cmdlines_off(ps))
		return -EPERM;
	rc = podscan_read_pid_file(ps, buf, cap, pid, "cmdline", len);
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	/* Read after the command line: if the start time still matches, the command line was its. */
	rc = podscan_start_time(ps, pid, &now_start, &zombie);
	if (rc == -ENOENT || (rc == 0 && now_start != start))
		return -ESRCH;
	return rc;
}

int podscan_uids(const struct podscan *ps, pid_t pid, uint64_t start, uid_t *ruid, uid_t *suid)
{
	unsigned long r, e, sv;
	uint64_t now_start;
	char buf[2048], *line;
	bool zombie;
	size_t len;
	int rc;

	rc = podscan_read_pid_file(ps, buf, sizeof(buf), pid, "status", &len);
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%lu %lu %lu", &r, &e, &sv) != 3)
		return -EINVAL;
	rc = podscan_start_time(ps, pid, &now_start, &zombie);
	if (rc == -ENOENT || (rc == 0 && now_start != start))
		return -ESRCH;
	if (rc < 0)
		return rc;
	*ruid = (uid_t)r;
	*suid = (uid_t)sv;
	return 0;
}

/* The three signal masks of pid's status, if it still is that process; the state too (state may be NULL). */
static int sigmasks(const struct podscan *ps, pid_t pid, uint64_t start, uint64_t *caught, uint64_t *ignored,
		    uint64_t *blocked, char *state)
{
	uint64_t now_start;
	char buf[8192];
	bool zombie;
	size_t len;
	int rc;

	rc = podscan_read_pid_file(ps, buf, sizeof(buf), pid, "status", &len);
	if (rc < 0)
		return rc == -ENOENT ? -ESRCH : rc;
	if (proc_status_sigmask(buf, len, "SigCgt", caught) < 0 || proc_status_sigmask(buf, len, "SigIgn", ignored) < 0 ||
	    proc_status_sigmask(buf, len, "SigBlk", blocked) < 0)
		return -EINVAL;
	rc = podscan_start_time(ps, pid, &now_start, &zombie);
	if (rc == -ENOENT || (rc == 0 && (now_start != start || zombie)))
		return -ESRCH;
	if (rc < 0)
		return rc;
	if (state)
		*state = proc_status_state(buf, len);
	return 0;
}

int podscan_catches(const struct podscan *ps, pid_t pid, uint64_t start, int signo)
{
	uint64_t caught, ignored, blocked, bit;
	char state;
	int rc;

	if (signo < 1 || signo > 64)
		return -EINVAL;
	rc = sigmasks(ps, pid, start, &caught, &ignored, &blocked, &state);
	if (rc < 0)
		return rc;
	bit = 1ull << (signo - 1);
	/* Blocked, it waits for sigwait or a signalfd: it does not die of it either. */
	if (!((caught | ignored | blocked) & bit))
		return 0;
	/*
	 * Asleep, waiting for work: its start-up is over. A program still busy
	 * starting may have its handler and yet not act on the signal (nginx
	 * notices a QUIT that came before its master loop only at the next one).
	 */
	if (state != 'S')
		return 0;
	return (caught | blocked) & bit ? 1 : PODSCAN_IGNORES;
}

/* Whether signo's default action ends a process (SIGCHLD, SIGURG, SIGWINCH, SIGCONT and the stops do not). */
static bool ends_by_default(int signo)
{
	return signo != SIGCHLD && signo != SIGCONT && signo != SIGURG && signo != SIGWINCH && signo != SIGSTOP &&
	       signo != SIGTSTP && signo != SIGTTIN && signo != SIGTTOU;
}

int podscan_fate(const struct podscan *ps, pid_t pid, uint64_t start, int signo)
{
	uint64_t caught, ignored, blocked, bit;
	int rc;

	if (signo < 1 || signo > 64)
		return -EINVAL;
	rc = sigmasks(ps, pid, start, &caught, &ignored, &blocked, NULL);
	if (rc < 0)
		return rc;
	bit = 1ull << (signo - 1);
	if ((caught | blocked) & bit)
		return PODSCAN_FATE_HANDLES;
	if (ignored & bit || !ends_by_default(signo))
		return PODSCAN_FATE_IGNORES;
	return PODSCAN_FATE_DIES;
}

size_t podscan_ancestors(const struct podscan *ps, pid_t pid, pid_t *out, size_t cap)
{
	size_t n = 0;

	while (pid > 1 && n < cap) {
		struct proc_stat st;
		char buf[1024];
		size_t len;

		out[n++] = pid;
		if (podscan_read_pid_file(ps, buf, sizeof(buf), pid, "stat", &len) < 0 || proc_parse_stat(buf, len, &st) < 0)
			break;
		pid = st.ppid;
	}
	return n;
}

