#include "config.h"

#include "argv.h"

#include <errno.h>
#include <string.h>

size_t argv_split(char *buf, size_t len, char **argv, size_t max)
{
	size_t n = 0, i = 0;

	if (max == 0)
		return 0;
	while (i < len && n < max - 1) {
		char *end = memchr(buf + i, '\0', len - i);

		argv[n++] = buf + i;
		if (!end)
			break; /* cut short: buf[len] ends it */
		i = (size_t)(end - buf) + 1;
	}
	argv[n] = NULL;
	return n;
}

/* One word into buf at *used; false when buf is full. */
static bool script_word(const char *start, size_t len, char *buf, size_t buflen, size_t *used, const char **words,
			size_t *n, size_t max)
{
	if (*n + 1 >= max || *used + len + 1 > buflen)
		return false;
	memcpy(buf + *used, start, len);
	buf[*used + len] = '\0';
	words[(*n)++] = buf + *used;
	*used += len + 1;
	return true;
}

size_t argv_script(const char *script, char *buf, size_t buflen, const char **words, size_t max)
{
	size_t n = 0, used = 0, wlen;
	const char *p = script;
	char word[1024];
	bool in_word;

	if (max == 0)
		return 0;
	while (*p) {
		if (*p == ' ' || *p == '\t') {
			p++;
			continue;
		}
		if (strchr(";&|()\n", *p)) {
			size_t len = (p[0] == '&' || p[0] == '|') && p[1] == p[0] ? 2 : 1;

			if (!script_word(p, len, buf, buflen, &used, words, &n, max))
				break;
			p += len;
			continue;
		}
		/* A word: up to a blank or an operator outside quotes. */
		for (wlen = 0, in_word = true; *p && in_word;) {
			char q = *p;

			if (q == '\'' || q == '"') {
				for (p++; *p && *p != q; p++) {
					if (q == '"' && *p == '\\' && p[1])
						p++;
					if (wlen + 1 < sizeof(word))
						word[wlen++] = *p;
				}
				p += *p == q;
			} else if (q == '\\' && p[1]) {
				if (wlen + 1 < sizeof(word))
					word[wlen++] = p[1];
				p += 2;
			} else if (q == ' ' || q == '\t' || strchr(";&|()\n", q)) {
				in_word = false;
			} else {
				if (wlen + 1 < sizeof(word))
					word[wlen++] = q;
				p++;
			}
		}
		if (!script_word(word, wlen, buf, buflen, &used, words, &n, max))
			break;
	}
	words[n] = NULL;
	return n;
}

bool argv_script_operator(const char *word)
{
	static const char *const ops[] = {";", "&", "|", "&&", "||", "(", ")", "\n"};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(word, ops[i]) == 0)
			return true;
	return false;
}

int argv_gobool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

void argv_goflag(const char *const *argv, size_t argc, const char *name, bool boolean, struct goflag *f)
{
	size_t i, n = strlen(name);

	memset(f, 0, sizeof(*f));
	f->at = argc;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!a || a[0] != '-')
			continue;
		if (strcmp(a, "--") == 0)
			break;
		a += a[1] == '-' ? 2 : 1;
		if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
			continue;
		f->set = true;
		f->at = i;
		if (a[n] == '=') {
			bool v = false;

			f->value = a + n + 1;
			f->on = boolean && argv_gobool(f->value, &v) == 0 && v;
		} else if (boolean) {
			f->value = NULL;
			f->on = true;
		} else {
			/* -name VALUE: the next argument is the value, whatever it looks like. */
			f->value = i + 1 < argc ? argv[i + 1] : NULL;
			f->on = false;
			if (i + 1 < argc)
				i++;
		}
	}
}
