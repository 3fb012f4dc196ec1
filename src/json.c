#include "config.h"

#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jbuf_init(struct jbuf *j)
{
	memset(j, 0, sizeof(*j));
}

void jbuf_init_fixed(struct jbuf *j, char *buf, size_t cap)
{
	memset(j, 0, sizeof(*j));
	j->buf = buf;
	j->cap = cap;
	j->fixed = true;
	buf[0] = '\0';
}

void jbuf_free(struct jbuf *j)
{
	if (!j->fixed)
		free(j->buf);
	memset(j, 0, sizeof(*j));
}

static bool reserve(struct jbuf *j, size_t more)
{
	size_t need, cap;
	char *p;

	if (j->failed)
		return false;
	need = j->len + more + 1;
	if (need <= j->cap)
		return true;
	if (j->fixed) {
		j->failed = true;
		return false;
	}
	cap = j->cap ? j->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(j->buf, cap);
	if (!p) {
		j->failed = true;
		return false;
	}
	j->buf = p;
	j->cap = cap;
	return true;
}

void jbuf_append(struct jbuf *j, const char *s, size_t n)
{
	if (!reserve(j, n)) {
		/* A fixed buffer keeps what fits, so a long log line is cut, not lost. */
		if (j->fixed && j->cap > j->len + 1) {
			size_t room = j->cap - j->len - 1;

			memcpy(j->buf + j->len, s, room);
			j->len += room;
			j->buf[j->len] = '\0';
		}
		return;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

static void comma(struct jbuf *j)
{
	if (j->pending_key) {
		j->pending_key = false;
		return;
	}
	if (j->len > 0 && j->buf[j->len - 1] != '{' && j->buf[j->len - 1] != '[')
		jbuf_append(j, ",", 1);
}

void jbuf_begin(struct jbuf *j, char open)
{
	comma(j);
	jbuf_append(j, &open, 1);
}

void jbuf_end(struct jbuf *j, char close)
{
	jbuf_append(j, &close, 1);
}

/*
 * The length of the UTF-8 sequence at s (n bytes left), or 0 when it is not
 * one: RFC 3629's table of well-formed sequences, which leaves out overlong
 * forms, surrogates and code points past U+10FFFF.
 */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void jbuf_escaped(struct jbuf *j, const char *s, size_t n)
{
	size_t i = 0, start = 0, seq;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		/* Names from /proc may hold any byte; JSON must be UTF-8, so others become U+FFFD. */
		if (c >= 0x80 && (seq = utf8_seq((const unsigned char *)s + i, n - i)) > 0) {
			i += seq;
			continue;
		}
		jbuf_append(j, s + start, i - start);
		switch (c) {
		case '"': jbuf_append(j, "\\\"", 2); break;
		case '\\': jbuf_append(j, "\\\\", 2); break;
		case '\n': jbuf_append(j, "\\n", 2); break;
		case '\t': jbuf_append(j, "\\t", 2); break;
		case '\r': jbuf_append(j, "\\r", 2); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04x", c >= 0x80 ? 0xfffd : c);
			jbuf_append(j, esc, 6);
		}
		start = ++i;
	}
	jbuf_append(j, s + start, n - start);
}

void jbuf_key(struct jbuf *j, const char *key)
{
	comma(j);
	jbuf_append(j, "\"", 1);
	jbuf_escaped(j, key, strlen(key));
	jbuf_append(j, "\":", 2);
	j->pending_key = true;
}

void jbuf_strn(struct jbuf *j, const char *s, size_t n)
{
	comma(j);
	jbuf_append(j, "\"", 1);
	jbuf_escaped(j, s, n);
	jbuf_append(j, "\"", 1);
}

void jbuf_str(struct jbuf *j, const char *s)
{
	if (!s) {
		jbuf_null(j);
		return;
	}
	jbuf_strn(j, s, strlen(s));
}

void jbuf_int(struct jbuf *j, long long v)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%lld", v);

	comma(j);
	jbuf_append(j, num, (size_t)n);
}

void jbuf_bool(struct jbuf *j, bool v)
{
	comma(j);
	jbuf_append(j, v ? "true" : "false", v ? 4 : 5);
}

void jbuf_null(struct jbuf *j)
{
	comma(j);
	jbuf_append(j, "null", 4);
}

void jbuf_duration(struct jbuf *j, int64_t us)
{
	char num[48];
	int n;

	if (us < 0) {
		jbuf_null(j);
		return;
	}
	n = snprintf(num, sizeof(num), "%" PRId64 ".%03d", us / 1000, (int)(us % 1000));
	comma(j);
	jbuf_append(j, num, (size_t)n);
}

void jbuf_raw_value(struct jbuf *j, const char *json)
{
	comma(j);
	jbuf_append(j, json, strlen(json));
}

void jbuf_raw_valuen(struct jbuf *j, const char *json, size_t n)
{
	comma(j);
	jbuf_append(j, json, n);
}

/* ---- reading back: a scanner that skips values -------------------------- */

static size_t skip_ws(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r'))
		i++;
	return i;
}

size_t json_skip_string(const char *s, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (s[i] == '\\') {
			i++;
			continue;
		}
		if (s[i] == '"')
			return i + 1;
		if ((unsigned char)s[i] < 0x20)
			return 0;
	}
	return 0;
}

/* The end of the value that starts at s[i], or 0 when it is not one. Nesting is bounded. */
static size_t skip_value(const char *s, size_t len, size_t i, unsigned depth)
{
	size_t start = i;

	if (i >= len || depth > 64)
		return 0;
	if (s[i] == '"')
		return json_skip_string(s, len, i);
	if (s[i] == '{' || s[i] == '[') {
		char close = s[i] == '{' ? '}' : ']';

		i = skip_ws(s, len, i + 1);
		if (i < len && s[i] == close)
			return i + 1;
		for (;;) {
			if (close == '}') {
				if (i >= len || s[i] != '"' || !(i = json_skip_string(s, len, i)))
					return 0;
				i = skip_ws(s, len, i);
				if (i >= len || s[i] != ':')
					return 0;
				i = skip_ws(s, len, i + 1);
			}
			if (!(i = skip_value(s, len, i, depth + 1)))
				return 0;
			i = skip_ws(s, len, i);
			if (i < len && s[i] == ',') {
				i = skip_ws(s, len, i + 1);
				continue;
			}
			return i < len && s[i] == close ? i + 1 : 0;
		}
	}
	/* A number or a literal: the characters they are made of. */
	while (i < len && strchr("0123456789+-.eEtruefalsn", s[i]) && s[i])
		i++;
	return i > start ? i : 0;
}

int json_member(const char *text, size_t len, const char *key, size_t *off, size_t *vlen)
{
	size_t klen = strlen(key), i = skip_ws(text, len, 0);

	if (i >= len || text[i] != '{')
		return -EINVAL;
	i = skip_ws(text, len, i + 1);
	if (i < len && text[i] == '}')
		return -ENOENT;
	for (;;) {
		size_t kstart = i, end;
		bool match;

		if (i >= len || text[i] != '"' || !(end = json_skip_string(text, len, i)))
			return -EINVAL;
		match = end - kstart == klen + 2 && memcmp(text + kstart + 1, key, klen) == 0;
		i = skip_ws(text, len, end);
		if (i >= len || text[i] != ':')
			return -EINVAL;
		i = skip_ws(text, len, i + 1);
		if (!(end = skip_value(text, len, i, 0)))
			return -EINVAL;
		if (match) {
			*off = i;
			*vlen = end - i;
			return 0;
		}
		i = skip_ws(text, len, end);
		if (i < len && text[i] == ',') {
			i = skip_ws(text, len, i + 1);
			continue;
		}
		return i < len && text[i] == '}' ? -ENOENT : -EINVAL;
	}
}
