/*
 * A JSON writer for the few objects rearguard prints: log lines in
 * --log-format json and the summary. Commas are placed automatically: a
 * value or key written right after '{' or '[' gets none, others get one.
 *
 *	struct jbuf j;
 *	jbuf_init(&j);
 *	jbuf_begin(&j, '{');
 *	jbuf_key(&j, "exit"); jbuf_int(&j, 0);
 *	jbuf_end(&j, '}');
 *	... j.buf ... jbuf_free(&j);
 *
 * Out of memory makes the buffer sticky-failed (j.failed); the content is
 * then whatever fitted, never invalid memory. Strings may hold any bytes
 * (process names, paths): what is not UTF-8 is written as U+FFFD.
 */
#ifndef RG_JSON_H
#define RG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jbuf {
	char *buf;
	size_t len, cap;
	bool fixed;  /* buf is the caller's; never reallocated */
	bool failed; /* out of memory, or a fixed buffer was too small */
	bool pending_key; /* a key was just written: the next value needs no comma */
};

void jbuf_init(struct jbuf *j);
/* Writes into the caller's buffer of cap bytes (cap > 0), truncating. */
void jbuf_init_fixed(struct jbuf *j, char *buf, size_t cap);
void jbuf_free(struct jbuf *j);

void jbuf_begin(struct jbuf *j, char open);
void jbuf_end(struct jbuf *j, char close);
void jbuf_key(struct jbuf *j, const char *key);
void jbuf_str(struct jbuf *j, const char *s);
void jbuf_strn(struct jbuf *j, const char *s, size_t n);
void jbuf_int(struct jbuf *j, long long v);
void jbuf_bool(struct jbuf *j, bool v);
void jbuf_null(struct jbuf *j);
/* A duration in microseconds, written as milliseconds with 3 decimals. */
void jbuf_duration(struct jbuf *j, int64_t us);
/* Already-encoded JSON (an object built elsewhere) as a value. */
void jbuf_raw_value(struct jbuf *j, const char *json);
/* Bytes appended as they are: no comma, no quoting. */
void jbuf_append(struct jbuf *j, const char *s, size_t n);

/*
 * Appends s as a JSON string body (no quotes) to j: escapes ", \ and
 * controls, and writes each byte that does not belong to well-formed UTF-8
 * as \ufffd, so that the output is valid JSON whatever s holds.
 */
void jbuf_escaped(struct jbuf *j, const char *s, size_t n);
/* Already-encoded JSON of n bytes as a value. */
void jbuf_raw_valuen(struct jbuf *j, const char *json, size_t n);

/*
 * Finds the value of member key in the JSON object that text (len bytes)
 * holds, at its top level only: stores where the value starts and how long
 * it is. -ENOENT when there is no such member, -EINVAL when text is not a
 * well-formed object (as far as the scan went). Escapes in keys are not
 * decoded: key matches a member written without any.
 */
int json_member(const char *text, size_t len, const char *key, size_t *off, size_t *vlen);

/*
 * Where the string that starts at s[i] (its opening '"') ends: the index
 * just past its closing quote, escapes skipped; 0 when it does not end
 * within len bytes, or holds a raw control character.
 */
size_t json_skip_string(const char *s, size_t len, size_t i);

#endif
