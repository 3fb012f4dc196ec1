/*
 * Command lines: one splitter for what /proc/PID/cmdline holds, and one
 * reader of Go programs' flags, so that detection, pre-flight and inject
 * see the same command line the same way.
 *
 *	char *argv[64];
 *	size_t argc = argv_split(buf, len, argv, ARRAY_SIZE(argv));
 *	struct goflag q;
 *	argv_goflag((const char *const *)argv, argc, "quitquitquit", true, &q);
 *	if (!q.on)
 *		... the flag is absent, or set false (--quitquitquit=false) ...
 *
 * No I/O, no allocation: the arguments point into the buffer given.
 */
#ifndef RG_ARGV_H
#define RG_ARGV_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Splits a command line as the kernel gives it (arguments each ended by a
 * NUL) into at most max - 1 arguments, with argv[n] = NULL after them.
 * buf[len] must be a NUL (read_small_* leave one), so that a command line
 * cut short still ends its last argument. Returns n.
 */
size_t argv_split(char *buf, size_t len, char **argv, size_t max);

/* What a Go program's command line says of one of its flags. */
struct goflag {
	bool set;	   /* given at all */
	bool on;	   /* a boolean flag: given and true */
	size_t at;	   /* the argument that gave it last (the last one wins, as in Go) */
	const char *value; /* its value: after '=', or the next argument; NULL for a bare boolean */
};

/*
 * Reads flag name (without dashes) from argv[1..argc) the way Go's flag
 * package and cobra's pflag take it: -name and --name, -name=VALUE, and
 * for a flag that is not boolean also -name VALUE. A boolean's value is
 * read as strconv.ParseBool reads it: --name=false is off, and a value Go
 * refuses (--name=yes) is not on either. Reading stops at "--". argv
 * entries may be NULL (a container whose command the image gives).
 */
void argv_goflag(const char *const *argv, size_t argc, const char *name, bool boolean, struct goflag *f);

/*
 * The words of a shell script (what follows sh -c) as sh reads its simple
 * commands, without expanding anything: split at blanks, quotes ('...',
 * "...", a backslash) removed, and each of ; & | && || ( ) and a newline a
 * word of its own, so that a command ends where its operator is. The
 * words are copied into buf; at most max - 1 of them, words[n] = NULL.
 * Returns n. A script that does not fit is cut short.
 */
size_t argv_script(const char *script, char *buf, size_t buflen, const char **words, size_t max);

/* Whether a word of argv_script is an operator that ends a command. */
bool argv_script_operator(const char *word);

/* Go's strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False. 0 or -EINVAL. */
int argv_gobool(const char *s, bool *out);

#endif
