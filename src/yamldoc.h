/*
 * A YAML stream as a tree that keeps what libyaml reports (key order, tags,
 * anchors, scalar and collection styles), can be edited, and is written
 * back with libyaml's emitter. Each document remembers where its bytes lie
 * in the input, so that a document left alone is copied byte for byte.
 *
 *	struct ystream s;
 *	struct ybuf out = {0};
 *	char err[256];
 *	if (ydoc_parse(text, len, &s, err, sizeof(err)) < 0)
 *		fprintf(stderr, "FILE:%s\n", err);      // "LINE:COL: message"
 *	struct ynode *pod = ydoc_path(s.docs[0].root, "spec.template.spec");
 *	ydoc_set(&s, pod, "shareProcessNamespace", ydoc_scalar(&s, "true", YDOC_RAW), true);
 *	s.docs[0].changed = true;                    // else its input bytes are copied
 *	ydoc_write(&s, &out);                        // the whole stream
 *	ybuf_free(&out);
 *	ydoc_free(&s);
 *
 * Every node lives in the stream's arena and goes with ydoc_free. A changed
 * YAML document is written as its input bytes with the changes made as text
 * edits (yamldoc-edit.c): each node remembers its bytes and each collection
 * its items as read, so what was added to the tree is inserted, in the
 * document's indentation and block or flow style, where it stands in the
 * tree, and a scalar put in another's place replaces its bytes; every other
 * line stays as it was, comments included. Where no place can be found for
 * an edit (items reordered or taken out, a block collection put where a
 * flow one was), the document is written whole from the tree instead
 * (rewritten says so): comments in it are lost then (those before its first
 * node stay). What a document written whole keeps: its line endings (CR LF
 * stays CR LF), the text of each quoted scalar that stands on one line
 * (libyaml's emitter would requote a tab in single quotes). JSON is always
 * written whole, as JSON. Errors are -errno; the parse error says where,
 * 1-based.
 */
#ifndef RG_YAMLDOC_H
#define RG_YAMLDOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ynode_kind { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP, YNODE_ALIAS };

/*
 * A node is 88 bytes: the webhook holds a whole AdmissionReview's tree at
 * once, and every byte here is paid per item of the largest list a pod can
 * hold. Offsets, counts, lines and columns fit 32 bits (YDOC_MAX_INPUT).
 */
struct ynode {
	enum ynode_kind kind;
	int style;	      /* libyaml's scalar, sequence or mapping style */
	char *tag;	      /* NULL: implicit */
	char *anchor;	      /* the anchor, or for an alias the anchor it names */
	char *value;	      /* scalars: the value, NUL-terminated (it may hold NULs: len) */
	struct ynode **items; /* sequences: the items; mappings: key, value, key, value... */
	struct ynode **orig;  /* collections read: their items as read, which the edits are found against */
	uint32_t len;	      /* scalars: the value's length */
	uint32_t n, cap;      /* collections: the items, and the room for them */
	uint32_t orig_n;
	uint32_t line, column; /* 1-based, where the node starts in the input (0: made here) */
	/*
	 * Every node read: its bytes in the input (a block collection's end may
	 * lie past comments); a scalar's are its text, quotes included. end 0:
	 * made here.
	 */
	uint32_t start, end;
	bool plain_implicit, quoted_implicit; /* scalars: whether the tag may be left out */
	bool text; /* made here as a string (YDOC_TEXT): JSON output quotes it */
};

struct ydoc {
	struct ynode *root;    /* NULL for an empty document */
	size_t start, end;     /* the document's bytes: from the end of the previous one */
	size_t body, body_end; /* the root node's bytes within them */
	bool changed;	       /* written from the tree instead of copied */
	bool crlf;	       /* its lines end in CR LF: so do the lines written for it */
	bool json;	       /* it is JSON (kubectl get -o json): it is written back as JSON */
	int json_indent;       /* the JSON's indentation in spaces; 0: all on one line... */
	bool json_spaced;      /* ...with a space after each ':' and ',' */
	bool rewritten;	       /* ydoc_write: changed, and written whole from the tree (no place for an edit) */
	size_t rewritten_line; /* ...because of what stands at this line */
};

struct yarena;

struct ystream {
	const char *input;
	size_t len;
	struct ydoc *docs;
	size_t ndocs;
	size_t tail;	    /* where the bytes after the last document start */
	size_t failed_line; /* ydoc_write's -EINVAL: the line of the document libyaml could not write */
	struct yarena *arena;
};

/* A growable output buffer; len excludes the NUL that always follows. */
struct ybuf {
	char *p;
	size_t len, cap;
};

#define YDOC_MAX_DEPTH 200
#define YDOC_MAX_INPUT ((size_t)256 << 20)

/*
 * Parses len bytes of UTF-8 YAML. On error returns -EINVAL (malformed;
 * err is "LINE:COL: message") or -ENOMEM, and s is empty.
 */
int ydoc_parse(const char *input, size_t len, struct ystream *s, char *err, size_t errlen);
/*
 * yamldoc-json.c: len bytes of JSON (RFC 8259: one value, nothing else) read
 * into the stream of one document ydoc_parse makes of them, without
 * libyaml. -EINVAL (err "LINE:COL: message") for what is not JSON.
 */
int ydoc_parse_json(const char *input, size_t len, struct ystream *s, char *err, size_t errlen);
/*
 * The same with a budget: past max_nodes nodes (0: no limit), -E2BIG and
 * err "LINE:COL: more than N values". With keep, a NULL-terminated list of
 * dotted paths of members ("request.uid"), only the members on them are
 * made into nodes (their mappings with them); everything else is read and
 * checked as JSON, and let go.
 */
int ydoc_parse_json_some(const char *input, size_t len, const char *const *keep, size_t max_nodes, struct ystream *s,
			 char *err, size_t errlen);
/*
 * The same for a Kubernetes List, one item at a time: each item of the root
 * object's "items" list is read into a stream of its own, handed to item()
 * (is: that stream, n: the item) and freed when it returns; in s the list
 * stays empty. A List of any length is read in the memory of its largest
 * item. A negative result of item() stops the read and is returned.
 */
int ydoc_parse_json_items(const char *input, size_t len, struct ystream *s,
			  int (*item)(void *data, struct ystream *is, struct ynode *n), void *data, char *err,
			  size_t errlen);
void ydoc_free(struct ystream *s);

/*
 * yamldoc-edit.c: writes the stream: documents not marked changed as their
 * input bytes. -EINVAL when libyaml cannot write a changed document
 * (failed_line says which).
 */
int ydoc_write(struct ystream *s, struct ybuf *out);
/*
 * One changed document whole from its tree (libyaml's emitter keeping its
 * scalars' styles; JSON as JSON), into out: what ydoc_write falls back to.
 * -EINVAL when libyaml cannot write it.
 */
int ydoc_emit_whole(const struct ystream *s, const struct ydoc *d, struct ybuf *out);
/*
 * yamldoc-edit.c: d written as its input bytes with the tree's changes made
 * as text edits, appended to out. 1 (and out as it was) when an edit has no
 * place, d->rewritten_line saying where; else 0 or -ENOMEM.
 */
int ydoc_write_edits(const struct ystream *s, struct ydoc *d, struct ybuf *out);
/* One node on one line as libyaml writes it in a block mapping or a flow sequence (the text of a new node). */
int ydoc_flow_text(const struct ynode *n, bool in_block, struct ybuf *out);
/*
 * One node as JSON on one line, appended to out: a quoted scalar of a JSON
 * input as it was, literals where they are ones. -EINVAL for what JSON
 * cannot say (an alias, a key that is no scalar).
 */
int ydoc_json(const struct ystream *s, const struct ynode *n, struct ybuf *out);
/*
 * yamldoc-changes.c: what changed in a tree since it was read, walked
 * once for both of its writers (the text edits, the webhook's JSON Patch):
 *
 *	static int on(void *data, const struct ydoc_change *c) { ...; return 0; }
 *	rc = ydoc_changes(root, on, data); // fn's first nonzero return, or -ELOOP (too deep)
 *
 * Each change comes with its place: the collection, and the key (a
 * mapping's member) or index (a sequence's item, as it is now) of the
 * member or item changed, and so on up to the root, whose place is NULL.
 * New nodes are those made since the tree was read (line 0).
 */
struct ydoc_place {
	const struct ydoc_place *up;
	const struct ynode *coll; /* the collection */
	const struct ynode *key;  /* a mapping's member: its key; NULL: a sequence's item */
	size_t index;		  /* the item's (or the key's) index among coll's items now */
	const struct ynode *node; /* the member's value, or the item */
};

enum ydoc_change_kind {
	YDOC_ADDED,	/* a new item (in a mapping, the key at items[i] and its value) before the item read orig[j] */
	YDOC_REPLACED,	/* a mapping's value, or a sequence's item, put where old was read */
	YDOC_REWRITTEN, /* items read reordered or taken out: no edit says it, coll is new as a whole (at: its own place) */
};

struct ydoc_change {
	enum ydoc_change_kind kind;
	const struct ynode *coll;
	const struct ydoc_place *at; /* the member's or item's place; the collection's own for YDOC_REWRITTEN */
	size_t i, j;		     /* the index among items now, and among items as read */
	const struct ynode *old, *now;
	bool first_added; /* the collection's first YDOC_ADDED */
};

typedef int (*ydoc_change_fn)(void *data, const struct ydoc_change *c);
int ydoc_changes(const struct ynode *root, ydoc_change_fn fn, void *data);

/* Writes one node as a YAML document body (for tests and comparisons). */
int ydoc_emit(const struct ynode *root, struct ybuf *out);

int ybuf_add(struct ybuf *b, const char *p, size_t n);
void ybuf_free(struct ybuf *b);

/* Reading. Each returns NULL for a node of another kind. */
struct ynode *ydoc_get(const struct ynode *map, const char *key);
const char *ydoc_str(const struct ynode *n); /* a scalar's value */
/* Whether n is YAML's null (key:, key: ~, key: null): an empty list or map where one is expected. */
bool ydoc_is_null(const struct ynode *n);
/* A scalar's value, NULL for a null one as for a missing one (restartPolicy: ~ is no policy). */
const char *ydoc_value(const struct ynode *n);
/* "a.b.c": nested mappings; NULL as soon as one is missing. */
struct ynode *ydoc_path(const struct ynode *map, const char *path);

/* Making nodes. Scalars: YDOC_RAW is written as is (true, 65532); YDOC_TEXT
 * is a string, quoted where it would read as something else ("true", "1"). */
enum ydoc_scalar_kind { YDOC_TEXT, YDOC_RAW };
struct ynode *ydoc_scalar(struct ystream *s, const char *value, enum ydoc_scalar_kind k);
struct ynode *ydoc_new_map(struct ystream *s, bool flow);
struct ynode *ydoc_new_seq(struct ystream *s, bool flow);
/* n bytes in s's arena, aligned to align (a power of two, at most 8), freed with the stream; NULL: out of memory. */
void *ydoc_arena_alloc(struct ystream *s, size_t n, size_t align);
/* A copy of n bytes of p, NUL-terminated, in s's arena: freed with the stream. NULL when out of memory. */
char *ydoc_strndup(struct ystream *s, const char *p, size_t n);
/* A deep copy of n into s's arena (a node made for one document, reused). */
struct ynode *ydoc_copy(struct ystream *s, const struct ynode *n);

/* A collection's items kept as its items as read (what a parser does when it ends one). */
int ydoc_keep_items(struct ystream *s, struct ynode *coll);

/* Editing. Each returns 0 or -ENOMEM. */
int ydoc_append(struct ystream *s, struct ynode *coll, struct ynode *item);
int ydoc_insert(struct ystream *s, struct ynode *seq, size_t at, struct ynode *item);
/* Sets key to value: in place when the key exists, else at the front or the end. */
int ydoc_set(struct ystream *s, struct ynode *map, const char *key, struct ynode *value, bool front);
/* A mapping under key, made (block style, at the end) when missing or null; NULL when key holds something else. */
struct ynode *ydoc_want_map(struct ystream *s, struct ynode *map, const char *key);
/* The same for a sequence. */
struct ynode *ydoc_want_seq(struct ystream *s, struct ynode *map, const char *key);

#endif
