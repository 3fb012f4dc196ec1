#include "config.h"

#include "spec.h"

#include "log.h"
#include "parse.h"
#include "presets.h"
#include "url.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const keys[] = { "name", "match", "ready", "drain", "drain-time", "stop", "container" };

static void fail(char *err, size_t errlen, const char *text, const char *fmt, ...) RG_PRINTF(4, 5);

static void fail(char *err, size_t errlen, const char *text, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "sidecar spec \"%s\": %s", text, what);
}

int regex_compile_whole(regex_t *re, const char *src, char *err, size_t errlen)
{
	size_t n = strlen(src);
	unsigned long size;
	const char *why;
	char *whole;
	int rc;

	/* Before regcomp, which would write out every repetition (a{999}{999} takes gigabytes). */
	if (parse_regex_check(src, &size, &why) < 0) {
		snprintf(err, errlen, "%s", why);
		return -EINVAL;
	}
	/* Check the regex alone first: wrapping it must not change what it means. */
	rc = regcomp(re, src, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, re, err, errlen);
		return -EINVAL;
	}
	regfree(re);
	whole = malloc(n + 5);
	if (!whole) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(whole, n + 5, "^(%s)$", src);
	rc = regcomp(re, whole, REG_EXTENDED | REG_NOSUB);
	free(whole);
	if (rc != 0) {
		regerror(rc, re, err, errlen);
		return -EINVAL;
	}
	return 0;
}

/* Whether s is word, a key without a value (native, handles-stop), up to the next comma. */
static bool bare_at(const char *s, const char *word)
{
	size_t n = strlen(word);

	return strncmp(s, word, n) == 0 && (s[n] == ',' || s[n] == '\0');
}

static bool native_at(const char *s)
{
	return bare_at(s, "native");
}

static bool handles_at(const char *s)
{
	return bare_at(s, "handles-stop");
}

/* Whether s starts like "word=" or is native: where a value ends and the next key begins. */
static bool key_like(const char *s)
{
	const char *p = s;

	if (native_at(s) || handles_at(s))
		return true;
	if (*p < 'a' || *p > 'z')
		return false;
	while ((*p >= 'a' && *p <= 'z') || *p == '-')
		p++;
	return *p == '=';
}

/* Length of the key at s when s starts with "KEY=" for a known key, else 0. */
static size_t key_at(const char *s)
{
	size_t i, n;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		n = strlen(keys[i]);
		if (strncmp(s, keys[i], n) == 0 && s[n] == '=')
			return n;
	}
	return 0;
}

bool spec_key_at(const char *s)
{
	return key_at(s) > 0 || native_at(s) || handles_at(s);
}

static int set_url(char **slot, struct url *parts, const char *key, const char *value, const char *text, char *err,
		   size_t errlen)
{
	const char *why;
	struct url u;

	if (url_parse(value, &u, &why) < 0) {
		if (strncasecmp(value, "https://", 8) == 0)
			fail(err, errlen, text, "%s: %s", key, why);
		else if (strncasecmp(value, "http://", 7) != 0)
			fail(err, errlen, text, "%s: \"%s\" is not an http:// URL", key, value);
		else
			fail(err, errlen, text, "%s: \"%s\": %s", key, value, why);
		return -EINVAL;
	}
	free(*slot);
	*slot = strdup(value);
	if (!*slot)
		return -ENOMEM;
	/* Again on the copy: the parts' path points into the string kept. */
	return url_parse(*slot, parts, &why);
}

/*
 * Whether a signal can end a process: by default, or by what the program
 * makes of it. Those whose default is to do nothing (CHLD, URG) or to
 * pause or resume the process (STOP, TSTP, TTIN, TTOU, CONT) cannot. WINCH
 * is ignored by default too, but Apache's httpd takes it for its graceful
 * stop, so it stays.
 */
static bool stops_a_process(int sig)
{
	return sig != SIGCHLD && sig != SIGURG && sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU &&
	       sig != SIGCONT;
}

static int apply(struct sidecar_spec *spec, const char *key, const char *value, const char *text, char *err,
		 size_t errlen)
{
	if (strcmp(key, "name") == 0) {
		if (*value == '\0' || strlen(value) >= SPEC_NAME_MAX) {
			fail(err, errlen, text, "name must be 1 to %d characters", SPEC_NAME_MAX - 1);
			return -EINVAL;
		}
		str_copy(spec->name, value, sizeof(spec->name));
		return 0;
	}
	if (strcmp(key, "container") == 0) {
		if (!spec_container_name(value)) {
			fail(err, errlen, text, "container: \"%s\" is no container name (a DNS label: a-z, 0-9 and -, "
			     "at most 63)", value);
			return -EINVAL;
		}
		str_copy(spec->container, value, sizeof(spec->container));
		return 0;
	}
	if (strcmp(key, "match") == 0) {
		free(spec->match_src);
		spec->match_src = strdup(value);
		return spec->match_src ? 0 : -ENOMEM;
	}
	if (strcmp(key, "ready") == 0)
		return set_url(&spec->ready_url, &spec->ready_at, key, value, text, err, errlen);
	if (strcmp(key, "drain") == 0)
		return set_url(&spec->drain_url, &spec->drain_at, key, value, text, err, errlen);
	if (strcmp(key, "drain-time") == 0) {
		if (parse_duration_ms(value, &spec->drain_time_ms) < 0) {
			fail(err, errlen, text, "drain-time: invalid duration \"%s\" (examples: 500ms, 5s, 1m)", value);
			return -EINVAL;
		}
		return 0;
	}
	/* stop: signal:NAME goes to the container's main process, signal-all:NAME to each of its processes. */
	if (strncmp(value, "signal:", 7) == 0 || strncmp(value, "signal-all:", 11) == 0) {
		const char *name = strchr(value, ':') + 1;

		if (parse_signal(name, &spec->stop_signal) < 0) {
			fail(err, errlen, text, "stop: unknown signal \"%s\" (examples: signal:TERM, signal:INT, signal:QUIT)",
			     name);
			return -EINVAL;
		}
		if (!stops_a_process(spec->stop_signal)) {
			fail(err, errlen, text,
			     "stop: SIG%s does not stop a process (it is ignored, or pauses or resumes it); "
			     "examples: signal:TERM, signal:INT, signal:QUIT",
			     signal_name(spec->stop_signal));
			return -EINVAL;
		}
		spec->signal_all = name - value == 11;
		free(spec->stop_url);
		spec->stop_url = NULL;
		return 0;
	}
	if (strncasecmp(value, "http", 4) != 0) {
		fail(err, errlen, text, "stop: \"%s\" is neither a URL nor signal:NAME (or signal-all:NAME)", value);
		return -EINVAL;
	}
	return set_url(&spec->stop_url, &spec->stop_at, key, value, text, err, errlen);
}

static int apply_preset(struct sidecar_spec *spec, const char *name, size_t n, const char *text, char *err,
			size_t errlen)
{
	const struct spec_preset *p = NULL;
	char list[256] = "";
	size_t i;

	for (i = 0; i < spec_npresets; i++) {
		if (strlen(spec_presets[i].name) == n && strncmp(spec_presets[i].name, name, n) == 0)
			p = &spec_presets[i];
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", spec_presets[i].name);
	}
	if (!p) {
		fail(err, errlen, text, "unknown preset \"%.*s\" (presets: %s; or give match=...)", (int)n, name, list);
		return -EINVAL;
	}
	spec->preset = p->name;
	spec->native = p->helper;
	str_copy(spec->name, p->name, sizeof(spec->name));
	spec->match_src = strdup(p->match);
	if (!spec->match_src)
		return -ENOMEM;
	if ((p->ready && set_url(&spec->ready_url, &spec->ready_at, "ready", p->ready, text, err, errlen) < 0) ||
	    (p->drain && set_url(&spec->drain_url, &spec->drain_at, "drain", p->drain, text, err, errlen) < 0))
		return -ENOMEM;
	/* The row's stop is a URL or signal:NAME, as a user would write it. */
	return apply(spec, "stop", p->stop, text, err, errlen) < 0 ? -ENOMEM : 0;
}

bool spec_container_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= SPEC_CONTAINER_MAX || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* Both parsers: compile says whether the match regex is compiled too. */
static int parse_spec(const char *text, struct sidecar_spec *spec, char *err, size_t errlen, bool compile)
{
	bool seen_native = false, seen_handles = false;
	unsigned seen = 0;
	const char *p = text;
	char rerr[256];
	int rc = 0;

	memset(spec, 0, sizeof(*spec));
	spec->stop_signal = SIGTERM;
	if (*text == '\0') {
		snprintf(err, errlen, "sidecar spec is empty (examples: istio; match=fluent-bit,stop=signal:TERM)");
		return -EINVAL;
	}
	if (!spec_key_at(p)) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (memchr(p, '=', n)) {
			fail(err, errlen, text, "unknown key \"%.*s\" (keys: name, container, match, ready, drain, drain-time, stop, native, handles-stop)",
			     (int)(strchr(p, '=') - p), p);
			rc = -EINVAL;
			goto out;
		}
		rc = apply_preset(spec, p, n, text, err, errlen);
		if (rc < 0)
			goto out;
		p += n;
		if (*p == ',')
			p++;
	}
	while (*p) {
		size_t klen = key_at(p), vlen, i;
		char key[16], *value;
		const char *v, *q;

		if (native_at(p)) {
			if (seen_native) {
				fail(err, errlen, text, "native given twice");
				rc = -EINVAL;
				goto out;
			}
			seen_native = true;
			spec->native = true;
			p += p[6] == ',' ? 7 : 6;
			continue;
		}
		if (handles_at(p)) {
			if (seen_handles) {
				fail(err, errlen, text, "handles-stop given twice");
				rc = -EINVAL;
				goto out;
			}
			seen_handles = true;
			spec->handles_stop = true;
			p += strlen("handles-stop") + (p[strlen("handles-stop")] == ',');
			continue;
		}
		if (!klen) {
			const char *eq = strchr(p, '=');

			if (eq && eq - p == 6 && strncmp(p, "native", 6) == 0) {
				fail(err, errlen, text, "native takes no value (write native, not native=...)");
				rc = -EINVAL;
				goto out;
			}
			if (eq && eq - p == 12 && strncmp(p, "handles-stop", 12) == 0) {
				fail(err, errlen, text, "handles-stop takes no value (write handles-stop, not handles-stop=...)");
				rc = -EINVAL;
				goto out;
			}

			fail(err, errlen, text, "unknown key \"%.*s\" (keys: name, container, match, ready, drain, drain-time, stop, native, handles-stop)",
			     eq ? (int)(eq - p) : (int)strlen(p), p);
			rc = -EINVAL;
			goto out;
		}
		memcpy(key, p, klen);
		key[klen] = '\0';
		v = p + klen + 1;
		/* The value runs to the next ",word=" (other commas are part of it: a{1,3}). */
		for (q = v; *q; q++)
			if (*q == ',' && key_like(q + 1))
				break;
		vlen = (size_t)(q - v);
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (strcmp(keys[i], key) == 0)
				break;
		if (seen & (1u << i)) {
			fail(err, errlen, text, "%s given twice", key);
			rc = -EINVAL;
			goto out;
		}
		seen |= 1u << i;
		if (vlen == 0 && strcmp(key, "ready") != 0 && strcmp(key, "drain") != 0) {
			fail(err, errlen, text, "%s needs a value", key);
			rc = -EINVAL;
			goto out;
		}
		value = strndup(v, vlen);
		if (!value) {
			rc = -ENOMEM;
			goto out;
		}
		if (vlen == 0) {
			/* "ready=" and "drain=" remove the preset's endpoint. */
			if (strcmp(key, "ready") == 0) {
				free(spec->ready_url);
				spec->ready_url = NULL;
			} else {
				free(spec->drain_url);
				spec->drain_url = NULL;
			}
		} else {
			rc = apply(spec, key, value, text, err, errlen);
		}
		free(value);
		if (rc < 0)
			goto out;
		p = *q ? q + 1 : q;
	}
	if (!spec->match_src) {
		fail(err, errlen, text, "match=REGEX is required without a preset");
		rc = -EINVAL;
		goto out;
	}
	if (compile && regex_compile_whole(&spec->match, spec->match_src, rerr, sizeof(rerr)) < 0) {
		fail(err, errlen, text, "match: invalid regex \"%s\": %s", spec->match_src, rerr);
		rc = -EINVAL;
		goto out;
	}
	spec->match_compiled = compile;
	if (spec->name[0] == '\0')
		str_copy(spec->name, spec->match_src, sizeof(spec->name));
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc < 0)
		spec_free(spec);
	return rc;
}

int spec_parse(const char *text, struct sidecar_spec *spec, char *err, size_t errlen)
{
	return parse_spec(text, spec, err, errlen, true);
}

int spec_read(const char *text, struct sidecar_spec *spec, char *err, size_t errlen)
{
	return parse_spec(text, spec, err, errlen, false);
}

void spec_free(struct sidecar_spec *spec)
{
	if (spec->match_compiled)
		regfree(&spec->match);
	free(spec->match_src);
	free(spec->ready_url);
	free(spec->drain_url);
	free(spec->stop_url);
	memset(spec, 0, sizeof(*spec));
}

bool spec_matches(const struct sidecar_spec *spec, const char *name)
{
	return spec->match_compiled && regexec(&spec->match, name, 0, NULL, 0) == 0;
}

void spec_describe_stop(const struct sidecar_spec *spec, char *out, size_t len)
{
	if (spec->stop_url)
		snprintf(out, len, "POST %s", spec->stop_url);
	else
		snprintf(out, len, "%s:%s", spec->signal_all ? "signal-all" : "signal", signal_name(spec->stop_signal));
}


/* Whether an advice entry of row p is for this answer to spec's stop request. */
static bool advice_fits(const struct spec_preset *p, const struct preset_advice *a, const struct sidecar_spec *spec,
			int result, const char *body)
{
	bool ours = spec->preset && strcmp(spec->preset, p->name) == 0;

	if (a->result == PRESET_ANY_4XX ? result < 400 || result >= 500 : result != a->result)
		return false;
	if (a->body)
		return body && strncmp(body, a->body, strlen(a->body)) == 0;
	if (a->port)
		return ours || (spec->stop_url && spec->stop_at.port == (unsigned)a->port);
	return ours;
}

const char *spec_stop_advice(const struct sidecar_spec *spec, int result, const char *body)
{
	size_t i, k;

	/* A body or a port tells the program by itself, whatever the spec was built from. */
	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];

		for (k = 0; k < ARRAY_SIZE(p->advice) && p->advice[k].text; k++)
			if (advice_fits(p, &p->advice[k], spec, result, body))
				return p->advice[k].text;
	}
	return NULL;
}

const char *spec_exit_fix(const struct sidecar_spec *spec)
{
	const struct spec_preset *p = spec->preset ? presets_find(spec->preset) : NULL;

	if (p && p->exit_fix)
		return p->exit_fix;
	if (spec->stop_url)
		return "a stop over HTTP ends a proxy with 0: a non-zero code means the stop request did not end it "
		       "and a signal did (see its requests and statuses in the summary)";
	return "stop it with the signal it takes for a graceful exit (nginx: stop=signal:QUIT; postgres: "
	       "stop=signal:INT), or run it under a wrapper that turns its exit on that signal into 0";
}

const char *spec_warning(const struct sidecar_spec *spec)
{
	size_t i;

	/* A stop URL some known program does not end on, given for a spec that matches that program. */
	for (i = 0; spec->stop_url && i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];
		const char *path = p->wrong_stop.path;

		if (p->wrong_stop.why && spec->stop_at.port == (unsigned)p->wrong_stop.port &&
		    strncmp(spec->stop_at.path, path, strlen(path)) == 0 && spec_matches(spec, p->forms[0].names[0]))
			return p->wrong_stop.why;
	}
	return NULL;
}
