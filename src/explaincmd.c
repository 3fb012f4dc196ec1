/*
 * rearguard explain, the subcommand (and kubectl rearguard explain): its
 * options (options.c's table), the inputs it reads whole, and the report,
 * written only once every input was read and judged: a bad input is one
 * line on standard error with its place, and nothing on standard output.
 * The work is explain.c's; the words are explain-out.c's.
 */
#include "config.h"

#include "commands.h"
#include "explain.h"

#include "json.h"
#include "options.h"
#include "util.h"
#include "yamldoc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int explain_input(struct explain_report *r, const char *path);

#define DIR_DEPTH_MAX 16

/* Whether a file's name is a manifest's: .json, .yaml, .yml, not hidden. */
static bool manifest_name(const char *name)
{
	size_t n = strlen(name);

	return name[0] != '.' && ((n > 5 && (strcmp(name + n - 5, ".json") == 0 || strcmp(name + n - 5, ".yaml") == 0)) ||
				  (n > 4 && strcmp(name + n - 4, ".yml") == 0));
}

static int by_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The manifests of a directory and its subdirectories, into *paths (each
 * allocated): what a must-gather dump holds (namespaces/NS/core/pods.yaml,
 * ...). Symbolic links are not followed. 0, or -errno.
 */
static int gather(const char *dir, int depth, char ***paths, size_t *n, size_t *cap)
{
	DIR *d;
	struct dirent *e;
	struct stat st;
	char *path;
	int rc = 0;

	if (depth > DIR_DEPTH_MAX)
		return -ELOOP;
	d = opendir(dir);
	if (!d)
		return -errno;
	while (rc == 0 && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
			rc = -ENOMEM;
			break;
		}
		if (lstat(path, &st) < 0) {
			rc = -errno;
		} else if (S_ISDIR(st.st_mode)) {
			rc = gather(path, depth + 1, paths, n, cap);
		} else if (S_ISREG(st.st_mode) && manifest_name(e->d_name)) {
			char **grown = *n == *cap ? realloc(*paths, (*cap = *cap ? *cap * 2 : 64) * sizeof(**paths)) : *paths;

			if (!grown) {
				rc = -ENOMEM;
			} else {
				*paths = grown;
				(*paths)[(*n)++] = path;
				continue;
			}
		}
		free(path);
	}
	closedir(d);
	return rc;
}

/* A directory's manifests (a must-gather dump), in the order of their paths: each an input. */
static int explain_dir(struct explain_report *r, const char *dir)
{
	char **paths = NULL;
	size_t n = 0, cap = 0, i;
	int rc = gather(dir, 0, &paths, &n, &cap), status = 0;

	if (rc < 0)
		fprintf(stderr, "rearguard: explain: %s: %s\n", dir, strerror(-rc));
	else if (n == 0)
		fprintf(stderr, "rearguard: explain: %s holds no .json, .yaml or .yml file\n", dir);
	if (rc < 0 || n == 0)
		status = 2;
	if (n > 1)
		qsort(paths, n, sizeof(*paths), by_path);
	for (i = 0; i < n && status == 0; i++)
		status = explain_input(r, paths[i]);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return status;
}

/* One input, judged into the report; 0, or the exit status after one line on stderr. */
static int explain_input(struct explain_report *r, const char *path)
{
	const char *shown = strcmp(path, "-") == 0 ? "<stdin>" : path;
	int fd = STDIN_FILENO, rc;
	char err[512], *in = NULL;
	struct stat st;
	size_t len = 0;

	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "rearguard: explain: cannot open %s: %s\n", path, strerror(errno));
			return 2;
		}
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			close(fd);
			return explain_dir(r, path);
		}
	}
	rc = read_whole_fd(fd, YDOC_MAX_INPUT, &in, &len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (rc < 0) {
		fprintf(stderr, "rearguard: explain: %s: %s\n", shown,
			rc == -EFBIG ? "larger than 256 MiB" : strerror(-rc));
		return 2;
	}
	rc = explain_buffer(r, in, len, err, sizeof(err));
	free(in);
	if (rc < 0) {
		fprintf(stderr, "rearguard: explain: %s:%s\n", shown, err);
		return 2;
	}
	return 0;
}

int explain_main(struct explain_cli *cli)
{
	struct explain_report r;
	char dash[] = "-", *stdin_only[] = {dash};
	struct ybuf out = {0};
	struct jbuf j;
	char **inputs;
	int n, i, status = 0, rc;

	inputs = cli->ninputs > 0 ? cli->inputs : stdin_only;
	n = cli->ninputs > 0 ? cli->ninputs : 1;
	explain_report_init(&r, &cli->explain);
	for (i = 0; i < n && status == 0; i++)
		status = explain_input(&r, inputs[i]);
	if (status == 0 && explain_finish(&r) < 0)
		status = 2;
	if (status != 0) {
		explain_report_free(&r);
		return status;
	}
	if (cli->explain.json) {
		jbuf_init(&j);
		explain_json(&r, &j);
		rc = j.failed ? -ENOMEM : write_all(STDOUT_FILENO, j.buf, j.len);
		jbuf_free(&j);
	} else {
		rc = explain_text(&r, &out);
		if (rc == 0)
			rc = write_all(STDOUT_FILENO, out.p ? out.p : "", out.len);
		ybuf_free(&out);
	}
	status = explain_status(&r);
	explain_report_free(&r);
	if (rc < 0) {
		fprintf(stderr, "rearguard: explain: cannot write the report: %s\n", strerror(-rc));
		return 2;
	}
	return status;
}
