/*
 * rearguard inject, the subcommand: its options, the files and directories
 * it reads (as kubectl -f takes them), the notes and the summary on
 * standard error, and the output, written only once every input was read
 * and injected. The work itself is inject_buffer's (inject.c).
 */
#include "config.h"

#include "inject.h"

#include "log.h"
#include "parse.h"
#include "presets.h"
#include "util.h"
#include "yamldoc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

/* The whole input, bounded: the output is built from all of it before anything is written. */
static int read_all(int fd, char **buf, size_t *len)
{
	struct ybuf b = {0};
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			ybuf_free(&b);
			return -e;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > YDOC_MAX_INPUT) {
			ybuf_free(&b);
			return -EFBIG;
		}
		if (ybuf_add(&b, chunk, (size_t)n) < 0) {
			ybuf_free(&b);
			return -ENOMEM;
		}
	}
	if (!b.p && ybuf_add(&b, "", 0) < 0)
		return -ENOMEM;
	*buf = b.p;
	*len = b.len;
	return 0;
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

/* rearguard inject --help. */
static void inject_help(void)
{
	char meshes[64];

	presets_mesh_words("|", meshes, sizeof(meshes));
	printf("Usage: rearguard inject [OPTIONS] [FILE|DIR|-]...\n"
	       "\n"
	       "Writes the Kubernetes YAML or JSON of each FILE (each .yaml, .yml and .json\n"
	       "file of a DIR, in name order; standard input for - or none) to standard\n"
	       "output with rearguard added to every Job, CronJob and Pod whose template\n"
	       "shows a known sidecar: shareProcessNamespace: true, the emptyDir, the agent\n"
	       "container first (uid 65532, read-only root, no capabilities, the runtime's\n"
	       "seccomp profile, small requests) with REARGUARD_APPS,\n"
	       "REARGUARD_RESTART_POLICY and REARGUARD_SIDECARS from the template, the\n"
	       "fixes its sidecars need, and kubectl's default-container annotations naming\n"
	       "the first app. Everything else passes through; comments in the documents\n"
	       "it changes are not kept. Reads a YAML stream, a v1 List, or a KRM\n"
	       "ResourceList (kustomize and kpt functions).\n"
	       "\n"
	       "  --image IMAGE         the agent's image (default %s)\n"
	       "                                                       [REARGUARD_IMAGE]\n"
	       "  --mesh %-13s  the namespace injects this mesh's proxy into every pod\n"
	       "                                                       [REARGUARD_MESH]\n"
	       "  --gate                start the apps only once the sidecars are ready (a\n"
	       "                        postStart hook on the agent)   [REARGUARD_GATE=true]\n"
	       "  --signal-as-root      where a sidecar stopped by a signal may run as root or\n"
	       "                        another uid, run the agent as root with only the KILL\n"
	       "                        capability (Pod Security baseline, not restricted)\n"
	       "                                              [REARGUARD_SIGNAL_AS_ROOT=true]\n"
	       "  --sidecar CONTAINER[=SPEC]\n"
	       "                        the container CONTAINER is a sidecar, whatever it runs:\n"
	       "                        SPEC is a preset, a stop (signal:TERM, the default, or\n"
	       "                        a URL) or a whole spec; repeatable. The pod template's\n"
	       "                        annotation " INJECT_SIDECARS " does the same.\n"
	       "  -q, --quiet           warnings only, no summary\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Notes on standard error: one line for each Job, CronJob and Pod, changed or\n"
	       "left alone and why, warnings to act on, and a summary line.\n"
	       "\n"
	       "Exit status: 0 written; 2 bad usage or malformed YAML (nothing is written\n"
	       "then); 1 a read or write error. See docs/inject.md.\n",
	       INJECT_DEFAULT_IMAGE, meshes);
}

/* A flag or environment value checked and stored; what names it in the error. */
static int set_flag_option(struct inject_options *o, int id, const char *v, const char *what, enum inject_origin from)
{
	char err[512];
	bool on;

	switch (id) {
	case 'i':
		if (!*v)
			return usage("%s needs a value", what);
		o->image = v;
		o->image_from = from;
		return 0;
	case 'm':
		if (!presets_mesh(v)) {
			presets_mesh_words(" or ", err, sizeof(err));
			return usage("%s: \"%s\" is not %s", what, v, err);
		}
		o->mesh = v;
		o->mesh_from = from;
		return 0;
	case 's':
		if (o->nnamed == INJECT_MAX_NAMED)
			return usage("more than %d --sidecar options", INJECT_MAX_NAMED);
		if (inject_check_named(v, err, sizeof(err)) < 0)
			return usage("%s", err);
		o->named[o->nnamed++] = v;
		return 0;
	default: /* 'g', 'r': the booleans' environment twins */
		if (parse_bool(v, &on) < 0)
			return usage("%s: \"%s\" is not true or false", what, v);
		*(id == 'r' ? &o->signal_as_root : &o->gate) = on;
		*(id == 'r' ? &o->signal_as_root_from : &o->gate_from) = from;
		return 0;
	}
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
	rc = read_all(fd, in, len);
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

int inject_main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"image", required_argument, NULL, 'i'},
	    {"mesh", required_argument, NULL, 'm'},
	    {"gate", no_argument, NULL, 'g'},
	    {"signal-as-root", no_argument, NULL, 'r'},
	    {"sidecar", required_argument, NULL, 's'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct inject_options o = {0};
	struct inject_counts counts = {0};
	struct notes notes = {0};
	struct ybuf all = {0};
	char dash_arg[] = "-", *dash[] = {dash_arg}, *inputs[MAX_INPUTS];
	const char *v;
	char err[1024];
	size_t n = 0, i;
	int c, rc, status = 0;

	if ((v = getenv("REARGUARD_IMAGE")) && *v && set_flag_option(&o, 'i', v, "REARGUARD_IMAGE", INJECT_ENV))
		return 2;
	if ((v = getenv("REARGUARD_MESH")) && *v && set_flag_option(&o, 'm', v, "REARGUARD_MESH", INJECT_ENV))
		return 2;
	if ((v = getenv("REARGUARD_GATE")) && *v && set_flag_option(&o, 'g', v, "REARGUARD_GATE", INJECT_ENV))
		return 2;
	if ((v = getenv("REARGUARD_SIGNAL_AS_ROOT")) && *v &&
	    set_flag_option(&o, 'r', v, "REARGUARD_SIGNAL_AS_ROOT", INJECT_ENV))
		return 2;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hq", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			inject_help();
			return 0;
		case 'q':
			notes.quiet = true;
			break;
		case 'g':
			o.gate = true;
			o.gate_from = INJECT_FLAG;
			break;
		case 'r':
			o.signal_as_root = true;
			o.signal_as_root_from = INJECT_FLAG;
			break;
		case 'i':
		case 'm':
		case 's':
			if (set_flag_option(&o, c, optarg,
					    c == 'i'   ? "--image"
					    : c == 'm' ? "--mesh"
						       : "--sidecar",
					    INJECT_FLAG))
				return 2;
			break;
		case ':':
			return usage("option %s needs a value", argv[optind - 1 < argc ? optind - 1 : argc - 1]);
		default:
			return usage("unknown option %s (see rearguard inject --help)",
				     optopt ? (char[]){'-', (char)optopt, 0} : argv[optind - 1]);
		}
	}
	rc = optind < argc ? expand(argv + optind, argc - optind, inputs, &n) : expand(dash, 1, inputs, &n);
	if (rc < 0) {
		for (i = 0; i < n; i++)
			free(inputs[i]);
		usage("%s", rc == -E2BIG ? "more than 4096 inputs" : strerror(-rc));
		return 1;
	}
	o.note = print_note;
	o.note_data = &notes;
	o.counts = &counts;
	for (i = 0; i < n; i++) {
		char *in = NULL, *out = NULL;
		size_t len = 0, outlen = 0;

		notes.shown = strcmp(inputs[i], "-") == 0 ? "<stdin>" : inputs[i];
		rc = read_input(inputs[i], &in, &len);
		if (rc != 0) {
			status = status == 2 ? 2 : rc;
			continue;
		}
		rc = inject_buffer(in, len, &o, &out, &outlen, err, sizeof(err));
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
