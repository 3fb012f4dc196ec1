/*
 * Times podscan against the /proc it sees: one full scan (every pid new,
 * as at the agent's start) and then rescans where every pid is known (as
 * while the apps run). Run it inside the pod's PID namespace.
 *
 *   scan-bench [--rescans N] [--sidecar REGEX]
 *
 * Prints one JSON object: processes, containers, first_scan_us, and the
 * min/median/max of the rescans in microseconds.
 */
#include "config.h"

#include "podscan.h"
#include "spec.h"
#include "util.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static regex_t sidecar_re;

static enum podscan_match classify(void *arg, const char *kname, const char *comm, const char *argv0,
				   const char *const *argv, size_t argc, size_t *sidecar)
{
	if (regexec(&sidecar_re, comm, 0, NULL, 0) == 0 || (argv0[0] && regexec(&sidecar_re, argv0, 0, NULL, 0) == 0)) {
		*sidecar = 0;
		return MATCH_SIDECAR;
	}
	return MATCH_APP;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct podscan_config cfg = { .proc_path = "/proc", .self_pid = getpid(), .classify = classify };
	const char *sidecar = "fluent-bit|envoy|pilot-agent";
	struct podscan_stats st;
	struct podscan *ps;
	int rescans = 20, i;
	int64_t first, *t;
	char err[256];

	for (i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--rescans") == 0)
			rescans = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--sidecar") == 0)
			sidecar = argv[i + 1];
	}
	if (rescans < 1 || regex_compile_whole(&sidecar_re, sidecar, err, sizeof(err)) < 0) {
		fprintf(stderr, "usage: scan-bench [--rescans N>0] [--sidecar REGEX]\n");
		return 2;
	}
	/* podscan keeps no clock: the bench times each refresh itself. */
	first = mono_us();
	if (podscan_new(&cfg, &ps) < 0 || podscan_refresh(ps, &st) < 0) {
		perror("scan-bench: /proc");
		return 1;
	}
	first = mono_us() - first;
	t = calloc((size_t)rescans, sizeof(*t));
	for (i = 0; i < rescans; i++) {
		t[i] = mono_us();
		podscan_refresh(ps, &st);
		t[i] = mono_us() - t[i];
	}
	qsort(t, (size_t)rescans, sizeof(*t), cmp64);
	printf("{\"processes\":%u,\"containers\":%zu,\"first_scan_us\":%lld,\"rescan_us\":{\"min\":%lld,"
	       "\"median\":%lld,\"max\":%lld}}\n",
	       st.listed, podscan_count(ps), (long long)first, (long long)t[0], (long long)t[rescans / 2],
	       (long long)t[rescans - 1]);
	podscan_free(ps);
	free(t);
	return 0;
}
