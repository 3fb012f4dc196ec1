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
 *
 * The webhook holds a whole review's tree, so its memory is the number of
 * nodes: a collection's items are gathered on one stack for the whole
 * parse and given an array of their exact size when it ends (its items and
 * its items as read side by side), nodes and strings are packed in the
 * arena, and a parse may stop at a number of nodes (-E2BIG). A review too
 * large to hold whole can still be read for what it is: with a list of
 * dotted paths, only the members on them are made into nodes; the rest is
 * read, checked and let go.
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
	struct ybuf text;	 /* a string's value, decoded where it has escapes */
	const char *tp;		 /* the string just read: in the input, or in text */
	size_t tlen;
	struct ynode **stack;	 /* the items of the collections open, innermost last */
	size_t depth_items, stack_cap;
	size_t nodes, max_nodes;
	bool crlf; /* a CR LF was read (only whitespace may hold one) */
	const char *const *keep; /* NULL: every node; else only the paths named */
	char path[128];		 /* the path of the member being read, in keep mode */
	size_t path_len;
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
			r->crlf |= r->at > 0 && r->p[r->at - 1] == '\r';
			r->line++;
			r->line_start = r->col_at = r->at + 1;
			r->col = 0;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			break;
		}
	}
}

/*
 * The characters of p[from, to): the bytes that are not a UTF-8
 * sequence's continuation (10xxxxxx), as libyaml counts columns. Eight
 * bytes at a time where all are ASCII, which a review nearly always is.
 */
static size_t chars(const char *p, size_t from, size_t to)
{
	size_t n = 0, i = from;
	uint64_t w;

	while (i < to) {
		if (to - i >= 8) {
			memcpy(&w, p + i, 8);
			if (!(w & 0x8080808080808080ull)) {
				n += 8;
				i += 8;
				continue;
			}
		}
		n += ((unsigned char)p[i++] & 0xc0) != 0x80;
	}
	return n;
}

/* A node of kind that starts at byte at, counted against the budget: its place noted, its column in characters. */
static int new_node(struct reader *r, enum ynode_kind kind, size_t at, struct ynode **out)
{
	struct ynode *n;

	if (r->nodes == r->max_nodes) {
		snprintf(r->err, r->errlen, "%zu:%zu: more than %zu values", r->line, at - r->line_start + 1,
			 r->max_nodes);
		return -E2BIG;
	}
	n = ydoc_arena_alloc(r->s, sizeof(*n), sizeof(void *));
	if (!n)
		return -ENOMEM;
	r->nodes++;
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	/* col_at never passes a node's start: nodes are made in order, and no line break lies inside a string */
	if (r->col_at < at) {
		r->col += chars(r->p, r->col_at, at);
		r->col_at = at;
	}
	n->line = (uint32_t)r->line;
	n->column = (uint32_t)(r->col + 1);
	n->start = (uint32_t)at;
	*out = n;
	return 0;
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

/* The string just read (r->text), which started at byte at, as a node. */
static int text_node(struct reader *r, size_t at, struct ynode **out)
{
	struct ynode *n;
	int rc = new_node(r, YNODE_SCALAR, at, &n);

	if (rc < 0)
		return rc;
	n->value = ydoc_strndup(r->s, r->tp, r->tlen);
	if (!n->value)
		return -ENOMEM;
	n->len = (uint32_t)r->tlen;
	n->style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	n->quoted_implicit = true;
	n->end = (uint32_t)r->at;
	*out = n;
	return 0;
}

/*
 * A string from its opening quote, its value in r->tp and r->tlen: its
 * node when out is not NULL. One without escapes is its bytes in the
 * input; one with them is decoded into r->text.
 */
static int string(struct reader *r, struct ynode **out)
{
	size_t at = r->at, run;
	int rc;

	for (run = at + 1; run < r->len && r->p[run] != '"' && r->p[run] != '\\' && (unsigned char)r->p[run] >= 0x20;
	     run++)
		;
	if (run < r->len && r->p[run] == '"') {
		r->tp = r->p + at + 1;
		r->tlen = run - at - 1;
		r->at = run + 1;
		return out ? text_node(r, at, out) : 0;
	}
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
	r->tp = r->text.p ? r->text.p : "";
	r->tlen = r->text.len;
	return out ? text_node(r, at, out) : 0;
}

static size_t digits(const struct reader *r, size_t i)
{
	while (i < r->len && r->p[i] >= '0' && r->p[i] <= '9')
		i++;
	return i;
}

/* A number or true, false, null: a plain scalar of its bytes, when out is not NULL. */
static int literal(struct reader *r, struct ynode **out)
{
	size_t i = r->at, d;
	struct ynode *n;
	int rc;

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
	if (!out) {
		r->at = i;
		return 0;
	}
	if ((rc = new_node(r, YNODE_SCALAR, r->at, &n)) < 0)
		return rc;
	n->value = ydoc_strndup(r->s, r->p + r->at, i - r->at);
	if (!n->value)
		return -ENOMEM;
	n->len = (uint32_t)(i - r->at);
	n->style = YAML_PLAIN_SCALAR_STYLE;
	n->plain_implicit = true;
	r->at = i;
	n->end = (uint32_t)i;
	*out = n;
	return 0;
}

/* An item of the collection being read, on the stack until it ends. */
static int push(struct reader *r, struct ynode *item)
{
	if (r->depth_items == r->stack_cap) {
		size_t cap = r->stack_cap ? r->stack_cap * 2 : 256;
		struct ynode **grown = realloc(r->stack, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		r->stack = grown;
		r->stack_cap = cap;
	}
	r->stack[r->depth_items++] = item;
	return 0;
}

/* The items pushed since mark, as the collection's items and its items as read, in one array of their size. */
static int settle(struct reader *r, struct ynode *n, size_t mark)
{
	size_t count = r->depth_items - mark;
	struct ynode **items;

	r->depth_items = mark;
	if (count == 0)
		return 0;
	items = ydoc_arena_alloc(r->s, 2 * count * sizeof(*items), sizeof(void *));
	if (!items)
		return -ENOMEM;
	memcpy(items, r->stack + mark, count * sizeof(*items));
	memcpy(items + count, items, count * sizeof(*items));
	n->items = items;
	n->orig = items + count;
	n->n = n->cap = n->orig_n = (uint32_t)count;
	return 0;
}

/* In keep mode, whether the member key of the mapping at r->path is on a path kept (its path then in r->path). */
static bool keeps(struct reader *r, const char *key, size_t klen)
{
	size_t at = r->path_len + (r->path_len > 0), i;

	if (at + klen >= sizeof(r->path) || memchr(key, '\0', klen))
		return false;
	if (r->path_len > 0)
		r->path[r->path_len] = '.';
	memcpy(r->path + at, key, klen);
	r->path[at + klen] = '\0';
	for (i = 0; r->keep[i]; i++)
		if (strncmp(r->keep[i], r->path, at + klen) == 0 &&
		    (r->keep[i][at + klen] == '\0' || r->keep[i][at + klen] == '.'))
			return true;
	r->path[r->path_len] = '\0';
	return false;
}

static int value(struct reader *r, struct ynode **out, int depth);

/*
 * The root's "items", for ydoc_parse_json_items: each item read into a
 * stream of its own, handed over and freed; the list in r->s stays empty.
 */
static int items_apart(struct reader *r, struct ynode **out, int depth)
{
	struct ystream *keep = r->s, one;
	struct ynode *n, *item;
	int rc = new_node(r, YNODE_SEQ, r->at, &n);

	if (rc < 0)
		return rc;
	n->style = YAML_FLOW_SEQUENCE_STYLE;
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
	n->end = (uint32_t)r->at;
	*out = n;
	return 0;
}

/* A member's key and value; both are kept when the mapping is and, in keep mode, when its path is. */
static int member(struct reader *r, bool kept, int depth)
{
	size_t outer = r->path_len, at = r->at;
	struct ynode *key = NULL, *v = NULL;
	bool items;
	int rc;

	if (r->at >= r->len || r->p[r->at] != '"')
		return fail(r, "a member's key must be a string");
	rc = string(r, NULL);
	items = r->item && depth == 0 && r->tlen == 5 && memcmp(r->tp, "items", 5) == 0;
	if (rc == 0 && kept && r->keep && (kept = keeps(r, r->tp, r->tlen)))
		r->path_len = strlen(r->path);
	if (rc == 0 && kept)
		rc = text_node(r, at, &key);
	if (rc < 0)
		return rc;
	skip_ws(r);
	if (r->at >= r->len || r->p[r->at] != ':')
		return fail(r, "a ':' after a member's key");
	r->at++;
	skip_ws(r);
	if (items && kept && r->at < r->len && r->p[r->at] == '[')
		rc = items_apart(r, &v, depth + 1);
	else
		rc = value(r, kept ? &v : NULL, depth + 1);
	r->path_len = outer;
	r->path[outer] = '\0';
	if (rc == 0 && kept && (rc = push(r, key)) == 0)
		rc = push(r, v);
	return rc;
}

/* An object or an array from its opening bracket: its node when out is not NULL. */
static int collection(struct reader *r, struct ynode **out, int depth)
{
	bool map = r->p[r->at] == '{';
	char close = map ? '}' : ']';
	size_t mark = r->depth_items;
	struct ynode *n = NULL, *item;
	int rc;

	if (depth >= YDOC_MAX_DEPTH)
		return fail(r, "nested deeper than 200 levels");
	if (out && (rc = new_node(r, map ? YNODE_MAP : YNODE_SEQ, r->at, &n)) < 0)
		return rc;
	if (n)
		n->style = map ? YAML_FLOW_MAPPING_STYLE : YAML_FLOW_SEQUENCE_STYLE;
	r->at++;
	skip_ws(r);
	if (r->at < r->len && r->p[r->at] == close) {
		r->at++;
	} else {
		for (;;) {
			if (map) {
				rc = member(r, n != NULL, depth);
			} else {
				/* keep mode makes no items: a path names members only */
				rc = value(r, n && !r->keep ? &item : NULL, depth + 1);
				if (rc == 0 && n && !r->keep)
					rc = push(r, item);
			}
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
	if (!n)
		return 0;
	n->end = (uint32_t)r->at;
	rc = settle(r, n, mark);
	if (rc == 0)
		*out = n;
	return rc;
}

/* A value: its node in *out, or when out is NULL read and checked only. */
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

/* The parse, with r's mode set: the budget, the paths kept, the items handed over. */
static int parse(struct reader *r, const char *input, size_t len, struct ystream *s, char *err, size_t errlen)
{
	struct ynode *root = NULL;
	struct ydoc *d;
	int rc;

	r->s = s;
	r->p = input;
	r->len = len;
	r->line = 1;
	r->err = err;
	r->errlen = errlen;
	memset(s, 0, sizeof(*s));
	s->input = input;
	s->len = len;
	if (len > YDOC_MAX_INPUT) {
		snprintf(err, errlen, "1:1: input larger than %zu MiB", YDOC_MAX_INPUT >> 20);
		return -EINVAL;
	}
	skip_ws(r);
	rc = value(r, &root, 0);
	if (rc == 0) {
		skip_ws(r);
		if (r->at < len)
			rc = fail(r, "more after the value");
	}
	if (rc == 0 && !(s->docs = calloc(1, sizeof(*s->docs))))
		rc = -ENOMEM;
	ybuf_free(&r->text);
	free(r->stack);
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
	d->crlf = r->crlf;
	return 0;
}

int ydoc_parse_json_some(const char *input, size_t len, const char *const *keep, size_t max_nodes, struct ystream *s,
			 char *err, size_t errlen)
{
	struct reader r = {.max_nodes = max_nodes ? max_nodes : SIZE_MAX, .keep = keep};

	return parse(&r, input, len, s, err, errlen);
}

int ydoc_parse_json(const char *input, size_t len, struct ystream *s, char *err, size_t errlen)
{
	return ydoc_parse_json_some(input, len, NULL, 0, s, err, errlen);
}

int ydoc_parse_json_items(const char *input, size_t len, struct ystream *s,
			  int (*item)(void *data, struct ystream *is, struct ynode *n), void *data, char *err,
			  size_t errlen)
{
	struct reader r = {.max_nodes = SIZE_MAX, .item = item, .item_data = data};

	return parse(&r, input, len, s, err, errlen);
}
