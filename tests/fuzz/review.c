/*
 * rearguard webhook reads whatever a client sends to /mutate. Whatever the
 * bytes, review_answer gives 400 with one line, or 200 with an answer that
 * is JSON and allows. Its patch applies to the request's object as sent
 * (by the tests' own applier), the patched object is JSON that parses, and
 * a review of the patched object gives no patch (the reinvocation finds
 * nothing new).
 *
 * The first byte of the input picks the options (--mesh, --gate, the
 * image) and the mode. Its top four bits 0001 (one byte in sixteen: a big
 * review costs the time of a thousand small ones), the body is a review
 * of the API server's largest size, which libFuzzer's inputs never reach;
 * otherwise the rest of the input is the request body. For a big one the
 * next byte picks a shape of tests/helpers/bigreview.h (a list or a map
 * of as many items as fit, or of the budget's worth of values, padded),
 * the next two its size (up to 3 MiB), and the rest of the input fills
 * the padding (as printable characters): the budget of values, the lists
 * at their largest, and the patch of a pod of that size go through the
 * same properties.
 */
#include "config.h"

#include "fuzz.h"
#include "review.h"

#include "../helpers/bigreview.h"
#include "../helpers/jsonpatch.h"

#include <errno.h>

static const char *const meshes[] = {NULL, "istio", "linkerd", NULL};

/* A review of the pod, as the API server would send it when reinvoking. */
static char *again_body(const char *pod)
{
	static const char head[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
				   "{\"uid\":\"again\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
				   "\"operation\":\"CREATE\",\"object\":";
	size_t n = sizeof(head) + strlen(pod) + 3;
	char *b = malloc(n);

	FUZZ_CHECK(b);
	snprintf(b, n, "%s%s}}", head, pod);
	return b;
}

static void reviewed_again(const char *pod, const struct inject_options *o)
{
	struct review_answer a;
	char *body = again_body(pod);
	struct tree t;
	int status = review_answer(body, strlen(body), o, &a);

	FUZZ_CHECK(status == 200 || status == -ENOMEM);
	if (status == 200) {
		FUZZ_CHECK(parse(a.body, a.len, &t));
		FUZZ_CHECK(!ydoc_path(t.root, "response.patch"));
		ydoc_free(&t.s);
	}
	review_answer_free(&a);
	free(body);
}

/* The big mode's body: a review made from the input, in a block of exactly its size; its length in *n. */
static char *big_body(struct fuzz_in *in, size_t *n)
{
	size_t nshapes = 0, len = 0, bytes;
	const char *shape;
	char *made, *text;

	while (big_shapes[nshapes])
		nshapes++;
	shape = big_shapes[fuzz_byte(in) % nshapes];
	bytes = 1024 + ((size_t)fuzz_byte(in) << 8 | fuzz_byte(in)) * 48; /* 1 KiB to 3 MiB */
	made = big_review_filled(shape, bytes, in->p, in->n, &len);
	FUZZ_CHECK(made);
	text = fuzz_copy(made, len);
	free(made);
	*n = len;
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t how = fuzz_byte(&in);
	struct inject_options o = {
	    .image = how & 8 ? "registry.example.com/rearguard:fuzz" : NULL,
	    .mesh = meshes[how & 3],
	    .gate = how & 4,
	};
	size_t n = in.n, len;
	char *text = (how & 0xf0) == 0x10 ? big_body(&in, &n) : fuzz_copy(in.p, in.n), *patch, *pod;
	struct review_answer a;
	struct tree answer, req, pt;
	const char *b64;
	int status = review_answer(text, n, &o, &a);

	FUZZ_CHECK(status == 200 || status == 400 || status == -ENOMEM);
	if (status == 400) {
		FUZZ_CHECK(a.outcome == REVIEW_INVALID);
		FUZZ_CHECK(a.len > 0 && a.body[a.len - 1] == '\n' && !memchr(a.body, '\n', a.len - 1));
	}
	if (status == 200) {
		FUZZ_CHECK(parse(a.body, a.len, &answer));
		FUZZ_CHECK(ydoc_str(ydoc_path(answer.root, "response.allowed")) && strcmp(ydoc_str(ydoc_path(answer.root, "response.allowed")), "true") == 0);
		b64 = ydoc_str(ydoc_path(answer.root, "response.patch"));
		FUZZ_CHECK(!b64 == (a.outcome != REVIEW_PATCHED));
		if (b64) {
			patch = unbase64(b64, &len);
			FUZZ_CHECK(patch);
			FUZZ_CHECK(parse(text, n, &req));
			req.root = ydoc_path(req.root, "request.object");
			FUZZ_CHECK(req.root);
			FUZZ_CHECK(apply(&req, patch, len, &pt));
			pod = NULL;
			{
				struct ybuf b = {0};

				FUZZ_CHECK(ydoc_json(&req.s, req.root, &b) == 0);
				pod = b.p;
			}
			reviewed_again(pod, &o);
			free(pod);
			ydoc_free(&pt.s);
			ydoc_free(&req.s);
			free(patch);
		}
		ydoc_free(&answer.s);
	}
	review_answer_free(&a);
	free(text);
	return 0;
}
