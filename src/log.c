#include "config.h"

#include "log.h"

#include "json.h"
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static enum log_level max_level = LOG_INFO;
static enum log_format format = LOG_TEXT;
static int out_fd = 2;
/* REARGUARD_LOG_MONO=1 (for benchmarks): each line also carries the monotonic clock in microseconds,
 * the clock every process on the machine shares, so events in several containers can be put in order. */
static bool with_mono;

static const char *const level_names[] = { "error", "warn", "info", "debug" };

/* Lines kept while the log is held; a line that does not fit is written at once. */
static char kept[65536];
static size_t nkept;
static bool held;

void log_flush(void)
{
	if (nkept)
		(void)write_all(out_fd, kept, nkept);
	nkept = 0;
}

void log_hold(void)
{
	held = true;
}

void log_release(void)
{
	held = false;
	log_flush();
}

/* One whole line: kept while held, else written at once. */
static void emit(const char *line, size_t len)
{
	if (held && nkept + len <= sizeof(kept)) {
		memcpy(kept + nkept, line, len);
		nkept += len;
		return;
	}
	log_flush();
	(void)write_all(out_fd, line, len);
}

void log_setup(enum log_level level, enum log_format fmt, int fd)
{
	const char *mono = getenv("REARGUARD_LOG_MONO");

	max_level = level;
	format = fmt;
	out_fd = fd;
	with_mono = mono && strcmp(mono, "1") == 0;
}

bool log_enabled(enum log_level level)
{
	return level <= max_level;
}

/* Text values are quoted only when they would otherwise be ambiguous. */
static void text_value(struct jbuf *j, const char *s)
{
	bool plain = *s != '\0';
	const char *p;

	for (p = s; *p && plain; p++)
		if (*p <= ' ' || *p == '"' || *p == '=' || *p == '\\')
			plain = false;
	if (plain) {
		jbuf_append(j, s, strlen(s));
		return;
	}
	jbuf_append(j, "\"", 1);
	jbuf_escaped(j, s, strlen(s));
	jbuf_append(j, "\"", 1);
}

static void text_field(struct jbuf *j, const struct log_field *f)
{
	char num[48];

	jbuf_append(j, " ", 1);
	jbuf_append(j, f->key, strlen(f->key));
	jbuf_append(j, "=", 1);
	switch (f->type) {
	case LOGF_STR:
		text_value(j, f->s);
		break;
	case LOGF_INT:
		snprintf(num, sizeof(num), "%lld", f->i);
		jbuf_append(j, num, strlen(num));
		break;
	case LOGF_MS:
		snprintf(num, sizeof(num), "%lld.%03lldms", f->i / 1000, f->i % 1000);
		jbuf_append(j, num, strlen(num));
		break;
	case LOGF_JSON:
		jbuf_append(j, f->s, strlen(f->s));
		break;
	}
}

static void json_field(struct jbuf *j, const struct log_field *f)
{
	jbuf_key(j, f->key);
	switch (f->type) {
	case LOGF_STR: jbuf_str(j, f->s); break;
	case LOGF_INT: jbuf_int(j, f->i); break;
	case LOGF_MS: jbuf_ms(j, f->i); break;
	case LOGF_JSON: jbuf_raw_value(j, f->s); break;
	}
}

void log_msg(enum log_level level, const struct log_field *fields, const char *fmt, ...)
{
	int saved_errno = errno;
	/* Static: one thread, and never called from a signal handler. */
	static char line[65536];
	char msg[2048], ts[UTC_MS_MAX];
	const struct log_field *f;
	struct jbuf j;
	va_list ap;

	if (level > max_level)
		return;
	struct log_field mono = LF_INT("mono_us", mono_us());

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	format_utc_ms(real_us(), ts);

	/* Leave room for the newline that ends every line, even a cut one. */
	jbuf_init_fixed(&j, line, sizeof(line) - 1);
	if (format == LOG_JSON) {
		jbuf_begin(&j, '{');
		jbuf_key(&j, "ts");
		jbuf_str(&j, ts);
		jbuf_key(&j, "level");
		jbuf_str(&j, level_names[level]);
		jbuf_key(&j, "msg");
		jbuf_str(&j, msg);
		for (f = fields; f && f->key; f++)
			if (f->type != LOGF_STR || f->s)
				json_field(&j, f);
		if (with_mono)
			json_field(&j, &mono);
		jbuf_end(&j, '}');
	} else {
		jbuf_append(&j, ts, strlen(ts));
		jbuf_append(&j, " ", 1);
		jbuf_append(&j, level_names[level], strlen(level_names[level]));
		/* Pad "info" and "warn" to the width of "error" and "debug". */
		jbuf_append(&j, "  ", strlen(level_names[level]) == 4 ? 2 : 1);
		jbuf_append(&j, msg, strlen(msg));
		for (f = fields; f && f->key; f++)
			if (f->type != LOGF_STR || f->s)
				text_field(&j, f);
		if (with_mono)
			text_field(&j, &mono);
	}
	line[j.len] = '\n';
	emit(line, j.len + 1);
	errno = saved_errno;
}
