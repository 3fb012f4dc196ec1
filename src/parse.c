#include "config.h"

#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int parse_duration_ms(const char *s, int64_t *out_ms)
{
	static const struct { const char *suffix; int64_t ms; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "", 1000 },
	};
	int64_t whole = 0, frac = 0, frac_div = 1, ms;
	const char *p = s;
	size_t i;

	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		whole = whole * 10 + (*p - '0');
		if (whole > DURATION_MAX_MS)
			return -ERANGE;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div < 1000000000) {
				frac = frac * 10 + (*p - '0');
				frac_div *= 10;
			}
		}
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(p, units[i].suffix) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	if (whole > DURATION_MAX_MS / units[i].ms)
		return -ERANGE;
	ms = whole * units[i].ms + frac * units[i].ms / frac_div;
	if (ms > DURATION_MAX_MS)
		return -ERANGE;
	*out_ms = ms;
	return 0;
}

int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "1", "true", "yes", "on" };
	static const char *const no[] = { "0", "false", "no", "off" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct { const char *name; int sig; } signals[] = {
	{ "TERM", SIGTERM }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "HUP", SIGHUP },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "ABRT", SIGABRT },
	{ "ALRM", SIGALRM }, { "PWR", SIGPWR }, { "WINCH", SIGWINCH }, { "STOP", SIGSTOP },
	{ "CONT", SIGCONT }, { "PIPE", SIGPIPE }, { "SEGV", SIGSEGV }, { "BUS", SIGBUS },
	{ "FPE", SIGFPE }, { "ILL", SIGILL }, { "TRAP", SIGTRAP }, { "SYS", SIGSYS },
	{ "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
	{ "CHLD", SIGCHLD }, { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU }, { "TSTP", SIGTSTP },
	{ "URG", SIGURG }, { "IO", SIGIO }, { "STKFLT", SIGSTKFLT },
};

int parse_signal(const char *s, int *out)
{
	unsigned long num;
	size_t i;

	if (parse_uint(s, 1, 31, &num) == 0) {
		*out = (int)num;
		return 0;
	}
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		if (strcasecmp(s, signals[i].name) == 0) {
			*out = signals[i].sig;
			return 0;
		}
	}
	return -EINVAL;
}

const char *signal_name(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (signals[i].sig == sig)
			return signals[i].name;
	return "?";
}

#define REGEX_SATURATED (PARSE_REGEX_SIZE_MAX + 1UL)
#define STRINGIFY(x) #x
#define NUMBER(x) STRINGIFY(x)

/* Sizes saturate: a pattern only needs to be known to be too big. */
static unsigned long size_add(unsigned long a, unsigned long b)
{
	return a + b > REGEX_SATURATED ? REGEX_SATURATED : a + b;
}

static unsigned long size_mul(unsigned long a, unsigned long b)
{
	return b != 0 && a > REGEX_SATURATED / b ? REGEX_SATURATED : size_add(a * b, 0);
}

/*
 * The interval {n}, {n,}, {,m} or {n,m} after s: the copies it makes and
 * whether it allows none, and where it ends. 0 copies when s is no interval.
 */
static unsigned long interval_copies(const char *s, bool *optional, const char **end)
{
	unsigned long n = 0, m = 0;
	bool comma = false, upper = false;

	for (; isdigit((unsigned char)*s); s++)
		n = size_add(size_mul(n, 10), (unsigned long)(*s - '0'));
	if (*s == ',') {
		comma = true;
		for (s++; isdigit((unsigned char)*s); s++, upper = true)
			m = size_add(size_mul(m, 10), (unsigned long)(*s - '0'));
	}
	if (*s != '}')
		return 0;
	*end = s + 1;
	*optional = n == 0;
	if (comma && !upper)
		return size_add(n, 1); /* {n,} is n copies and a star */
	n = m > n ? m : n;
	return n ? n : 1;
}

/* Where the bracket expression at s ('[') ends, its classes ([:alpha:]) included. */
static const char *bracket_end(const char *s)
{
	const char *p = s + 1, *close;

	if (*p == '^')
		p++;
	if (*p == ']')
		p++;
	while (*p && *p != ']') {
		if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			char end[3] = { p[1], ']', '\0' };

			close = strstr(p + 2, end);
			p = close ? close + 2 : p + 1;
		} else {
			p++;
		}
	}
	return *p ? p + 1 : p;
}

/*
 * What the walk knows of one group (the whole pattern is the outermost):
 * its size so far, and whether what it holds can match the empty string,
 * for the branch being read and for the branches before it.
 */
struct regex_group {
	unsigned long size;
	bool branch_empty;  /* the branch so far can match "" */
	bool before_last;   /* the branch without its last item can */
	bool last_empty;    /* the last item can */
	bool has_last;      /* there is a last item for a repetition to apply to */
	bool others_empty;  /* an earlier branch can */
	unsigned long last; /* the last item's size */
};

/* One more item in g's branch: a character, a bracket expression, a group. */
static void group_item(struct regex_group *g, unsigned long size, bool empty)
{
	g->before_last = g->branch_empty;
	g->branch_empty = g->branch_empty && empty;
	g->last_empty = empty;
	g->has_last = true;
	g->last = size;
	g->size = size_add(g->size, size);
}

/* An empty group matches "" until an item says otherwise. */
static void group_start(struct regex_group *g)
{
	memset(g, 0, sizeof(*g));
	g->branch_empty = g->before_last = true;
}

int parse_regex_check(const char *re, unsigned long *size_out, const char **why)
{
	struct regex_group stack[32], *g = stack;
	bool optional, repeated = false, unmatched = false, nested = false;
	const char *p = re, *end = NULL;
	unsigned long copies;

	*why = NULL;
	group_start(g);
	while (*p) {
		bool repetition = false;

		copies = 1;
		optional = false;
		switch (*p) {
		case '(':
			if (g == stack + sizeof(stack) / sizeof(stack[0]) - 1) {
				nested = true;
				break;
			}
			group_start(++g);
			p++;
			repeated = false;
			continue;
		case ')':
			if (g == stack) {
				unmatched = true;
				break;
			}
			g--;
			group_item(g, size_add(g[1].size, 1), g[1].others_empty || g[1].branch_empty);
			p++;
			repeated = false;
			continue;
		case '|':
			g->others_empty = g->others_empty || g->branch_empty;
			g->branch_empty = g->before_last = true;
			g->has_last = false;
			p++;
			repeated = false;
			continue;
		case '*':
		case '?':
			repetition = optional = true;
			break;
		case '+':
			repetition = true;
			copies = 2; /* a+ is a a* */
			break;
		case '{':
			copies = interval_copies(p + 1, &optional, &end);
			repetition = copies > 0;
			break;
		default:
			break;
		}
		if (nested || unmatched)
			break;
		if (repetition && g->has_last) {
			if (repeated) {
				*why = "two repetitions in a row (POSIX leaves their meaning undefined)";
				break;
			}
			/* (a*)+ and (a?){1,100}: regcomp's closures of what matches nothing grow without bound. */
			if (copies > 1 && g->last_empty) {
				*why = "it repeats a part that can match nothing (as in (a*)+: leave out one of the two)";
				break;
			}
			g->size = size_add(g->size, size_mul(g->last, copies - 1));
			g->last = size_mul(g->last, copies);
			g->last_empty = g->last_empty || optional;
			g->branch_empty = g->before_last && g->last_empty;
			p = *p == '{' ? end : p + 1;
			repeated = true;
			continue;
		}
		repeated = false;
		/* One item: a character, an escape, a bracket expression, an anchor (which matches nothing). */
		if (*p == '[') {
			p = bracket_end(p);
			group_item(g, 1, false);
		} else if (*p == '\\' && p[1]) {
			/* A back reference may stand for a group that matched nothing. */
			group_item(g, 1, p[1] >= '1' && p[1] <= '9');
			p += 2;
		} else {
			group_item(g, 1, *p == '^' || *p == '$');
			p++;
		}
	}
	while (g > stack) {
		g--;
		g->size = size_add(g->size, g[1].size);
	}
	*size_out = g->size;
	if (nested)
		*why = "its parentheses nest too deep";
	else if (unmatched)
		*why = "an unmatched ')' (write \\) for the character)";
	else if (!*why && g->size > PARSE_REGEX_SIZE_MAX)
		*why = "its repetitions multiply past " NUMBER(PARSE_REGEX_SIZE_MAX) " copies";
	return *why ? -EINVAL : 0;
}

void format_duration(int64_t ms, char out[32])
{
	if (ms != 0 && ms % 3600000 == 0)
		snprintf(out, 32, "%lldh", (long long)(ms / 3600000));
	else if (ms != 0 && ms % 60000 == 0)
		snprintf(out, 32, "%lldm", (long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(out, 32, "%llds", (long long)(ms / 1000));
	else
		snprintf(out, 32, "%lldms", (long long)ms);
}
