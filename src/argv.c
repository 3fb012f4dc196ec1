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
