/*
 * Writes an AdmissionReview of a shape tests/helpers/bigreview.h makes to
 * standard output, for the webhook's tests over the wire:
 *
 *	bigreview SHAPE [BYTES]     (BYTES: 3 MiB when not given)
 *	bigreview --list            the shapes, one a line
 */
#include "bigreview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t len, size = (size_t)3 << 20, i;
	char *body;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (i = 0; big_shapes[i]; i++)
			printf("%s\n", big_shapes[i]);
		return 0;
	}
	if (argc < 2 || argc > 3 || (argc == 3 && (size = strtoul(argv[2], NULL, 10)) == 0)) {
		fprintf(stderr, "usage: bigreview SHAPE [BYTES] | --list\n");
		return 2;
	}
	body = big_review(argv[1], size, &len);
	if (!body) {
		fprintf(stderr, "bigreview: no shape \"%s\" (bigreview --list)\n", argv[1]);
		return 2;
	}
	if (fwrite(body, 1, len, stdout) != len) {
		free(body);
		return 1;
	}
	free(body);
	return 0;
}
