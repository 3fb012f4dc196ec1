/*
 * rearguard inject, the subcommand: its options (read by options.c, from
 * the one table of every command's options), the files and directories it
 * reads (as kubectl -f takes them), the notes and the summary on standard
 * error, and the output, written only once every input was read and
 * injected. The work itself is inject_buffer's (inject.c).
 */
#include "config.h"

#include "commands.h"
#include "inject.h"

#include "log.h"
#include "options.h"
#include "util.h"
#include "yamldoc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_INPUTS 4096

/* Where notes go: the input's name for each line, and whether only warnings are wanted. */
struct notes {
	const char *shown;
	bool quiet;
};

static void print_note(const void *data, bool warning, const char *line)
{
	const struct notes *n = data;

	if (warning || !n->quiet)
		fprintf(stderr, "rearguard: inject: %s:%s\n", n->shown, line);
}

/* A one-line error of the subcommand; returns the exit status 2. */
static int usage(const char *fmt, ...) RG_PRINTF(1, 2);

static int usage(const char *fmt, ...)
{
	va_list ap;

	fputs("rearguard: inject: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* Whether a directory entry is a manifest kubectl -f would read. */
static bool manifest_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' &&
	       ((n > 5 && strcmp(name + n - 5, ".yaml") == 0) || (n > 4 && strcmp(name + n - 4, ".yml") == 0) ||
		(n > 5 && strcmp(name + n - 5, ".json") == 0));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The inputs the arguments name, in order: "-" as it is, a directory's
 * manifests sorted by name (not its subdirectories, as kubectl -f without
 * -R), anything else as a file. Each is allocated; *n counts them.
 */
static int expand(char **args, int nargs, char **inputs, size_t *n)
{
	int i;

	*n = 0;
	for (i = 0; i < nargs; i++) {
		struct stat st;
		DIR *d;
		struct dirent *e;
		size_t first = *n;

		if (strcmp(args[i], "-") == 0 || stat(args[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
			if (*n == MAX_INPUTS || !(inputs[(*n)++] = strdup(args[i])))
				return *n == MAX_INPUTS ? -E2BIG : -ENOMEM;
			continue;
		}
		d = opendir(args[i]);
		if (!d)
			return -errno;
		while ((e = readdir(d)) != NULL) {
			char path[4096];

			if (!manifest_name(e->d_name))
				continue;
			snprintf(path, sizeof(path), "%s%s%s", args[i], args[i][strlen(args[i]) - 1] == '/' ? "" : "/",
				 e->d_name);
			if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			if (*n == MAX_INPUTS || !(inputs[(*n)++] = strdup(path))) {
				closedir(d);
				return *n == MAX_INPUTS ? -E2BIG : -ENOMEM;
			}
		}
		closedir(d);
		qsort(inputs + first, *n - first, sizeof(inputs[0]), by_name);
	}
	return 0;
}

/* Reads one input whole; 0, or the exit status after saying why not. */
static int read_input(const char *path, char **in, size_t *len)
{
	const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
	int fd = STDIN_FILENO, rc;

	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			usage("cannot open %s: %s", path, strerror(errno));
			return 1;
		}
	}
	/* The whole input, bounded: the output is built from all of it before anything is written. */
	rc = read_whole_fd(fd, YDOC_MAX_INPUT, in, len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc == -EFBIG)
		return usage("%s: larger than %zu MiB", shown, YDOC_MAX_INPUT >> 20);
	if (rc < 0) {
		usage("cannot read %s: %s", shown, strerror(-rc));
		return 1;
	}
	return 0;
}

/*
 * Appends one input's output to the stream: documents of two inputs are
 * kept apart by a "---" line, with the line ending the next one uses.
 */
static int append_output(struct ybuf *all, const char *out, size_t len)
{
	const char *nl = memchr(out, '\n', len);
	bool crlf = nl && nl > out && nl[-1] == '\r';
	int rc = 0;

	if (len == 0)
		return 0;
	if (all->len > 0 && all->p[all->len - 1] != '\n')
		rc = ybuf_add(all, crlf ? "\r\n" : "\n", crlf ? 2 : 1);
	if (rc == 0 && all->len > 0 && !(len >= 3 && memcmp(out, "---", 3) == 0))
		rc = ybuf_add(all, crlf ? "---\r\n" : "---\n", crlf ? 5 : 4);
	return rc ? rc : ybuf_add(all, out, len);
}

int inject_main(struct inject_cli *cli)
{
	struct inject_counts counts = {0};
	struct notes notes = {0};
	struct ybuf all = {0};
	char dash_arg[] = "-", *dash[] = {dash_arg}, *inputs[MAX_INPUTS];
	char err[1024];
	struct inject_options *o = &cli->inject;
	size_t n = 0, i;
	int rc, status = 0;

	notes.quiet = cli->quiet;
	rc = cli->ninputs > 0 ? expand(cli->inputs, cli->ninputs, inputs, &n) : expand(dash, 1, inputs, &n);
	if (rc < 0) {
		for (i = 0; i < n; i++)
			free(inputs[i]);
		usage("%s", rc == -E2BIG ? "more than 4096 inputs" : strerror(-rc));
		return 1;
	}
	o->note = print_note;
	o->note_data = &notes;
	o->counts = &counts;
	for (i = 0; i < n; i++) {
		char *in = NULL, *out = NULL;
		size_t len = 0, outlen = 0;

		notes.shown = strcmp(inputs[i], "-") == 0 ? "<stdin>" : inputs[i];
		rc = read_input(inputs[i], &in, &len);
		if (rc != 0) {
			status = status == 2 ? 2 : rc;
			continue;
		}
		rc = inject_buffer(in, len, o, &out, &outlen, err, sizeof(err));
		free(in);
		if (rc < 0) {
			usage("%s:%s", notes.shown, err);
			status = rc == -ENOMEM && status != 2 ? 1 : 2;
			continue;
		}
		if (append_output(&all, out, outlen) < 0)
			status = 1;
		free(out);
	}
	for (i = 0; i < n; i++)
		free(inputs[i]);
	if (counts.placeholder && status == 0) {
		counts.warnings++;
		fprintf(stderr,
			"rearguard: inject: warning: the agent's image is the placeholder %s: set --image to the image "
			"built from container/Dockerfile\n",
			INJECT_DEFAULT_IMAGE);
	}
	if (status != 0) {
		/* The error is the last line: nothing was written, no summary of what was not. */
		ybuf_free(&all);
		return status;
	}
	if (!notes.quiet)
		fprintf(stderr, "rearguard: inject: %zu changed, %zu left unchanged, %zu warning%s\n", counts.changed,
			counts.left, counts.warnings, counts.warnings == 1 ? "" : "s");
	/* The output was built whole: a bad document never leaves half a stream behind. */
	rc = write_all(STDOUT_FILENO, all.p ? all.p : "", all.len);
	ybuf_free(&all);
	if (rc < 0) {
		usage("cannot write the output: %s", strerror(-rc));
		return 1;
	}
	return 0;
}
