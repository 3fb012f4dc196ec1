/*
 * The webhook's decision alone, in process: review_answer over one
 * AdmissionReview, many times, without TLS, HTTP or the loop. Prints the
 * mean microseconds a review; bench/webhook.sh shows it beside the
 * server's figures.
 *
 *	bench/review-bench REVIEW.json [TIMES]   (default 2000)
 */
#include "config.h"

#include "review.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	static char body[4 << 20];
	struct inject_options o = {.image = "registry.example.com/rearguard:bench"};
	struct timespec t0, t1;
	long times = argc > 2 ? strtol(argv[2], NULL, 10) : 2000, i;
	size_t len;
	FILE *f;

	if (argc < 2 || times < 1 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: review-bench REVIEW.json [TIMES]\n");
		return 2;
	}
	len = fread(body, 1, sizeof(body), f);
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < times; i++) {
		struct review_answer a;
		int status = review_answer(body, len, &o, &a);

		if (status != 200 || a.outcome != REVIEW_PATCHED) {
			fprintf(stderr, "review-bench: the review was answered %d (%s), not patched\n", status,
				review_outcome_word(a.outcome));
			return 1;
		}
		review_answer_free(&a);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.1f\n", ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3 / (double)times);
	return 0;
}
