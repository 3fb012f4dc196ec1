/*
 * JSON (RFC 8259) read into the tree ydoc_parse makes of it, without
 * libyaml: the webhook reads every review this way. libyaml reads a
 * superset of JSON one character at a time through a token queue, which
 * costs most of a review's time; the grammar of JSON needs none of it.
 *
 * The nodes are those ydoc_parse gives for the same bytes: mappings and
 * sequences in flow style, strings double-quoted with their escapes
 * decoded (\u as UTF-8, a pair of surrogates as one character, a lone one
 * as U+FFFD), numbers and literals plain, each with its line, column and
 * bytes, each collection with its items as read. What is not JSON is an
 * error that says where: a raw control character in a string, a trailing
 * comma, a leading zero, a second value. Duplicate keys are kept, as
 * ydoc_parse keeps them.
 */
#include "config.h"

#include "yamldoc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct reader {
	struct ystream *s;
	const char *p;
	size_t len, at;
	size_t line, line_start; /* the current line (1-based) and where it starts */
	size_t col_at, col;	 /* characters (not bytes, as libyaml counts) of the line before col_at */
	struct ybuf text;	 /* a string's value, decoded */
	char *err;
	size_t errlen;
	/* ydoc_parse_json_items: each item of the root's "items", in a stream of its own */
	int (*item)(void *data, struct ystream *is, struct ynode *n);
	void *item_data;
};

static int fail(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "%zu:%zu: %s", r->line, r->at - r->line_start + 1, what);
	return -EINVAL;
}

static void skip_ws(struct reader *r)
{
	for (; r->at < r->len; r->at++) {
		char c = r->p[r->at];

		if (c == '\n') {
			r->line++;
			r->line_start = r->col_at = r->at + 1;
			r->col = 0;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			break;
		}
	}
}

/* A node starting here: its place noted, its column in characters. */
static void place(struct reader *r, struct ynode *n)
{
	for (; r->col_at < r->at; r->col_at++)
		r->col += ((unsigned char)r->p[r->col_at] & 0xc0) != 0x80;
	n->line = r->line;
	n->column = r->col + 1;
	n->start = r->at;
}

static int hex4(const char *p, unsigned *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
						    : 16u;

		if (d == 16)
			return -1;
		*v = *v << 4 | d;
	}
	return 0;
}

static int put_utf8(struct ybuf *b, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return ybuf_add(b, u, n);
}

/* One escape after its backslash (r->at on the letter), decoded into r->text. */
static int escape(struct reader *r)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = r->at < r->len ? strchr(from, r->p[r->at]) : NULL;
	unsigned cp, lo;

	if (e && *e) {
		r->at++;
		return ybuf_add(&r->text, to + (e - from), 1);
	}
	if (r->at >= r->len || r->p[r->at] != 'u' || r->len - r->at < 5 || hex4(r->p + r->at + 1, &cp) < 0)
		return fail(r, "a bad escape in a string");
	r->at += 5;
	if (cp >= 0xd800 && cp < 0xdc00 && r->len - r->at >= 6 && r->p[r->at] == '\\' && r->p[r->at + 1] == 'u' &&
	    hex4(r->p + r->at + 2, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000) {
		r->at += 6;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	} else if (cp >= 0xd800 && cp < 0xe000) {
		cp = 0xfffd; /* a lone surrogate, as Go's decoder reads it */
	}
	return put_utf8(&r->text, cp);
}

/* A string from its opening quote: its value in a scalar (or a key). */
static int string(struct reader *r, struct ynode **out)
{
	struct ynode *n = ydoc_scalar(r->s, "", YDOC_RAW);
	size_t run;
	int rc;

	if (!n)
		return -ENOMEM;
	place(r, n);
	r->text.len = 0;
	for (r->at++;;) {
		for (run = r->at; run < r->len && r->p[run] != '"' && r->p[run] != '\\' && (unsigned char)r->p[run] >= 0x20;
		     run++)
			;
		if (run > r->at && ybuf_add(&r->text, r->p + r->at, run - r->at) < 0)
			return -ENOMEM;
		r->at = run;
		if (r->at >= r->len)
			return fail(r, "a string that does not end");
		if (r->p[r->at] == '"')
			break;
		if (r->p[r->at] != '\\')
			return fail(r, "a control character in a string (it must be escaped)");
		r->at++;
		rc = escape(r);
		if (rc < 0)
			return rc;
	}
	r->at++;
	n->value = ydoc_strndup(r->s, r->text.p ? r->text.p : "", r->text.len);
	if (!n->value)
		return -ENOMEM;
	n->len = r->text.len;
	n->style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	n->plain_implicit = false;
	n->src = n->start;
	n->src_end = n->end = r->at;
	*out = n;
	return 0;
}

static size_t digits(const struct reader *r, size_t i)
{
	while (i < r->len && r->p[i] >= '0' && r->p[i] <= '9')
		i++;
	return i;
}

/* A number or true, false, null: a plain scalar of its bytes. */
static int literal(struct reader *r, struct ynode **out)
{
	size_t i = r->at, d;
	struct ynode *n;

	if (r->len - i >= 4 && (memcmp(r->p + i, "true", 4) == 0 || memcmp(r->p + i, "null", 4) == 0)) {
		i += 4;
	} else if (r->len - i >= 5 && memcmp(r->p + i, "false", 5) == 0) {
		i += 5;
	} else {
		if (i < r->len && r->p[i] == '-')
			i++;
		if (i < r->len && r->p[i] == '0')
			d = i + 1;
		else if (i < r->len && r->p[i] >= '1' && r->p[i] <= '9')
			d = digits(r, i);
		else
			return fail(r, "not a JSON value");
		i = d;
		if (i < r->len && r->p[i] == '.') {
			d = digits(r, i + 1);
			if (d == i + 1)
				return fail(r, "a number without digits after its point");
			i = d;
		}
		if (i < r->len && (r->p[i] == 'e' || r->p[i] == 'E')) {
			i++;
			if (i < r->len && (r->p[i] == '+' || r->p[i] == '-'))
				i++;
			d = digits(r, i);
			if (d == i)
				return fail(r, "a number without digits in its exponent");
			i = d;
		}
	}
	if (i < r->len && ((r->p[i] >= '0' && r->p[i] <= '9') || (r->p[i] >= 'a' && r->p[i] <= 'z')))
		return fail(r, "not a JSON value");
	n = ydoc_scalar(r->s, "", YDOC_RAW);
	if (!n)
		return -ENOMEM;
	place(r, n);
	n->value = ydoc_strndup(r->s, r->p + r->at, i - r->at);
	if (!n->value)
		return -ENOMEM;
	n->len = i - r->at;
	n->style = YAML_PLAIN_SCALAR_STYLE;
	n->quoted_implicit = false;
	r->at = i;
	n->src = n->start;
	n->src_end = n->end = i;
	*out = n;
	return 0;
}

static int value(struct reader *r, struct ynode **out, int depth);

/*
 * The root's "items", for ydoc_parse_json_items: each item read into a
 * stream of its own, handed over and freed; the list in r->s stays empty.
 */
static int items_apart(struct reader *r, struct ynode **out, int depth)
{
	struct ystream *keep = r->s, one;
	struct ynode *n = ydoc_new_seq(keep, true), *item;
	int rc;

	if (!n)
		return -ENOMEM;
	place(r, n);
	r->at++;
	skip_ws(r);
	if (r->at < r->len && r->p[r->at] == ']') {
		r->at++;
	} else {
		for (;;) {
			memset(&one, 0, sizeof(one));
			one.input = keep->input;
			one.len = keep->len;
			r->s = &one;
			rc = value(r, &item, depth + 1);
			r->s = keep;
			if (rc == 0)
				rc = r->item(r->item_data, &one, item);
			ydoc_free(&one);
			if (rc < 0)
				return rc;
			skip_ws(r);
			if (r->at < r->len && r->p[r->at] == ',') {
				r->at++;
				skip_ws(r);
				continue;
			}
			if (r->at < r->len && r->p[r->at] == ']') {
				r->at++;
				break;
			}
			return fail(r, "a ',' or ']' after an item");
		}
	}
	n->end = r->at;
	*out = n;
	return ydoc_keep_items(keep, n) < 0 ? -ENOMEM : 0;
}

/* An object or an array from its opening bracket. */
static int collection(struct reader *r, struct ynode **out, int depth)
{
	bool map = r->p[r->at] == '{';
	char close = map ? '}' : ']';
	struct ynode *n = map ? ydoc_new_map(r->s, true) : ydoc_new_seq(r->s, true), *item;
	int rc;

	if (!n)
		return -ENOMEM;
	if (depth >= YDOC_MAX_DEPTH)
		return fail(r, "nested deeper than 200 levels");
	place(r, n);
	r->at++;
	skip_ws(r);
	if (r->at < r->len && r->p[r->at] == close) {
		r->at++;
	} else {
		for (;;) {
			if (map) {
				if (r->at >= r->len || r->p[r->at] != '"')
					return fail(r, "a member's key must be a string");
				rc = string(r, &item);
				if (rc == 0)
					rc = ydoc_append(r->s, n, item);
				if (rc < 0)
					return rc;
				skip_ws(r);
				if (r->at >= r->len || r->p[r->at] != ':')
					return fail(r, "a ':' after a member's key");
				r->at++;
				skip_ws(r);
			}
			if (map && r->item && depth == 0 && strcmp(item->value, "items") == 0 && r->at < r->len &&
			    r->p[r->at] == '[')
				rc = items_apart(r, &item, depth + 1);
			else
				rc = value(r, &item, depth + 1);
			if (rc == 0)
				rc = ydoc_append(r->s, n, item);
			if (rc < 0)
				return rc;
			skip_ws(r);
			if (r->at < r->len && r->p[r->at] == ',') {
				r->at++;
				skip_ws(r);
				continue;
			}
			if (r->at < r->len && r->p[r->at] == close) {
				r->at++;
				break;
			}
			return fail(r, map ? "a ',' or '}' after a member" : "a ',' or ']' after an item");
		}
	}
	n->end = r->at;
	if (ydoc_keep_items(r->s, n) < 0)
		return -ENOMEM;
	*out = n;
	return 0;
}

static int value(struct reader *r, struct ynode **out, int depth)
{
	if (r->at >= r->len)
		return fail(r, "a value is missing");
	if (r->p[r->at] == '{' || r->p[r->at] == '[')
		return collection(r, out, depth);
	if (r->p[r->at] == '"')
		return string(r, out);
	return literal(r, out);
}

static int parse(struct reader *r0, const char *input, size_t len, struct ystream *s, char *err, size_t errlen);

int ydoc_parse_json(const char *input, size_t len, struct ystream *s, char *err, size_t errlen)
{
	struct reader r = {.item = NULL};

	return parse(&r, input, len, s, err, errlen);
}

int ydoc_parse_json_items(const char *input, size_t len, struct ystream *s,
			  int (*item)(void *data, struct ystream *is, struct ynode *n), void *data, char *err,
			  size_t errlen)
{
	struct reader r = {.item = item, .item_data = data};

	return parse(&r, input, len, s, err, errlen);
}

static int parse(struct reader *r0, const char *input, size_t len, struct ystream *s, char *err, size_t errlen)
{
	struct reader r = {.s = s, .p = input, .len = len, .line = 1, .err = err, .errlen = errlen,
			   .item = r0->item, .item_data = r0->item_data};
	struct ynode *root = NULL;
	struct ydoc *d;
	int rc;

	memset(s, 0, sizeof(*s));
	s->input = input;
	s->len = len;
	if (len > YDOC_MAX_INPUT) {
		snprintf(err, errlen, "1:1: input larger than %zu MiB", YDOC_MAX_INPUT >> 20);
		return -EINVAL;
	}
	skip_ws(&r);
	rc = value(&r, &root, 0);
	if (rc == 0) {
		skip_ws(&r);
		if (r.at < len)
			rc = fail(&r, "more after the value");
	}
	if (rc == 0 && !(s->docs = calloc(1, sizeof(*s->docs))))
		rc = -ENOMEM;
	ybuf_free(&r.text);
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		ydoc_free(s);
		return rc;
	}
	d = s->docs;
	s->ndocs = 1;
	s->tail = len;
	d->root = root;
	d->end = len;
	d->body = root->start;
	d->body_end = root->end;
	d->json = root->kind != YNODE_SCALAR;
	d->crlf = memmem(input, len, "\r\n", 2) != NULL;
	return 0;
}
