/*
 * AdmissionReviews of a pod at the API server's largest request (3 MiB),
 * in the shapes that strain each part of the webhook: a list or a map of
 * as many small items as fit (past the review's budget of values, allowed
 * unchanged), or as many as the budget takes, each padded to fill the
 * size (read whole, decided and patched). Each pod is a Job's pod with
 * Istio's proxy, so that inject adds the agent when it reads it.
 *
 *	size_t len;
 *	char *body = big_review("annotations-long", 3 << 20, &len);   // NULL: no such shape
 *	...
 *	free(body);
 *
 * Shared by test-review-big (in process), tests/helpers/bigreview (for
 * the server's tests) and the review fuzz target (sizes from its input).
 */
#ifndef RG_BIGREVIEW_H
#define RG_BIGREVIEW_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values a "-long" shape has at most: under review.h's REVIEW_MAX_NODES (100000), the envelope included. */
#define BIG_NODES 98000

struct big_buf {
	char *p;
	size_t len, cap;
	bool failed;
	const unsigned char *fill; /* the padding's bytes, made printable (NULL: 'x's) */
	size_t nfill, at;
};

static inline void big_add(struct big_buf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void big_str(struct big_buf *b, const char *s)
{
	big_add(b, s, strlen(s));
}

/*
 * pad bytes of padding: 'x's, or the fill's bytes in turn, each made a
 * character a JSON string holds as it is (printable ASCII but " and \\).
 */
static inline void big_padding(struct big_buf *b, size_t pad)
{
	static const char xs[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	char chunk[64];
	size_t k, i;

	for (k = 0; k < pad; k += sizeof(chunk)) {
		size_t n = pad - k < sizeof(chunk) ? pad - k : sizeof(chunk);

		for (i = 0; b->fill && i < n; i++) {
			char c = (char)(0x20 + b->fill[b->at++ % b->nfill] % 0x5f);

			chunk[i] = c == '"' || c == '\\' ? '_' : c;
		}
		big_add(b, b->fill ? chunk : xs, n);
	}
}

/* One item of a shape, i-th, its padding pad bytes (pad 0: as small as it goes). */
static inline void big_item(struct big_buf *b, const char *shape, size_t i, size_t pad)
{
	char head[96];

	if (strncmp(shape, "args", 4) == 0)
		big_str(b, "\"");
	else if (strncmp(shape, "annotations", 11) == 0)
		snprintf(head, sizeof(head), "\"a%zu\":\"", i), big_str(b, head);
	else if (strncmp(shape, "env", 3) == 0 || strncmp(shape, "reinvoked", 9) == 0)
		snprintf(head, sizeof(head), "{\"name\":\"E%zu\",\"value\":\"", i), big_str(b, head);
	else if (strncmp(shape, "volumes", 7) == 0)
		snprintf(head, sizeof(head), "{\"name\":\"v%zu-", i), big_str(b, head);
	else if (strcmp(shape, "containers") == 0)
		snprintf(head, sizeof(head), "{\"name\":\"c%zu", i), big_str(b, head);
	else
		big_str(b, "0");
	big_padding(b, pad);
	if (strncmp(shape, "args", 4) == 0 || strncmp(shape, "annotations", 11) == 0)
		big_str(b, "\"");
	else if (strncmp(shape, "env", 3) == 0 || strncmp(shape, "reinvoked", 9) == 0)
		big_str(b, "\"}");
	else if (strncmp(shape, "volumes", 7) == 0)
		big_str(b, "\",\"emptyDir\":{}}");
	else if (strcmp(shape, "containers") == 0)
		big_str(b, "\",\"image\":\"busybox\"}");
}

/* The values an item of shape brings to the tree. */
static inline size_t big_item_nodes(const char *shape)
{
	if (strncmp(shape, "annotations", 11) == 0)
		return 2;
	if (strncmp(shape, "env", 3) == 0 || strncmp(shape, "reinvoked", 9) == 0 || strncmp(shape, "volumes", 7) == 0)
		return 5;
	if (strcmp(shape, "containers") == 0)
		return 5;
	return 1;
}

/* n items of shape, separated by commas, each padded by pad. */
static inline void big_items(struct big_buf *b, const char *shape, size_t n, size_t pad)
{
	size_t i;

	for (i = 0; i < n && !b->failed; i++) {
		if (i > 0)
			big_str(b, ",");
		big_item(b, shape, i, pad);
	}
}

/*
 * The shapes: NAME (past the budget: as many of the smallest items as fit)
 * or NAME-long (the budget's worth of items, padded to the size).
 * containers-long is 250 containers, each with its share of env; gated is
 * containers-long for --gate (the containers reordered: replaced whole);
 * reinvoked is a pod the webhook marked, its agent's env to the budget;
 * zeros a list of zeros in a field no one reads; string is one annotation
 * of the whole size.
 */
static const char *const big_shapes[] = {
	"args", "args-long", "annotations", "annotations-long", "env", "env-long", "volumes", "volumes-long",
	"containers", "containers-long", "zeros", "string", "reinvoked", "gated", NULL,
};

/* The items of a shape: the budget's (n > 0), padded, or as many of the smallest as keep the review within size. */
static inline void big_list(struct big_buf *b, const char *item, size_t n, size_t pad, size_t start, size_t size)
{
	size_t c;

	if (n > 0) {
		big_items(b, item, n, pad);
		return;
	}
	for (c = 0; b->len - start + 300 < size && !b->failed; c++) {
		if (c > 0)
			big_str(b, ",");
		big_item(b, item, c, 0);
	}
}

/* The padding that takes n items (times copies) of item to about size bytes. */
static inline size_t big_pad(const char *item, size_t n, size_t copies, size_t size)
{
	struct big_buf probe = { 0 };
	size_t pad = 0, fixed;

	big_items(&probe, item, n, 0);
	fixed = probe.len * copies + 1500 + 120 * copies;
	if (!probe.failed && size > fixed)
		pad = (size - fixed) / (n * copies);
	free(probe.p);
	return pad;
}

static inline void big_pod(struct big_buf *b, const char *shape, size_t size)
{
	static const char proxy[] =
		"{\"name\":\"istio-proxy\",\"image\":\"docker.io/istio/proxyv2:1.20.0\",\"args\":[\"proxy\",\"sidecar\"]}";
	bool many = !strstr(shape, "-long") && strcmp(shape, "reinvoked") != 0 && strcmp(shape, "gated") != 0;
	bool in_meta = strncmp(shape, "annotations", 11) == 0, in_spec = strncmp(shape, "volumes", 7) == 0 ||
								      strcmp(shape, "zeros") == 0;
	bool in_containers = strncmp(shape, "containers", 10) == 0 || strcmp(shape, "gated") == 0;
	const char *item = shape, *field = "args";
	size_t start = b->len, copies = 1, n = 0, pad = 0, c;
	char head[96];

	if (strncmp(shape, "env", 3) == 0 || strcmp(shape, "reinvoked") == 0) {
		field = "env";
	} else if (strncmp(shape, "volumes", 7) == 0) {
		field = "volumes";
	} else if (strcmp(shape, "zeros") == 0) {
		field = "x-zeros";
	} else if (in_containers && !many) {
		item = "env-long";
		field = "env";
		copies = 250;
	}
	if (!many) {
		n = (BIG_NODES - 200 - 8 * copies) / big_item_nodes(item) / copies;
		pad = big_pad(item, n, copies, size);
	}
	big_str(b, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"generateName\":\"big-\",\"namespace\":\"default\","
		   "\"labels\":{\"job-name\":\"big\"},\"annotations\":{");
	if (strcmp(shape, "reinvoked") == 0)
		big_str(b, "\"rearguard.io/injected\":\"0.5.0\"");
	if (strcmp(shape, "string") == 0) {
		big_str(b, "\"a\":\"");
		big_padding(b, size > 1200 ? size - 1200 : 0);
		big_str(b, "\"");
	}
	if (in_meta)
		big_list(b, item, n, pad, start, size);
	big_str(b, "}},\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[");
	if (strcmp(shape, "reinvoked") == 0) {
		big_str(b, "{\"name\":\"rearguard\",\"image\":\"ghcr.io/rearguard/rearguard:0.5.0\",\"env\":[");
		big_list(b, item, n, pad, start, size);
		big_str(b, "]},");
	}
	big_str(b, "{\"name\":\"app\",\"image\":\"busybox\"");
	if (!in_meta && !in_spec && !in_containers && strcmp(shape, "reinvoked") != 0 && strcmp(shape, "string") != 0) {
		snprintf(head, sizeof(head), ",\"%s\":[", field);
		big_str(b, head);
		big_list(b, item, n, pad, start, size);
		big_str(b, "]");
	}
	big_str(b, "},");
	big_str(b, proxy);
	for (c = 0; in_containers && !many && c < copies && !b->failed; c++) {
		snprintf(head, sizeof(head), ",{\"name\":\"c%zu\",\"image\":\"busybox\",\"env\":[", c);
		big_str(b, head);
		big_list(b, item, n, pad, start, size);
		big_str(b, "]}");
	}
	if (in_containers && many) {
		big_str(b, ",");
		big_list(b, item, 0, 0, start, size);
	}
	big_str(b, "]");
	if (in_spec) {
		snprintf(head, sizeof(head), ",\"%s\":[", field);
		big_str(b, head);
		big_list(b, item, n, pad, start, size);
		big_str(b, "]");
	}
	big_str(b, "}}");
}

/*
 * A review of shape, about size bytes (the envelope included), its padding
 * made of fill's nfill bytes in turn (fill NULL: 'x's); NULL for an
 * unknown shape or out of memory.
 */
static inline char *big_review_filled(const char *shape, size_t size, const unsigned char *fill, size_t nfill,
				      size_t *len)
{
	struct big_buf b = { .fill = nfill ? fill : NULL, .nfill = nfill };
	size_t i;

	for (i = 0; big_shapes[i] && strcmp(big_shapes[i], shape) != 0; i++)
		;
	if (!big_shapes[i])
		return NULL;
	big_str(&b, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"big-");
	big_str(&b, shape);
	big_str(&b, "\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
		    "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},\"namespace\":\"default\","
		    "\"operation\":\"CREATE\",\"object\":");
	big_pod(&b, shape, size > b.len + 64 ? size - b.len - 64 : 0);
	big_str(&b, "}}");
	if (b.failed) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

static inline char *big_review(const char *shape, size_t size, size_t *len)
{
	return big_review_filled(shape, size, NULL, 0, len);
}

#endif
