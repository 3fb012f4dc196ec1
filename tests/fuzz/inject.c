/*
 * rearguard inject reads whatever YAML a user, kustomize or kpt pipes into
 * it. Whatever the bytes, inject_buffer gives either the whole output or
 * one line of error that starts with where the problem is, never a crash
 * or a partial result. Its output is YAML that libyaml reads back, and a
 * second run over it changes nothing (the documents it added rearguard to
 * already have it; the others are copied byte for byte).
 *
 * The first byte of the input picks the options: --mesh, --gate and the
 * image; the rest is the YAML.
 */
#include "config.h"

#include "fuzz.h"
#include "inject.h"

#include <ctype.h>
#include <errno.h>
#include <yaml.h>

static const char *const meshes[] = {NULL, "istio", "linkerd", NULL};
static const size_t errlens[] = {2, 17, 128, 512};

/* Whether libyaml reads all of text, every document, without an error. */
static int yaml_reads(const char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_event_t event;
	int ok = 1, end = 0;

	FUZZ_CHECK(yaml_parser_initialize(&parser));
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (ok && !end) {
		if (!yaml_parser_parse(&parser, &event)) {
			ok = 0;
			break;
		}
		end = event.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&event);
	}
	yaml_parser_delete(&parser);
	return ok;
}

static void notes(const void *data, bool warning, const char *line)
{
	(void)data;
	(void)warning;
	FUZZ_CHECK(line && !strchr(line, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t how = fuzz_byte(&in);
	struct inject_options o = {
		.image = how & 8 ? "registry.example.com/rearguard:fuzz" : NULL,
		.mesh = meshes[how & 3],
		.gate = how & 4,
		.note = notes,
	};
	size_t errlen = errlens[(how >> 4) & 3], outlen = 0, outlen2 = 0;
	char *text = fuzz_copy(in.p, in.n), *err = fuzz_buf(errlen), *out = NULL, *out2 = NULL;
	int rc;

	o.image_from = o.image ? INJECT_FLAG : INJECT_DEFAULT;
	o.mesh_from = o.mesh ? INJECT_FLAG : INJECT_DEFAULT;
	o.gate_from = o.gate ? INJECT_FLAG : INJECT_DEFAULT;
	rc = inject_buffer(text, in.n, &o, &out, &outlen, err, errlen);
	FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc == -EINVAL) {
		/* One line, NUL-terminated within the buffer, that begins with a line number. */
		FUZZ_CHECK(memchr(err, '\0', errlen));
		FUZZ_CHECK(!strchr(err, '\n'));
		FUZZ_CHECK(errlen < 3 || isdigit((unsigned char)err[0]));
	}
	if (rc == 0) {
		FUZZ_CHECK(out || outlen == 0);
		/* The input was YAML: so is the output. */
		FUZZ_CHECK(yaml_reads(out, outlen));
		rc = inject_buffer(out, outlen, &o, &out2, &outlen2, err, errlen);
		FUZZ_CHECK(rc == 0);
		FUZZ_CHECK(outlen2 == outlen && (outlen == 0 || memcmp(out2, out, outlen) == 0));
	}
	free(out2);
	free(out);
	free(err);
	free(text);
	return 0;
}
