/*
 * Parsers for the values users type: durations, counts, booleans, signal
 * names. Each returns 0 and stores the result, or -EINVAL / -ERANGE and
 * leaves the output alone; parse_error() turns that into words.
 */
#ifndef RG_PARSE_H
#define RG_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/* Longest duration accepted: 30 days. Longer is almost surely a typo. */
#define DURATION_MAX_MS (INT64_C(30) * 24 * 3600 * 1000)

/*
 * "250ms", "30s", "5m", "1h", "1.5s"; a bare number is seconds. Fractions
 * finer than a millisecond are rounded down. Negative values are refused.
 */
int parse_duration_ms(const char *s, int64_t *out_ms);

/* A decimal integer in [min, max], no sign, no trailing garbage. */
int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out);

/* 1/0, true/false, yes/no, on/off (any case). */
int parse_bool(const char *s, bool *out);

/* TERM, SIGTERM, sigterm or 15 (1 to 31): any signal by name or number; which ones may stop a sidecar is spec.c's to say. */
int parse_signal(const char *s, int *out);
/* "TERM" for SIGTERM; "?" for an unknown number. */
const char *signal_name(int sig);

/*
 * Checks a POSIX extended regex for what regcomp accepts but rearguard
 * cannot afford or use, before regcomp sees it:
 * - repetitions that multiply: regcomp writes every repetition out (a{100}
 *   is 100 copies of a, a+ is a a*), so a short pattern like a{999}{999}
 *   takes seconds and gigabytes, and optional copies (a{1,3000}) cost the
 *   square of their number. *size is about the copies it would make
 *   (saturating just above PARSE_REGEX_SIZE_MAX; a name's a{1,255} is 255);
 * - a repetition of what can match nothing ((a*)+, (a?){1,60}), whose
 *   closures grow without bound, and two repetitions in a row (a+*), which
 *   POSIX leaves undefined;
 * - an unmatched ')', which glibc takes for a character but which would
 *   close the group a whole-name match wraps the pattern in.
 * Returns 0, or -EINVAL with why.
 */
#define PARSE_REGEX_SIZE_MAX 1000
int parse_regex_check(const char *re, unsigned long *size, const char **why);

/* Formats ms as the shortest exact duration ("250ms", "30s", "5m", "1h"). */
void format_duration(int64_t ms, char out[32]);

#endif
