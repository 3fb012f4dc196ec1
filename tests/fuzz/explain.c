/*
 * rearguard explain reads whatever a user pipes to it: kubectl's JSON or
 * YAML, a dump cut short, another tool's output. Whatever the bytes,
 * explain_buffer judges them (0) or says why not in one line that begins
 * with its place, LINE:COL (-EINVAL), and judges nothing then; once
 * finished, the report's text and its JSON are written, and the JSON reads
 * back as JSON with one item a verdict, every verdict one of five words.
 *
 * The first byte of the input picks the options (--all, --audit, --mesh);
 * the rest is the input.
 */
#include "config.h"

#include "explain.h"
#include "fuzz.h"
#include "json.h"
#include "yamldoc.h"

#include <errno.h>

static const char *const meshes[] = {NULL, "istio", "linkerd", NULL};

/* Whether err is "LINE:COL: message" on one line. */
static int placed(const char *err)
{
	unsigned long line, col;
	int n = 0;

	return sscanf(err, "%lu:%lu: %n", &line, &col, &n) == 2 && n > 0 && line > 0 && !strchr(err, '\n');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t how = fuzz_byte(&in);
	struct explain_options o = {.all = how & 4, .audit = how & 8, .now_us = 1796000000000000LL};
	struct explain_report r;
	char *text = malloc(in.n ? in.n : 1), err[512] = "";
	struct ybuf out = {0};
	struct ystream s;
	struct jbuf j;
	size_t i;
	int rc;

	FUZZ_CHECK(text);
	memcpy(text, in.p, in.n);
	o.inject.mesh = meshes[how & 3];
	explain_report_init(&r, &o);
	rc = explain_buffer(&r, text, in.n, err, sizeof(err));
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc == -EINVAL)
		FUZZ_CHECK(placed(err) && r.n == 0);
	if (rc == 0 && explain_finish(&r) == 0) {
		FUZZ_CHECK(explain_text(&r, &out) == 0 && out.len > 0);
		jbuf_init(&j);
		explain_json(&r, &j);
		if (!j.failed) {
			FUZZ_CHECK(ydoc_parse_json(j.buf, j.len, &s, err, sizeof(err)) == 0);
			ydoc_free(&s);
		}
		jbuf_free(&j);
		for (i = 0; i < r.n; i++) {
			FUZZ_CHECK(r.items[i].verdict < EXPLAIN_VERDICTS && r.items[i].reason < EXPLAIN_REASONS);
			FUZZ_CHECK(explain_status(&r) == 1 || r.items[i].verdict == EXPLAIN_FINE);
		}
	}
	ybuf_free(&out);
	explain_report_free(&r);
	free(text);
	return 0;
}
