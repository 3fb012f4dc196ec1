/*
 * The webhook's decision alone, in process: review_answer over one
 * AdmissionReview, many times, without TLS, HTTP or the loop. Prints the
 * mean microseconds a review; bench/webhook.sh shows it beside the
 * server's figures. --once answers it once, whatever its outcome, and
 * prints the outcome, the milliseconds and the process's peak RSS: what
 * one review costs (tests/helpers/bigreview makes the largest ones).
 *
 *	bench/review-bench REVIEW.json [TIMES]   (default 2000)
 *	bench/review-bench --once [--gate] REVIEW.json
 */
#include "config.h"

#include "review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define BODY_MAX ((size_t)64 << 20)

static double elapsed_us(const struct timespec *t0, const struct timespec *t1)
{
	return ((double)(t1->tv_sec - t0->tv_sec) * 1e9 + (double)(t1->tv_nsec - t0->tv_nsec)) / 1e3;
}

int main(int argc, char **argv)
{
	struct inject_options o = {.image = "registry.example.com/rearguard:bench"};
	struct timespec t0, t1;
	bool once = argc > 1 && strcmp(argv[1], "--once") == 0;
	long times = 2000, i;
	char *body = malloc(BODY_MAX);
	struct review_answer a;
	struct rusage ru;
	size_t len;
	int status;
	FILE *f;

	if (once && argc > 2 && strcmp(argv[2], "--gate") == 0) {
		o.gate = true;
		argv++;
		argc--;
	}
	if (once) {
		argv++;
		argc--;
	} else if (argc > 2) {
		times = strtol(argv[2], NULL, 10);
	}
	if (!body || argc < 2 || times < 1 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: review-bench REVIEW.json [TIMES] | --once [--gate] REVIEW.json\n");
		return 2;
	}
	len = fread(body, 1, BODY_MAX, f);
	fclose(f);
	if (once) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		status = review_answer(body, len, &o, &a);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		getrusage(RUSAGE_SELF, &ru);
		printf("%d %s %.1f ms, peak RSS %ld kB\n", status, status < 0 ? "-" : review_outcome_word(a.outcome),
		       elapsed_us(&t0, &t1) / 1e3, ru.ru_maxrss);
		if (status >= 0)
			review_answer_free(&a);
		free(body);
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < times; i++) {
		status = review_answer(body, len, &o, &a);
		if (status != 200 || a.outcome != REVIEW_PATCHED) {
			fprintf(stderr, "review-bench: the review was answered %d (%s), not patched\n", status,
				review_outcome_word(a.outcome));
			return 1;
		}
		review_answer_free(&a);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.1f\n", elapsed_us(&t0, &t1) / (double)times);
	free(body);
	return 0;
}
