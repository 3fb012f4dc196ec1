/*
 * review [--image IMAGE] [--services] FILE: the webhook's answer to the
 * AdmissionReview in FILE, as review_answer gives it (no server, no TLS),
 * on standard output; its status on standard error. --services answers it
 * as the path /mutate/services does (a namespace labelled
 * rearguard.io/inject=services). For the tests of the golden pods
 * (tests/review/pods.sh), which judge the answer by the verdicts.
 */
#include "config.h"

#include "inject.h"
#include "review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct inject_options o = {.image = NULL};
	struct review_answer a;
	char *body = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int i = 1, status;

	if (argc > 2 && strcmp(argv[1], "--image") == 0) {
		o.image = argv[2];
		i = 3;
	}
	if (i < argc && strcmp(argv[i], "--services") == 0) {
		o.services = true;
		i++;
	}
	if (i + 1 != argc) {
		fprintf(stderr, "usage: review [--image IMAGE] [--services] FILE\n");
		return 2;
	}
	f = fopen(argv[i], "rb");
	if (!f) {
		perror(argv[i]);
		return 2;
	}
	do {
		if (len + 65536 > cap) {
			char *grown = realloc(body, cap = len + 65536);

			if (!grown)
				return 1;
			body = grown;
		}
		n = fread(body + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	status = review_answer(body ? body : "", len, &o, &a);
	free(body);
	if (status < 0) {
		fprintf(stderr, "review: %s\n", strerror(-status));
		return 1;
	}
	fwrite(a.body, 1, a.len, stdout);
	fprintf(stderr, "status %d outcome %s\n", status, review_outcome_word(a.outcome));
	review_answer_free(&a);
	return 0;
}
