/*
 * The webhook's decision on reviews at the API server's largest request
 * (3 MiB), in each shape tests/helpers/bigreview.h makes: every one is
 * answered 200, with the outcome its number of values calls for (past
 * REVIEW_MAX_NODES: allowed unchanged, with a warning; under it: patched),
 * well within the configuration's timeoutSeconds, and within what the
 * server's memory gives one review.
 *
 * Each review runs in a child of its own, so that the child's peak RSS
 * (wait4's rusage) is that review's. The bounds are functional ones, with
 * a margin a loaded machine keeps:
 * - time: 5 s of processor, the timeoutSeconds of manifests/webhook's
 *   configuration, past which the API server gives up on the webhook (the
 *   clock's time is printed, not judged: on a busy machine it measures the
 *   machine); and nothing
 *   superlinear in the review's size, which a time on this machine would
 *   not show (0.4.0 took 2 s for 50,000 annotations, 36 s for 239,000):
 *   the answer costs a few parses of the same bytes (LINEAR_MAX);
 * - memory: REVIEW_RSS_MAX_KB, what one review may take of the
 *   Deployment's 64 MiB (docs/decisions.md: the idle process, its
 *   connections and the bodies and answers held take the rest). Under
 *   AddressSanitizer, whose redzones and quarantine of freed blocks make
 *   the RSS larger, three times that: it still tells a review that stays
 *   within its budget from one whose memory grows with the pod (200 MB
 *   in 0.4.0); the plain build (CI's first pass) holds the exact bound.
 */
#include "config.h"

#include "review.h"
#include "tap.h"
#include "yamldoc.h"

#include "../helpers/bigreview.h"

#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REVIEW_SIZE ((size_t)3 << 20)
#define TIME_MAX_S 5.0
/*
 * The answer's processor time, at most this many times a parse of the same
 * bytes: what is linear in the review stays within a few parses (at most
 * 4.5 here, under ASan too), what is not (the members of 50,000
 * annotations walked once for each) takes a hundred, whatever the
 * machine's speed or load.
 */
#define LINEAR_MAX 30
/* One review's share of the Deployment's 64 MiB (docs/decisions.md), the body among it. */
#define REVIEW_RSS_MAX_KB (32 * 1024)

#if defined(__SANITIZE_ADDRESS__)
#define ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN 1
#endif
#endif
/* AddressSanitizer's redzones and quarantine of freed blocks about double the RSS: three times the bound there. */
#ifdef ASAN
#define RSS_MAX_KB (3 * REVIEW_RSS_MAX_KB)
#else
#define RSS_MAX_KB REVIEW_RSS_MAX_KB
#endif

struct result {
	int status;
	enum review_outcome outcome;
	double seconds;	 /* the answer's, by the clock */
	double cpu;	 /* ...and on the processor */
	double parse;	 /* a parse of the same bytes alone, on the processor (the least of three) */
	bool warned;	 /* a skipped review says why */
};

static double now_s(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The processor time a parse of the body into a tree takes, the least of three: the measure of linear. */
static double parse_cpu(const char *body, size_t len)
{
	double best = 1e9, t0, t;
	struct ystream s;
	char err[256];
	int i;

	for (i = 0; i < 3; i++) {
		t0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
		if (ydoc_parse_json_some(body, len, NULL, REVIEW_MAX_NODES, &s, err, sizeof(err)) == 0)
			ydoc_free(&s);
		t = now_s(CLOCK_PROCESS_CPUTIME_ID) - t0;
		if (t < best)
			best = t;
	}
	return best;
}

/* In the child: the review made, answered and timed; the result on fd. */
static int review_in_child(const char *shape, int fd)
{
	struct inject_options o = { .image = "registry.example.com/rearguard:test", .gate = strcmp(shape, "gated") == 0 };
	struct result res = { 0 };
	struct review_answer a;
	size_t len;
	char *body = big_review(shape, REVIEW_SIZE, &len);
	double t0, c0;

	if (!body)
		return 3;
	res.parse = parse_cpu(body, len);
	t0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	res.status = review_answer(body, len, &o, &a);
	res.cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	res.seconds = now_s(CLOCK_MONOTONIC) - t0;
	res.outcome = a.outcome;
	res.warned = res.status == 200 && a.body && strstr(a.body, "allowed unchanged: more than 100000 values");
	if (res.status >= 0)
		review_answer_free(&a);
	free(body);
	return write(fd, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 4;
}

static void one(const char *shape)
{
	bool past = !strstr(shape, "-long") && strcmp(shape, "reinvoked") != 0 && strcmp(shape, "gated") != 0 &&
		    strcmp(shape, "string") != 0;
	struct result res = { .status = -1 };
	struct rusage ru;
	int fds[2], wstatus = 0;
	pid_t pid;

	if (pipe(fds) < 0)
		bail_out("pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bail_out("fork");
	if (pid == 0) {
		close(fds[0]);
		_exit(review_in_child(shape, fds[1]));
	}
	close(fds[1]);
	if (read(fds[0], &res, sizeof(res)) != (ssize_t)sizeof(res))
		res.status = -1;
	close(fds[0]);
	while (wait4(pid, &wstatus, 0, &ru) < 0 && errno == EINTR)
		;
	ok(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "%s: the child ran (status 0x%x)", shape, wstatus);
	is_int(res.status, 200, "%s: answered 200", shape);
	is_int(res.outcome, past ? REVIEW_SKIPPED : REVIEW_PATCHED, "%s: %s", shape,
	       past ? "past the budget: allowed unchanged" : "patched");
	if (past)
		ok(res.warned, "%s: the warning says why", shape);
	/* Processor time, not the clock's: a loaded machine (CI's other stream, at a higher priority)
	 * may keep the child off the processor for seconds, which says nothing of the review. */
	ok(res.cpu < TIME_MAX_S, "%s: %.3f s of processor (under %.0f s; answered in %.3f s here)", shape, res.cpu,
	   TIME_MAX_S, res.seconds);
	ok(res.cpu <= LINEAR_MAX * res.parse + 0.005, "%s: %.1f ms of processor, at most %d times a parse alone (%.1f ms)",
	   shape, res.cpu * 1e3, LINEAR_MAX, res.parse * 1e3);
	ok(ru.ru_maxrss <= RSS_MAX_KB, "%s: peak RSS %ld kB (at most %d kB)", shape, ru.ru_maxrss, RSS_MAX_KB);
}

int main(void)
{
	size_t i;

	for (i = 0; big_shapes[i]; i++)
		one(big_shapes[i]);
	return done_testing();
}
