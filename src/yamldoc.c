#include "config.h"

#include "yamldoc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

/* ---- the arena: every node and string of a stream ---------------------- */

struct yarena {
	struct yarena *next;
	size_t used, cap;
	max_align_t data[];
};

/*
 * Chunks double from 16 KiB (a small document takes little) to 1 MiB, past
 * which a chunk is mapped on its own by malloc and given back whole when
 * the stream is freed.
 */
#define ARENA_FIRST ((size_t)16 << 10)
#define ARENA_MAX ((size_t)1 << 20)

/*
 * Memory for a node, an array or a string, freed with the stream: no
 * per-node frees to get wrong. align is 1 for strings (packed: a review's
 * short keys and values are most of its bytes) and 8 for the rest.
 */
void *ydoc_arena_alloc(struct ystream *s, size_t n, size_t align)
{
	struct yarena *a = s->arena;
	size_t at = a ? (a->used + align - 1) & ~(align - 1) : 0;

	if (!a || at > a->cap || a->cap - at < n) {
		size_t cap = a ? a->cap * 2 : ARENA_FIRST;

		if (cap > ARENA_MAX)
			cap = ARENA_MAX;
		if (cap < n)
			cap = n;
		a = malloc(sizeof(*a) + cap);
		if (!a)
			return NULL;
		a->next = s->arena;
		a->cap = cap;
		s->arena = a;
		at = 0;
	}
	a->used = at + n;
	return (char *)a->data + at;
}

static void *arena_alloc(struct ystream *s, size_t n)
{
	return ydoc_arena_alloc(s, n, sizeof(void *));
}

/* A NUL-terminated copy in the arena. */
static char *arena_strndup(struct ystream *s, const char *p, size_t n)
{
	char *d = ydoc_arena_alloc(s, n + 1, 1);

	if (d) {
		memcpy(d, p, n);
		d[n] = '\0';
	}
	return d;
}

/* A copy of an optional libyaml string (anchor, tag); sets *oom when out of memory. */
static char *arena_strdup_opt(struct ystream *s, const unsigned char *p, bool *oom)
{
	char *d;

	if (!p)
		return NULL;
	d = arena_strndup(s, (const char *)p, strlen((const char *)p));
	if (!d)
		*oom = true;
	return d;
}

void ydoc_free(struct ystream *s)
{
	struct yarena *a = s->arena, *next;

	for (; a; a = next) {
		next = a->next;
		free(a);
	}
	free(s->docs);
	memset(s, 0, sizeof(*s));
}

/* ---- output buffers ------------------------------------------------------ */

int ybuf_add(struct ybuf *b, const char *p, size_t n)
{
	if (b->cap - b->len <= n) {
		size_t cap = b->cap ? b->cap : 4096;
		char *q;

		while (cap - b->len <= n) {
			if (cap > SIZE_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		q = realloc(b->p, cap);
		if (!q)
			return -ENOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

void ybuf_free(struct ybuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- parsing --------------------------------------------------------------- */

/*
 * libyaml counts marks in characters; the documents' byte ranges need
 * bytes. A cursor walks the UTF-8 input forward (marks come in order).
 */
struct cursor {
	const unsigned char *p;
	size_t len, chars, bytes, start;
};

/* The length of the UTF-8 sequence that starts with c. */
static size_t utf8_width(unsigned char c)
{
	if (c < 0x80)
		return 1;
	if ((c & 0xE0) == 0xC0)
		return 2;
	if ((c & 0xF0) == 0xE0)
		return 3;
	if ((c & 0xF8) == 0xF0)
		return 4;
	return 1;
}

/* The byte offset of character index (libyaml's marks). */
static size_t byte_at(struct cursor *c, size_t index)
{
	if (index < c->chars) {
		c->chars = 0;
		c->bytes = c->start;
	}
	while (c->chars < index && c->bytes < c->len) {
		c->bytes += utf8_width(c->p[c->bytes]);
		c->chars++;
	}
	return c->bytes < c->len ? c->bytes : c->len;
}

/* A parse error as "LINE:COL: context: problem", 1-based. */
static int fail_at(char *err, size_t errlen, size_t line, size_t column, const char *what, const char *context)
{
	snprintf(err, errlen, "%zu:%zu: %s%s%s", line + 1, column + 1, context ? context : "", context ? ": " : "",
		 what ? what : "malformed YAML");
	return -EINVAL;
}

/* An empty node of kind in the arena. */
static struct ynode *new_node(struct ystream *s, enum ynode_kind kind)
{
	struct ynode *n = arena_alloc(s, sizeof(*n));

	if (n) {
		memset(n, 0, sizeof(*n));
		n->kind = kind;
	}
	return n;
}

/* Appends to a collection, growing its array in the arena. */
static int add_item(struct ystream *s, struct ynode *coll, struct ynode *item)
{
	if (coll->n == coll->cap) {
		size_t cap = coll->cap ? coll->cap * 2 : 8;
		struct ynode **items = arena_alloc(s, cap * sizeof(*items));

		if (!items)
			return -ENOMEM;
		if (coll->n)
			memcpy(items, coll->items, coll->n * sizeof(*items));
		coll->items = items;
		coll->cap = cap;
	}
	coll->items[coll->n++] = item;
	return 0;
}

/* A new, empty document at the end of the stream. */
static int add_doc(struct ystream *s, size_t *cap)
{
	if (s->ndocs == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct ydoc *d = realloc(s->docs, ncap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		s->docs = d;
		*cap = ncap;
	}
	memset(&s->docs[s->ndocs], 0, sizeof(s->docs[0]));
	s->ndocs++;
	return 0;
}

/* The anchors defined so far in a document: an alias must name one of them. */
struct anchor {
	const char *name;
	struct anchor *next;
};

static bool anchor_known(const struct anchor *a, const char *name)
{
	for (; a; a = a->next)
		if (strcmp(a->name, name) == 0)
			return true;
	return false;
}

/* Turns one event into a node (or finishes a collection); the stack holds the open collections. */
static int on_event(struct ystream *s, const yaml_event_t *e, struct ynode **stack, size_t *depth, struct ydoc *doc,
		    struct anchor **anchors, struct cursor *cur, char *err, size_t errlen)
{
	struct ynode *n = NULL;
	size_t start, end;
	bool oom = false;

	switch (e->type) {
	case YAML_SCALAR_EVENT:
		n = new_node(s, YNODE_SCALAR);
		if (!n)
			return -ENOMEM;
		n->anchor = arena_strdup_opt(s, e->data.scalar.anchor, &oom);
		n->tag = arena_strdup_opt(s, e->data.scalar.tag, &oom);
		n->value = arena_strndup(s, (const char *)e->data.scalar.value, e->data.scalar.length);
		n->len = e->data.scalar.length;
		n->style = e->data.scalar.style;
		n->plain_implicit = e->data.scalar.plain_implicit;
		n->quoted_implicit = e->data.scalar.quoted_implicit;
		if (!n->value)
			oom = true;
		break;
	case YAML_ALIAS_EVENT:
		n = new_node(s, YNODE_ALIAS);
		if (!n)
			return -ENOMEM;
		n->anchor = arena_strdup_opt(s, e->data.alias.anchor, &oom);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		bool seq = e->type == YAML_SEQUENCE_START_EVENT;

		n = new_node(s, seq ? YNODE_SEQ : YNODE_MAP);
		if (!n)
			return -ENOMEM;
		n->anchor =
		    arena_strdup_opt(s, seq ? e->data.sequence_start.anchor : e->data.mapping_start.anchor, &oom);
		n->tag = arena_strdup_opt(s, seq ? e->data.sequence_start.tag : e->data.mapping_start.tag, &oom);
		n->style = seq ? (int)e->data.sequence_start.style : (int)e->data.mapping_start.style;
		break;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (*depth == 0)
			return fail_at(err, errlen, e->start_mark.line, e->start_mark.column, "unbalanced collection",
				       NULL);
		(*depth)--;
		n = stack[*depth];
		n->end = byte_at(cur, e->end_mark.index);
		/* The items as read: the writer finds the edits made since against them. */
		if (n->n) {
			n->orig = arena_alloc(s, n->n * sizeof(n->items[0]));
			if (!n->orig)
				return -ENOMEM;
			memcpy(n->orig, n->items, n->n * sizeof(n->items[0]));
		}
		n->orig_n = n->n;
		if (*depth == 0)
			doc->body_end = n->end;
		return 0;
	default:
		return 0;
	}
	if (oom)
		return -ENOMEM;
	if (n->kind == YNODE_ALIAS && !anchor_known(*anchors, n->anchor))
		return fail_at(err, errlen, e->start_mark.line, e->start_mark.column, "found undefined alias", NULL);
	if (n->kind != YNODE_ALIAS && n->anchor) {
		struct anchor *a = arena_alloc(s, sizeof(*a));

		if (!a)
			return -ENOMEM;
		a->name = n->anchor;
		a->next = *anchors;
		*anchors = a;
	}
	n->line = e->start_mark.line + 1;
	n->column = e->start_mark.column + 1;
	/* Marks come in order: the start first, then the end, so the cursor only walks forward. */
	start = byte_at(cur, e->start_mark.index);
	end = byte_at(cur, e->end_mark.index);
	n->start = (uint32_t)start;
	n->end = (uint32_t)end;
	if (*depth == 0 && !doc->root) {
		doc->root = n;
		doc->body = start;
		doc->body_end = end;
	} else if (*depth > 0 && add_item(s, stack[*depth - 1], n) < 0) {
		return -ENOMEM;
	}
	if (n->kind == YNODE_SEQ || n->kind == YNODE_MAP) {
		if (*depth >= YDOC_MAX_DEPTH)
			return fail_at(err, errlen, e->start_mark.line, e->start_mark.column,
				       "nested deeper than 200 levels", NULL);
		stack[(*depth)++] = n;
	}
	return 0;
}

/*
 * How a document is written, read from its bytes: its line ends, and
 * whether it is JSON (a flow mapping or sequence from its first byte, as
 * kubectl get -o json prints) and with what indentation.
 */
static void doc_style(const char *input, struct ydoc *d)
{
	const char *p = input + d->start, *end = input + d->end, *nl;

	d->crlf = false;
	for (; p + 1 < end; p++)
		if (p[0] == '\r' && p[1] == '\n') {
			d->crlf = true;
			break;
		}
	d->json = d->root &&
		  ((d->root->kind == YNODE_MAP && d->root->style == YAML_FLOW_MAPPING_STYLE) ||
		   (d->root->kind == YNODE_SEQ && d->root->style == YAML_FLOW_SEQUENCE_STYLE)) &&
		  d->body < d->end && (input[d->body] == '{' || input[d->body] == '[');
	d->json_indent = 0;
	if (!d->json)
		return;
	/* The indentation of the line after the opening bracket, when there is one. */
	nl = memchr(input + d->body, '\n', d->body_end - d->body);
	if (!nl) {
		d->json_spaced = memmem(input + d->body, d->body_end - d->body, "\": ", 3) != NULL;
		return;
	}
	for (nl++; nl < input + d->body_end && *nl == ' ' && d->json_indent < 16; nl++)
		d->json_indent++;
	if (d->json_indent == 0)
		d->json_indent = 4;
}

int ydoc_parse(const char *input, size_t len, struct ystream *s, char *err, size_t errlen)
{
	struct ynode *stack[YDOC_MAX_DEPTH];
	struct cursor cur = {(const unsigned char *)input, len, 0, 0, 0};
	yaml_parser_t parser;
	yaml_event_t e;
	size_t depth = 0, cap = 0, prev_end = 0;
	struct ydoc *doc = NULL;
	struct anchor *anchors = NULL;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	s->input = input;
	s->len = len;
	if (len > YDOC_MAX_INPUT) {
		snprintf(err, errlen, "1:1: input larger than %zu MiB", YDOC_MAX_INPUT >> 20);
		return -EINVAL;
	}
	if (len >= 2 && (((unsigned char)input[0] == 0xFF && (unsigned char)input[1] == 0xFE) ||
			 ((unsigned char)input[0] == 0xFE && (unsigned char)input[1] == 0xFF))) {
		snprintf(err, errlen, "1:1: UTF-16 input: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)");
		return -EINVAL;
	}
	/* libyaml skips a UTF-8 byte order mark without counting it. */
	if (len >= 3 && memcmp(input, "\xEF\xBB\xBF", 3) == 0)
		cur.start = cur.bytes = 3;
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)input, len);
	for (;;) {
		if (!yaml_parser_parse(&parser, &e)) {
			if (parser.error == YAML_MEMORY_ERROR)
				rc = -ENOMEM;
			else
				rc = fail_at(err, errlen, parser.problem_mark.line, parser.problem_mark.column,
					     parser.problem, parser.context);
			break;
		}
		if (e.type == YAML_STREAM_END_EVENT) {
			s->tail = prev_end;
			yaml_event_delete(&e);
			break;
		}
		if (e.type == YAML_DOCUMENT_START_EVENT) {
			rc = add_doc(s, &cap);
			if (rc < 0) {
				yaml_event_delete(&e);
				break;
			}
			doc = &s->docs[s->ndocs - 1];
			doc->start = prev_end;
			anchors = NULL;
		} else if (e.type == YAML_DOCUMENT_END_EVENT && doc) {
			doc->end = prev_end = byte_at(&cur, e.end_mark.index);
			if (!doc->root)
				doc->body = doc->body_end = doc->end;
			doc_style(input, doc);
		} else if (doc) {
			rc = on_event(s, &e, stack, &depth, doc, &anchors, &cur, err, errlen);
		}
		yaml_event_delete(&e);
		if (rc < 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc < 0)
		ydoc_free(s);
	return rc;
}

/* ---- emitting ---------------------------------------------------------------- */

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	return ybuf_add(data, (const char *)buffer, size) == 0;
}

/*
 * The quoted scalars of the input that stand on one line are written as
 * they were: libyaml's emitter would requote some of them (a tab in single
 * quotes becomes "\t" in double quotes) and respell escapes. Each is
 * emitted as a token in its own quotes, and the token is replaced by the
 * scalar's bytes afterwards; tokens come out in the order they went in.
 */
struct keep {
	const char *input; /* NULL: keep nothing */
	char nonce[24];
	const struct ynode **nodes;
	size_t n, cap;
};

/* Whether the scalar's bytes can stand for it anywhere it was: one line, quoted, no anchor or tag. */
static bool keepable(const struct keep *k, const struct ynode *n)
{
	const char *p, *q;

	if (!k->input || n->end <= n->start + 1 || n->anchor || n->tag ||
	    (n->style != YAML_SINGLE_QUOTED_SCALAR_STYLE && n->style != YAML_DOUBLE_QUOTED_SCALAR_STYLE))
		return false;
	p = k->input + n->start;
	q = k->input + n->end - 1;
	if (*p != (n->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ? '\'' : '"') || *q != *p)
		return false;
	for (; p <= q; p++)
		if (*p == '\n' || *p == '\r')
			return false;
	return true;
}

/* A nonce that the input does not hold, so that no token can be mistaken for a scalar of it. */
static void keep_init(struct keep *k, const char *input, size_t len)
{
	unsigned i;

	memset(k, 0, sizeof(*k));
	for (i = 0; input && i < 1000; i++) {
		snprintf(k->nonce, sizeof(k->nonce), "rgkeep%u_", i);
		if (!memmem(input, len, k->nonce, strlen(k->nonce))) {
			k->input = input;
			return;
		}
	}
}

/* The events of one node and its children, as the parser reported them. */
static int emit_node(yaml_emitter_t *em, const struct ynode *n, int depth, struct keep *k)
{
	yaml_event_t e;
	char token[48];
	size_t i;
	int ok;

	if (depth > YDOC_MAX_DEPTH)
		return -EINVAL;
	switch (n->kind) {
	case YNODE_SCALAR:
		if (keepable(k, n)) {
			if (k->n == k->cap) {
				size_t cap = k->cap ? k->cap * 2 : 64;
				const struct ynode **nodes = realloc(k->nodes, cap * sizeof(*nodes));

				if (!nodes)
					return -ENOMEM;
				k->nodes = nodes;
				k->cap = cap;
			}
			k->nodes[k->n] = n;
			snprintf(token, sizeof(token), "%s%zu", k->nonce, k->n++);
			ok = yaml_scalar_event_initialize(&e, NULL, NULL, (yaml_char_t *)token, (int)strlen(token), 0,
							  1, (yaml_scalar_style_t)n->style);
			break;
		}
		/*
		 * An untagged scalar that the emitter cannot write plain where it
		 * now stands (a flow context) is quoted without a "!" tag: such a
		 * value holds indicators, so it was a string either way.
		 */
		ok = yaml_scalar_event_initialize(&e, (yaml_char_t *)n->anchor, (yaml_char_t *)n->tag,
						  (yaml_char_t *)n->value, (int)n->len, n->plain_implicit,
						  n->quoted_implicit || (!n->tag && n->plain_implicit),
						  (yaml_scalar_style_t)n->style);
		break;
	case YNODE_ALIAS:
		ok = yaml_alias_event_initialize(&e, (yaml_char_t *)n->anchor);
		break;
	case YNODE_SEQ:
		ok = yaml_sequence_start_event_initialize(&e, (yaml_char_t *)n->anchor, (yaml_char_t *)n->tag,
							  n->tag == NULL, (yaml_sequence_style_t)n->style);
		break;
	default:
		ok = yaml_mapping_start_event_initialize(&e, (yaml_char_t *)n->anchor, (yaml_char_t *)n->tag,
							 n->tag == NULL, (yaml_mapping_style_t)n->style);
		break;
	}
	if (!ok || !yaml_emitter_emit(em, &e))
		return em->error == YAML_MEMORY_ERROR || !ok ? -ENOMEM : -EINVAL;
	if (n->kind != YNODE_SEQ && n->kind != YNODE_MAP)
		return 0;
	for (i = 0; i < n->n; i++) {
		int rc = emit_node(em, n->items[i], depth + 1, k);

		if (rc < 0)
			return rc;
	}
	ok = n->kind == YNODE_SEQ ? yaml_sequence_end_event_initialize(&e) : yaml_mapping_end_event_initialize(&e);
	if (!ok || !yaml_emitter_emit(em, &e))
		return -ENOMEM;
	return 0;
}

/* One document from the tree, with libyaml's emitter; crlf ends its lines with CR LF. */
static int emit_doc(const struct ynode *root, struct keep *k, bool crlf, struct ybuf *out)
{
	yaml_emitter_t em;
	yaml_event_t e;
	int rc = -ENOMEM;

	if (!yaml_emitter_initialize(&em))
		return -ENOMEM;
	yaml_emitter_set_output(&em, write_handler, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	yaml_emitter_set_indent(&em, 2);
	yaml_emitter_set_break(&em, crlf ? YAML_CRLN_BREAK : YAML_LN_BREAK);
	if (!yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING) || !yaml_emitter_emit(&em, &e))
		goto out;
	if (!yaml_document_start_event_initialize(&e, NULL, NULL, NULL, 1) || !yaml_emitter_emit(&em, &e))
		goto out;
	rc = emit_node(&em, root, 0, k);
	if (rc < 0)
		goto out;
	rc = -ENOMEM;
	if (!yaml_document_end_event_initialize(&e, 1) || !yaml_emitter_emit(&em, &e))
		goto out;
	if (!yaml_stream_end_event_initialize(&e) || !yaml_emitter_emit(&em, &e))
		goto out;
	rc = 0;
out:
	yaml_emitter_delete(&em);
	return rc;
}

/* The emitted text with every token replaced by its scalar's bytes; -EINVAL when a token is not where it should be. */
static int put_back(const struct keep *k, const struct ybuf *in, struct ybuf *out)
{
	const char *p = in->p ? in->p : "", *end = p + in->len;
	char token[48];
	size_t i;

	for (i = 0; i < k->n; i++) {
		const struct ynode *n = k->nodes[i];
		char q = n->style == YAML_SINGLE_QUOTED_SCALAR_STYLE ? '\'' : '"';
		const char *at;
		size_t tl;

		snprintf(token + 1, sizeof(token) - 2, "%s%zu", k->nonce, i);
		token[0] = q;
		tl = strlen(token);
		token[tl++] = q;
		token[tl] = '\0';
		at = memmem(p, (size_t)(end - p), token, tl);
		if (!at)
			return -EINVAL;
		if (ybuf_add(out, p, (size_t)(at - p)) < 0 || ybuf_add(out, k->input + n->start, n->end - n->start) < 0)
			return -ENOMEM;
		p = at + tl;
	}
	return ybuf_add(out, p, (size_t)(end - p));
}

int ydoc_emit(const struct ynode *root, struct ybuf *out)
{
	struct keep k;

	keep_init(&k, NULL, 0);
	return emit_doc(root, &k, false, out);
}

/*
 * n on one line as libyaml writes it as a block mapping's value, or as the
 * item of a flow sequence (quoted as a flow context needs); the mapping's
 * key or the brackets are taken off.
 */
int ydoc_flow_text(const struct ynode *n, bool in_block, struct ybuf *out)
{
	struct ynode key = {.kind = YNODE_SCALAR, .value = (char[]){"k"}, .len = 1, .plain_implicit = true};
	struct ynode wrap = {.kind = in_block ? YNODE_MAP : YNODE_SEQ,
			     .style = in_block ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_SEQUENCE_STYLE};
	struct ynode *items[2];
	const char *open = in_block ? "k: " : "[", *close = in_block ? "\n" : "]\n";
	size_t lo = strlen(open), lc = strlen(close);
	struct ybuf raw = {0};
	struct keep k;
	int rc;

	/* The emitter only reads it: the item array is not const for the tree's sake. */
	items[0] = &key;
	memcpy(&items[in_block], &n, sizeof(n));
	wrap.items = items;
	wrap.n = in_block ? 2 : 1;
	keep_init(&k, NULL, 0);
	rc = emit_doc(&wrap, &k, false, &raw);
	if (rc == 0 && (raw.len < lo + lc || memcmp(raw.p, open, lo) != 0 ||
			memcmp(raw.p + raw.len - lc, close, lc) != 0 || memchr(raw.p, '\n', raw.len - 1)))
		rc = -EINVAL;
	if (rc == 0)
		rc = ybuf_add(out, raw.p + lo, raw.len - lo - lc);
	ybuf_free(&raw);
	return rc;
}

/*
 * One changed document's YAML, appended to out: the quoted scalars as they
 * were, when that can be done.
 */
static int emit_kept(const struct ystream *s, const struct ydoc *d, struct ybuf *out)
{
	struct ybuf raw = {0};
	size_t mark = out->len;
	struct keep k;
	int rc;

	keep_init(&k, s->input, s->len);
	rc = emit_doc(d->root, &k, d->crlf, &raw);
	if (rc == 0 && k.n > 0) {
		rc = put_back(&k, &raw, out);
		if (rc == -EINVAL) {
			/* The emitter wrote a token otherwise than asked: libyaml's own quoting, then. */
			out->len = mark;
			free(k.nodes);
			keep_init(&k, NULL, 0);
			ybuf_free(&raw);
			rc = emit_doc(d->root, &k, d->crlf, &raw);
			if (rc == 0)
				rc = ybuf_add(out, raw.p ? raw.p : "", raw.len);
		}
	} else if (rc == 0) {
		rc = ybuf_add(out, raw.p ? raw.p : "", raw.len);
	}
	free(k.nodes);
	ybuf_free(&raw);
	return rc;
}

/* ---- JSON ------------------------------------------------------------------------ */

/* Whether v is a JSON number, as the grammar of RFC 8259 has it. */
static bool json_number(const char *v)
{
	const char *p = v;

	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (*p >= '1' && *p <= '9')
		while (*p >= '0' && *p <= '9')
			p++;
	else
		return false;
	if (*p == '.') {
		if (!(*++p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

/*
 * Whether a double-quoted scalar's bytes are JSON as they are: on one line,
 * without a raw control character, and with JSON's escapes only (YAML has
 * more: \x41, \e, \N).
 */
static bool json_escapes(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((unsigned char)p[i] < 0x20)
			return false;
		if (p[i] == '\\' && (++i == n || !strchr("\"\\/bfnrtu", p[i]) || p[i] == '\0'))
			return false;
	}
	return true;
}

/* A scalar as JSON: a quoted scalar of a JSON input as it was, a literal where it is one, else a string. */
static int json_scalar(const struct ystream *s, const struct ynode *n, struct ybuf *out)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p;
	size_t i;
	int rc;

	if (n->end > n->start && n->style == YAML_DOUBLE_QUOTED_SCALAR_STYLE && s->input[n->start] == '"' &&
	    json_escapes(s->input + n->start, n->end - n->start))
		return ybuf_add(out, s->input + n->start, n->end - n->start);
	if (!n->text && !n->tag && n->style == YAML_PLAIN_SCALAR_STYLE) {
		if (n->len == 0 || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0)
			return ybuf_add(out, "null", 4);
		if (strcmp(n->value, "true") == 0 || strcmp(n->value, "false") == 0 || json_number(n->value))
			return ybuf_add(out, n->value, n->len);
	}
	if (n->style == YAML_ANY_SCALAR_STYLE && !n->text && !n->end && n->len > 0)
		return ybuf_add(out, n->value, n->len); /* made here as a literal (YDOC_RAW) */
	rc = ybuf_add(out, "\"", 1);
	for (i = 0, p = (const unsigned char *)n->value; rc == 0 && i < n->len; i++) {
		char esc[7] = {'\\', 'u', '0', '0', hex[p[i] >> 4], hex[p[i] & 15], 0};

		if (p[i] == '"' || p[i] == '\\') {
			esc[1] = (char)p[i];
			rc = ybuf_add(out, esc, 2);
		} else if (p[i] == '\n') {
			rc = ybuf_add(out, "\\n", 2);
		} else if (p[i] == '\t') {
			rc = ybuf_add(out, "\\t", 2);
		} else if (p[i] < 0x20 || p[i] == 0x7f) {
			rc = ybuf_add(out, esc, 6);
		} else {
			rc = ybuf_add(out, (const char *)p + i, 1);
		}
	}
	return rc ? rc : ybuf_add(out, "\"", 1);
}

/* A line break and the indentation of depth, or nothing when the JSON is on one line. */
static int json_break(const struct ydoc *d, int depth, struct ybuf *out)
{
	int i, rc;

	if (d->json_indent == 0)
		return 0;
	rc = ybuf_add(out, d->crlf ? "\r\n" : "\n", d->crlf ? 2 : 1);
	for (i = 0; rc == 0 && i < depth * d->json_indent; i++)
		rc = ybuf_add(out, " ", 1);
	return rc;
}

/* A node as JSON, kubectl's way: one member a line, the input's indentation. */
static int json_node(const struct ystream *s, const struct ydoc *d, const struct ynode *n, int depth, struct ybuf *out)
{
	bool map = n->kind == YNODE_MAP;
	size_t i, step = map ? 2 : 1;
	int rc;

	if (depth > YDOC_MAX_DEPTH || n->kind == YNODE_ALIAS)
		return -EINVAL;
	if (n->kind == YNODE_SCALAR)
		return json_scalar(s, n, out);
	rc = ybuf_add(out, map ? "{" : "[", 1);
	for (i = 0; rc == 0 && i + step - 1 < n->n; i += step) {
		if (i > 0)
			rc = ybuf_add(out, ", ", d->json_spaced ? 2 : 1);
		if (rc == 0)
			rc = json_break(d, depth + 1, out);
		if (rc == 0 && map) {
			if (n->items[i]->kind != YNODE_SCALAR)
				return -EINVAL;
			rc = json_scalar(s, n->items[i], out);
			if (rc == 0)
				rc = ybuf_add(out, ": ", d->json_indent || d->json_spaced ? 2 : 1);
		}
		if (rc == 0)
			rc = json_node(s, d, n->items[i + step - 1], depth + 1, out);
	}
	if (rc == 0 && n->n > 0)
		rc = json_break(d, depth, out);
	return rc ? rc : ybuf_add(out, map ? "}" : "]", 1);
}

int ydoc_json(const struct ystream *s, const struct ynode *n, struct ybuf *out)
{
	const struct ydoc d = {0};

	return json_node(s, &d, n, 0, out);
}

/* A changed JSON document: its members in their order, written as JSON again. */
static int emit_json(const struct ystream *s, const struct ydoc *d, struct ybuf *out)
{
	size_t mark = out->len;
	int rc = json_node(s, d, d->root, 0, out);

	if (rc == -EINVAL) {
		/* A key that is no string, an alias: no JSON for it, YAML then. */
		out->len = mark;
		return emit_kept(s, d, out);
	}
	return rc ? rc : ybuf_add(out, d->crlf ? "\r\n" : "\n", d->crlf ? 2 : 1);
}

int ydoc_emit_whole(const struct ystream *s, const struct ydoc *d, struct ybuf *out)
{
	return d->json ? emit_json(s, d, out) : emit_kept(s, d, out);
}

/* ---- reading and editing ------------------------------------------------------ */

const char *ydoc_str(const struct ynode *n)
{
	return n && n->kind == YNODE_SCALAR ? n->value : NULL;
}

bool ydoc_is_null(const struct ynode *n)
{
	if (!n || n->kind != YNODE_SCALAR)
		return false;
	if (n->tag)
		return strcmp(n->tag, "tag:yaml.org,2002:null") == 0 || strcmp(n->tag, "!!null") == 0;
	return n->style == YAML_PLAIN_SCALAR_STYLE &&
	       (n->len == 0 || strcmp(n->value, "~") == 0 || strcmp(n->value, "null") == 0 ||
		strcmp(n->value, "Null") == 0 || strcmp(n->value, "NULL") == 0);
}

const char *ydoc_value(const struct ynode *n)
{
	return ydoc_is_null(n) ? NULL : ydoc_str(n);
}

struct ynode *ydoc_get(const struct ynode *map, const char *key)
{
	size_t i;

	if (!map || map->kind != YNODE_MAP)
		return NULL;
	for (i = 0; i + 1 < map->n; i += 2) {
		const char *k = ydoc_str(map->items[i]);

		if (k && strcmp(k, key) == 0)
			return map->items[i + 1];
	}
	return NULL;
}

struct ynode *ydoc_path(const struct ynode *map, const char *path)
{
	char key[128];
	const char *dot;
	const struct ynode *cur = map;
	struct ynode *n = NULL;

	while (cur && *path) {
		size_t k;

		dot = strchr(path, '.');
		k = dot ? (size_t)(dot - path) : strlen(path);
		if (k >= sizeof(key))
			return NULL;
		memcpy(key, path, k);
		key[k] = '\0';
		cur = n = ydoc_get(cur, key);
		path += k + (dot ? 1 : 0);
	}
	return n;
}

/*
 * Whether a plain scalar with this text could read as something other than
 * a string (YAML 1.1 booleans, null, numbers). Quoting a string that did
 * not need it changes nothing but its look.
 */
static bool needs_quotes(const char *v)
{
	static const char *const words[] = {"y",  "Y",	  "yes",  "Yes",  "YES",   "n",	    "N",     "no", "No",
					    "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On",
					    "ON", "off",  "Off",  "OFF",  "null",  "Null",  "NULL",  "~",  ""};
	const char *p = v;
	size_t i;

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(v, words[i]) == 0)
			return true;
	if (*p == '+' || *p == '-')
		p++;
	if (*p == '.' && (strcasecmp(p, ".inf") == 0 || strcasecmp(p, ".nan") == 0))
		return true;
	if (!((*p >= '0' && *p <= '9') || *p == '.'))
		return false;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'o'))
		return true;
	for (; *p; p++)
		if (!strchr("0123456789._eE+-:", *p))
			return false;
	return true;
}

struct ynode *ydoc_scalar(struct ystream *s, const char *value, enum ydoc_scalar_kind k)
{
	struct ynode *n = new_node(s, YNODE_SCALAR);

	if (!n)
		return NULL;
	n->len = strlen(value);
	n->value = arena_strndup(s, value, n->len);
	if (!n->value)
		return NULL;
	n->plain_implicit = true;
	n->quoted_implicit = true;
	n->text = k == YDOC_TEXT;
	n->style = k == YDOC_TEXT && needs_quotes(value) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE;
	return n;
}

struct ynode *ydoc_new_map(struct ystream *s, bool flow)
{
	struct ynode *n = new_node(s, YNODE_MAP);

	if (n)
		n->style = flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE;
	return n;
}

struct ynode *ydoc_new_seq(struct ystream *s, bool flow)
{
	struct ynode *n = new_node(s, YNODE_SEQ);

	if (n)
		n->style = flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE;
	return n;
}

int ydoc_keep_items(struct ystream *s, struct ynode *coll)
{
	coll->orig_n = coll->n;
	if (coll->n == 0)
		return 0;
	coll->orig = arena_alloc(s, coll->n * sizeof(coll->items[0]));
	if (!coll->orig)
		return -ENOMEM;
	memcpy(coll->orig, coll->items, coll->n * sizeof(coll->items[0]));
	return 0;
}

char *ydoc_strndup(struct ystream *s, const char *p, size_t n)
{
	return arena_strndup(s, p, n);
}

struct ynode *ydoc_copy(struct ystream *s, const struct ynode *n)
{
	struct ynode *c = new_node(s, n->kind);
	size_t i;

	if (!c)
		return NULL;
	*c = *n;
	c->orig = NULL;
	c->orig_n = 0;
	c->items = NULL;
	c->n = c->cap = 0;
	for (i = 0; i < n->n; i++) {
		struct ynode *item = ydoc_copy(s, n->items[i]);

		if (!item || add_item(s, c, item) < 0)
			return NULL;
	}
	return c;
}

int ydoc_append(struct ystream *s, struct ynode *coll, struct ynode *item)
{
	if (!item)
		return -ENOMEM;
	return add_item(s, coll, item);
}

int ydoc_insert(struct ystream *s, struct ynode *seq, size_t at, struct ynode *item)
{
	if (!item || add_item(s, seq, item) < 0)
		return -ENOMEM;
	if (at > seq->n - 1)
		at = seq->n - 1;
	memmove(&seq->items[at + 1], &seq->items[at], (seq->n - 1 - at) * sizeof(seq->items[0]));
	seq->items[at] = item;
	return 0;
}

int ydoc_set(struct ystream *s, struct ynode *map, const char *key, struct ynode *value, bool front)
{
	size_t i;
	struct ynode *k;

	if (!value)
		return -ENOMEM;
	for (i = 0; i + 1 < map->n; i += 2) {
		const char *name = ydoc_str(map->items[i]);

		if (name && strcmp(name, key) == 0) {
			map->items[i + 1] = value;
			return 0;
		}
	}
	k = ydoc_scalar(s, key, YDOC_TEXT);
	if (!k || add_item(s, map, k) < 0 || add_item(s, map, value) < 0)
		return -ENOMEM;
	if (front) {
		memmove(&map->items[2], &map->items[0], (map->n - 2) * sizeof(map->items[0]));
		map->items[0] = k;
		map->items[1] = value;
	}
	return 0;
}

/* A collection of kind under key: the one there, or a new one where the key is missing or null. */
static struct ynode *want(struct ystream *s, struct ynode *map, const char *key, enum ynode_kind kind)
{
	struct ynode *n = ydoc_get(map, key);

	if (n && !ydoc_is_null(n))
		return n->kind == kind ? n : NULL;
	n = kind == YNODE_MAP ? ydoc_new_map(s, false) : ydoc_new_seq(s, false);
	if (!n || ydoc_set(s, map, key, n, false) < 0)
		return NULL;
	return n;
}

struct ynode *ydoc_want_map(struct ystream *s, struct ynode *map, const char *key)
{
	return want(s, map, key, YNODE_MAP);
}

struct ynode *ydoc_want_seq(struct ystream *s, struct ynode *map, const char *key)
{
	return want(s, map, key, YNODE_SEQ);
}
