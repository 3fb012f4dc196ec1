#include "config.h"

#include "presets.h"

#include "log.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * The proxies' documented defaults and command lines (docs/proxies.md); where the
 * facts come from:
 * - pilot-agent's subcommands are proxy (the sidecar), wait, request,
 *   version, istio-iptables, istio-clean-iptables; only "proxy" runs long.
 *   It starts Envoy with its bootstrap under etc/istio/proxy/.
 * - envoy --mode is serve (the default), validate or init_only.
 * - cloud-sql-proxy (v2) has the subcommands wait and shutdown, and -v for
 *   --version; v1 (cloud_sql_proxy, image gce-proxy) has no stop endpoint
 *   and ends cleanly on SIGTERM, so its spec is a signal stop.
 * - daprd has --version and --build-info; vault runs long as "vault agent"
 *   or "vault proxy", while "vault agent generate-config" is a one-shot.
 */
const struct spec_preset spec_presets[] = {
    {
	.name = "istio",
	.match = "pilot-agent|envoy",
	.ready = "http://127.0.0.1:15021/healthz/ready",
	.stop = "http://127.0.0.1:15020/quitquitquit",
	.forms = {{.names = {"pilot-agent"}, .serve = {"proxy"}}, {.names = {"envoy"}, .arg_has = "istio/proxy/"}},
	.oneshot = {"--help", "-h"},
	.containers = {"istio-proxy"},
	.images = {"proxyv2"},
	.mesh = "istio",
	.inject_key = "sidecar.istio.io/inject",
	.inject_on = {"true"},
	.inject_off = "false",
	.first_key = "proxy.istio.io/config",
	.first_word = "holdApplicationUntilProxyStarts",
    },
    {
	.name = "envoy",
	.match = "envoy",
	.ready = "http://127.0.0.1:15000/ready",
	.drain = "http://127.0.0.1:15000/healthcheck/fail",
	.stop = "http://127.0.0.1:15000/quitquitquit",
	.forms = {{.names = {"envoy"}}},
	.oneshot = {"--mode validate", "--mode init_only", "--version", "--help", "-h"},
	.containers = {"envoy"},
	.images = {"envoy", "envoy-distroless"},
    },
    {
	.name = "linkerd",
	.match = "linkerd2-proxy|linkerd-proxy",
	.ready = "http://127.0.0.1:4191/ready",
	.stop = "http://127.0.0.1:4191/shutdown",
	.forms = {{.names = {"linkerd2-proxy", "linkerd-proxy"}}},
	.containers = {"linkerd-proxy"},
	.images = {"linkerd/proxy"},
	.mesh = "linkerd",
	.inject_key = "linkerd.io/inject",
	.inject_on = {"enabled", "ingress"},
	.inject_off = "disabled",
	.fix_key = "config.linkerd.io/proxy-admin-shutdown",
	.fix_value = "enabled",
	.first_key = "config.linkerd.io/proxy-await",
	.first_off = "disabled",
	.first_default = true,
    },
    {
	.name = "cloudsql",
	.match = "cloud-sql-proxy|cloud_sql_proxy",
	.ready = "http://127.0.0.1:9090/startup",
	.stop = "http://127.0.0.1:9091/quitquitquit",
	.forms = {{.names = {"cloud-sql-proxy", "cloud_sql_proxy"}}},
	.oneshot = {"wait", "shutdown", "completion", "help", "--version", "-version", "-v", "--help", "-h"},
	.containers = {"cloud-sql-proxy", "cloudsql-proxy"},
	.images = {"cloud-sql-proxy", "gce-proxy"},
	.image_specs = {NULL, "cloudsql,name=cloudsql-v1,ready=,stop=signal:TERM"},
	.flags = {"--quitquitquit", "--health-check", "--exit-zero-on-sigterm"},
	.flags_image = "cloud-sql-proxy",
    },
    {
	.name = "dapr",
	.match = "daprd",
	.ready = "http://127.0.0.1:3500/v1.0/healthz",
	.stop = "http://127.0.0.1:3500/v1.0/shutdown",
	.forms = {{.names = {"daprd"}}},
	.oneshot = {"--version", "-version", "--build-info", "-build-info", "--help", "-h"},
	.containers = {"daprd"},
	.images = {"daprd"},
	.inject_key = "dapr.io/enabled",
	.inject_on = {"true"},
	.inject_off = "false",
    },
    {
	.name = "vault",
	.match = "vault",
	.stop = "http://127.0.0.1:8200/agent/v1/quit",
	.forms = {{.names = {"vault"}, .serve = {"agent", "proxy"}}},
	.oneshot = {"generate-config", "--help", "-help", "-h"},
	.containers = {"vault-agent"},
	.images = {"vault"},
	.inject_key = "vault.hashicorp.com/agent-inject",
	.inject_on = {"true"},
	.inject_off = "false",
	.none_key = "vault.hashicorp.com/agent-pre-populate-only",
    },
    {
	.name = "consul",
	.match = "consul-dataplane",
	.stop = "http://127.0.0.1:20600/graceful_shutdown",
	.forms = {{.names = {"consul-dataplane"}}},
	.oneshot = {"-version", "--version", "-help", "--help", "-h"},
	.containers = {"consul-dataplane"},
	.images = {"consul-dataplane"},
	.inject_key = "consul.hashicorp.com/connect-inject",
	.inject_on = {"true"},
	.inject_off = "false",
    },
};
const size_t spec_npresets = ARRAY_SIZE(spec_presets);

const struct spec_preset *presets_find(const char *name)
{
	size_t i;

	for (i = 0; i < spec_npresets; i++)
		if (strcmp(spec_presets[i].name, name) == 0)
			return &spec_presets[i];
	return NULL;
}

/* Writes the evidence, when the caller wants it. */
static void say(char *out, size_t len, const char *fmt, ...) RG_PRINTF(3, 4);

static void say(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!out || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

/* comm is cut to 15 bytes by the kernel: "consul-dataplan" is consul-dataplane. */
static bool comm_is(const char *comm, const char *name)
{
	size_t n = strlen(comm);

	if (n == 15)
		return strncmp(comm, name, 15) == 0;
	return strcmp(comm, name) == 0;
}

/* Whether s is in a NULL-ended list of at most max entries. */
static bool listed(const char *const *list, size_t max, const char *s)
{
	size_t i;

	for (i = 0; i < max && list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* Which of form's names this process has; NULL when none. */
static const char *named(const struct preset_form *f, const char *comm, const char *argv0)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f->names) && f->names[i]; i++)
		if ((argv0 && strcmp(argv0, f->names[i]) == 0) || (comm && comm_is(comm, f->names[i])))
			return f->names[i];
	return NULL;
}

/* Whether arg (with the next one, which may be NULL) is the one-shot entry e. */
static bool oneshot_flag(const char *e, const char *arg, const char *next)
{
	const char *space = strchr(e, ' ');
	size_t n = space ? (size_t)(space - e) : strlen(e);

	if (strncmp(arg, e, n) != 0)
		return false;
	if (!space)
		return arg[n] == '\0' || arg[n] == '=';
	if (arg[n] == '=')
		return strcmp(arg + n + 1, space + 1) == 0;
	return arg[n] == '\0' && next && strcmp(next, space + 1) == 0;
}

/*
 * The one-shot entry that argv shows, or NULL. first is the index of the
 * argument that would be a subcommand.
 */
static const char *oneshot_of(const struct spec_preset *p, const char *const *argv, size_t argc, size_t first,
			      size_t *at)
{
	size_t i, k;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		for (k = 0; k < ARRAY_SIZE(p->oneshot) && p->oneshot[k]; k++) {
			const char *e = p->oneshot[k];
			bool hit = e[0] == '-' ? oneshot_flag(e, argv[i], i + 1 < argc ? argv[i + 1] : NULL)
					       : i == first && strcmp(argv[i], e) == 0;

			if (hit) {
				*at = i;
				return e;
			}
		}
	}
	return NULL;
}

/* Whether an argument (not argv[0]) contains needle. */
static bool has_arg_with(const char *const *argv, size_t argc, const char *needle)
{
	size_t i;

	for (i = 1; i < argc; i++)
		if (strstr(argv[i], needle))
			return true;
	return false;
}

/*
 * Whether the process is form f of preset p. Returns 1 (it is), 0 (not
 * this form), -1 (the program, but a one-shot run or no telling: an app);
 * the evidence says which.
 */
static int form_is(const struct spec_preset *p, const struct preset_form *f, const char *comm, const char *const *argv,
		   size_t argc, char *ev, size_t len)
{
	const char *argv0 = argc > 0 && argv[0] ? base_name(argv[0]) : NULL;
	const char *name = named(f, comm, argv0);
	const char *shot;
	size_t first = 1, at = 0;

	if (!name)
		return 0;
	if (argc == 0) {
		if (f->serve[0] || f->arg_has) {
			say(ev, len, "comm=%s without a command line: cannot tell a sidecar from a one-shot run", comm);
			return -1;
		}
		say(ev, len, "comm=%s (no command line)", comm);
		return 1;
	}
	if (f->arg_has && !has_arg_with(argv, argc, f->arg_has))
		return 0;
	if (f->serve[0]) {
		if (argc < 2 || !listed(f->serve, ARRAY_SIZE(f->serve), argv[1])) {
			say(ev, len, "argv[0]=%s, argv[1]=%.48s: not a long-running %s", argv0 ? argv0 : name,
			    argc < 2 ? "(none)" : argv[1], p->name);
			return -1;
		}
		first = 2;
	}
	shot = oneshot_of(p, argv, argc, first, &at);
	if (shot) {
		say(ev, len, "argv[0]=%s, argv[%zu]=%.48s: a one-shot run", argv0 ? argv0 : name, at, argv[at]);
		return -1;
	}
	if (f->serve[0])
		say(ev, len, "argv[0]=%s, argv[1]=%s", argv0 ? argv0 : name, argv[1]);
	else if (f->arg_has)
		say(ev, len, "argv[0]=%s with an argument under %s", argv0 ? argv0 : name, f->arg_has);
	else if (argv0 && strcmp(argv0, name) == 0)
		say(ev, len, "argv[0]=%s", argv0);
	else
		say(ev, len, "comm=%s", comm);
	return 1;
}

const struct spec_preset *presets_detect(const char *comm, const char *const *argv, size_t argc, char *evidence,
					 size_t len)
{
	char why[PRESET_EVIDENCE_MAX] = "";
	size_t i, k;

	say(evidence, len, "%s", "");
	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];

		for (k = 0; k < ARRAY_SIZE(p->forms); k++) {
			char ev[PRESET_EVIDENCE_MAX];
			int rc = form_is(p, &p->forms[k], comm, argv, argc, ev, sizeof(ev));

			if (rc > 0) {
				say(evidence, len, "%s", ev);
				return p;
			}
			/* Keep the first reason to call it an app; a later row may still claim it. */
			if (rc < 0 && why[0] == '\0')
				str_copy(why, ev, sizeof(why));
		}
	}
	say(evidence, len, "%s", why);
	return NULL;
}

bool presets_image_is(const char *image, const char *pattern)
{
	char repo[512];
	const char *slash, *colon, *at = strchr(image, '@');
	size_t n = at ? (size_t)(at - image) : strlen(image), plen = strlen(pattern);

	if (n >= sizeof(repo))
		return false;
	memcpy(repo, image, n);
	repo[n] = '\0';
	/* A tag follows the last ':' after the last '/' (a registry may have a port). */
	slash = strrchr(repo, '/');
	colon = strrchr(repo, ':');
	if (colon && (!slash || colon > slash))
		repo[colon - repo] = '\0';
	n = strlen(repo);
	if (!strchr(pattern, '/')) {
		slash = strrchr(repo, '/');
		return strcmp(slash ? slash + 1 : repo, pattern) == 0;
	}
	return n >= plen && strcmp(repo + n - plen, pattern) == 0 && (n == plen || repo[n - plen - 1] == '/');
}

const struct spec_preset *presets_container(const char *name, const char *image, const char *const *argv, size_t argc,
					    const char **spec)
{
	size_t i, k;

	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];

		for (k = 0; image && k < ARRAY_SIZE(p->images) && p->images[k]; k++) {
			const char *full[64];
			const char *const *av = argv;
			size_t n = argc, j;
			char ev[PRESET_EVIDENCE_MAX];
			const struct spec_preset *found;

			if (!presets_image_is(image, p->images[k]))
				continue;
			/* No command: the image's entrypoint, which is the program itself. */
			if (argc == 0 || !argv[0]) {
				full[0] = p->forms[0].names[0];
				for (j = 1; j < argc && j < ARRAY_SIZE(full); j++)
					full[j] = argv[j];
				n = argc == 0 ? 1 : j;
				av = full;
			}
			found = presets_detect(NULL, av, n, ev, sizeof(ev));
			if (!found && ev[0])
				return NULL; /* a one-shot run of the sidecar's program: an app */
			if (found && found != p) {
				*spec = found->name;
				return found;
			}
			/* The program itself, or a wrapper (sh -c ...) around it: the image says. */
			*spec = p->image_specs[k] ? p->image_specs[k] : p->name;
			return p;
		}
		if (name && listed(p->containers, ARRAY_SIZE(p->containers), name)) {
			*spec = p->name;
			return p;
		}
	}
	return NULL;
}

bool presets_word_true(const char *value, const char *word)
{
	size_t n = strlen(word);
	const char *p = value;

	while ((p = strstr(p, word)) != NULL) {
		p += n;
		if (*p == '"' || *p == '\'')
			p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':')
			continue;
		p++;
		while (*p == ' ' || *p == '\t' || *p == '"' || *p == '\'')
			p++;
		if (strncmp(p, "true", 4) == 0)
			return true;
	}
	return false;
}
