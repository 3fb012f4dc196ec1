/*
 * Sidecar specs come from the command line, REARGUARD_SIDECARS (a
 * ConfigMap), and the command lines of other containers' `rearguard run
 * --drain`. A spec parses into something usable (a compiled regex, URLs
 * that parse, a signal that stops a process) or into one line of error and
 * an empty spec. The stop description and the operator advice are built
 * from any parsed spec and any answer a proxy may give.
 */
#include "config.h"

#include "fuzz.h"
#include "parse.h"
#include "spec.h"
#include "url.h"

#include <errno.h>
#include <signal.h>

static const size_t errlens[] = {1, 2, 40, 256, 640};

static void check_url(const char *u)
{
	const char *why;
	struct url parsed;

	if (u)
		FUZZ_CHECK(url_parse(u, &parsed, &why) == 0);
}

static void check_parsed(const struct sidecar_spec *spec, const char *name, int result, const char *body,
			 size_t desclen)
{
	char *desc = fuzz_buf(desclen);
	const char *advice, *warning, *why;
	char full[SPEC_URL_MAX + 16];
	unsigned long size;
	size_t n = strnlen(spec->name, sizeof(spec->name));

	FUZZ_CHECK(n > 0 && n < sizeof(spec->name));
	FUZZ_CHECK(spec->match_compiled && spec->match_src);
	FUZZ_CHECK(parse_regex_check(spec->match_src, &size, &why) == 0 && size <= PARSE_REGEX_SIZE_MAX);
	check_url(spec->ready_url);
	check_url(spec->drain_url);
	check_url(spec->stop_url);
	FUZZ_CHECK(spec->drain_time_ms >= 0 && spec->drain_time_ms <= DURATION_MAX_MS);
	FUZZ_CHECK(spec->stop_signal >= 1 && spec->stop_signal <= 31);
	FUZZ_CHECK(spec->stop_signal != SIGSTOP && spec->stop_signal != SIGCONT);
	FUZZ_CHECK(strcmp(signal_name(spec->stop_signal), "?") != 0);
	if (spec->preset) {
		size_t i;
		int found = 0;

		for (i = 0; i < spec_npresets; i++)
			found |= spec->preset == spec_presets[i].name;
		FUZZ_CHECK(found);
	}

	(void)spec_matches(spec, name);

	spec_describe_stop(spec, full, sizeof(full));
	if (spec->stop_url)
		FUZZ_CHECK(strncmp(full, "POST ", 5) == 0 && strcmp(full + 5, spec->stop_url) == 0);
	else {
		/* signal:NAME for the main process, signal-all:NAME for each process */
		const char *kind = spec->signal_all ? "signal-all:" : "signal:";

		FUZZ_CHECK(strncmp(full, kind, strlen(kind)) == 0 &&
			   strcmp(full + strlen(kind), signal_name(spec->stop_signal)) == 0);
	}
	if (desclen > 0) {
		spec_describe_stop(spec, desc, desclen);
		FUZZ_CHECK(strnlen(desc, desclen) < desclen);
		FUZZ_CHECK(strncmp(desc, full, strlen(desc)) == 0);
	}
	free(desc);

	advice = spec_stop_advice(spec, result, body);
	FUZZ_CHECK(!advice || (*advice && !strchr(advice, '\n')));
	warning = spec_warning(spec);
	FUZZ_CHECK(!warning || (*warning && !strchr(warning, '\n')));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t pick = fuzz_byte(&in);
	size_t errlen = errlens[pick % 5], desclen = pick / 5 % 40;
	int result = (int)fuzz_u32(&in);
	char *text = fuzz_str(&in), *name = fuzz_str(&in), *body = fuzz_rest(&in);
	char *err = fuzz_buf(errlen);
	struct sidecar_spec spec;
	int rc;

	/* The answers a stop request gets: a status, or why none came. */
	if (pick & 0x80)
		result = (int)((unsigned)result % 600);
	else if (pick & 0x40)
		result = -(int)((unsigned)result % 140);
	memset(err, 0x5a, errlen);
	rc = spec_parse(text, &spec, err, errlen);
	if (rc < 0) {
		FUZZ_CHECK(rc == -EINVAL);
		/* Empty: nothing to free, nothing that would match. */
		FUZZ_CHECK(!spec.match_compiled && !spec.match_src && !spec.ready_url && !spec.drain_url);
		FUZZ_CHECK(!spec.stop_url && !spec.preset && !spec.name[0]);
		FUZZ_CHECK(strnlen(err, errlen) < errlen);
		FUZZ_CHECK(errlen == 1 || err[0] != '\0');
		/* One line, unless the spec itself had a newline in it. */
		FUZZ_CHECK(strchr(text, '\n') || !strchr(err, '\n'));
		spec_free(&spec);
	} else {
		FUZZ_CHECK(rc == 0);
		check_parsed(&spec, name, result, body, desclen);
		spec_free(&spec);
	}
	free(err);
	free(text);
	free(name);
	free(body);
	return 0;
}
