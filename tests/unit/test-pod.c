/*
 * The pod as the engine follows it, on a fake /proc whose pids are real
 * children (tests/unit/fakepod.h): what it tells decide, and when, by the
 * test's clock.
 */
#include "config.h"

#include "decide.h"
#include "log.h"
#include "options.h"
#include "pod.h"
#include "spec.h"
#include "tap.h"

#include "fakepod.h"

#include <dirent.h>
#include <ev.h>
#include <limits.h>
#include <fcntl.h>

#define S US_PER_S

static struct ev_loop *loop;

/* What the pod told, in order. */
static struct told {
	struct decide_event ev;
	char name[DECIDE_NAME_MAX];
	int64_t when;
} told[256];
static size_t ntold;
static unsigned sidecar_calls;

static void on_event(void *data, const struct decide_event *ev, int64_t when)
{
	struct told *t;

	if (ntold == ARRAY_SIZE(told))
		bail_out("too many events");
	t = &told[ntold++];
	t->ev = *ev;
	t->when = when;
	snprintf(t->name, sizeof(t->name), "%s", ev->name ? ev->name : "");
	t->ev.name = t->name;
}

static void on_sidecar(void *data, size_t k, const struct podscan_container *c)
{
	sidecar_calls++;
}

/* The last event of kind about id (or any id: 0), or NULL. */
static const struct told *find(enum decide_event_kind kind, unsigned id)
{
	size_t i;

	for (i = ntold; i-- > 0;)
		if (told[i].ev.kind == kind && (!id || told[i].ev.id == id))
			return &told[i];
	return NULL;
}

/* Turns the loop until an event of kind about id comes. */
static const struct told *await_event(enum decide_event_kind kind, unsigned id)
{
	FAKE_RUN_UNTIL(loop, find(kind, id));
	return find(kind, id);
}

/* Whether the pod told an exit code of kind about id: it asks the kernel, as decide would have it ask. */
static const struct told *status_told(struct pod *p, enum decide_event_kind kind, unsigned id)
{
	pod_statuses(p);
	return find(kind, id);
}

/* The id of the container whose root is pid (never 0, which find takes for any). */
static unsigned id_of(pid_t pid, struct pod *p)
{
	return fake_container_of(p, pid)->id;
}

/* The natives decide knows of: the kubelet restarts the one named so. */
static const char *restarted_name;

static bool native_restarted(void *data, const char *name, int64_t since)
{
	return restarted_name && strcmp(name, restarted_name) == 0;
}

/* What the last event of kind about id was told as (a NATIVE_SEEN's by), -1: none. */
static int native_by(unsigned id)
{
	const struct told *t = find(DECIDE_EV_NATIVE_SEEN, id);

	return t ? (int)t->ev.by : -1;
}

/* A pid above every pid of a process: the kernel hands out pids below pid_max. */
static pid_t above_every_pid(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	long max = 0;

	if (!f || fscanf(f, "%ld", &max) != 1 || max <= 1 || max > INT_MAX)
		bail_out("cannot read /proc/sys/kernel/pid_max");
	fclose(f);
	return (pid_t)max;
}

/* Gives pid the kubelet's termination-message mount of a container called name. */
static void kubelet_mount(pid_t pid, const char *name)
{
	char mi[512];

	snprintf(mi, sizeof(mi),
		 "300 200 0:55 / / rw - overlay overlay rw\n"
		 "310 300 8:1 /var/lib/kubelet/pods/0f1e-uid/containers/%s/8f1a497a /dev/termination-log rw - ext4 x rw\n",
		 name);
	fake_put(pid, "mountinfo", mi, strlen(mi));
}

/*
 * Containers known by their names in the pod: a spec with container= takes
 * the container of that name whatever it runs, and no other container,
 * whatever that one runs; apps are told by that name. Without the
 * kubelet's mount, the program says, as before.
 */
static void known_by_name(void)
{
	struct sidecar_spec specs[2];
	struct pod_config cfg;
	const struct told *t;
	struct pod pod;
	int app_rel, shipper_rel, web_rel, other_rel;
	pid_t app, shipper, web, other;

	fake_spec(&specs[0], "name=shipper,container=shipper,match=sh,stop=signal:TERM");
	fake_spec(&specs[1], "name=web,container=web,match=sh");
	fake_pod_base();
	/* The agent's own container has its name: every container's can be seen. */
	kubelet_mount(getpid(), "rearguard");
	app = fake_child(CHILD_WAITS, &app_rel);
	fake_proc(app, 0, "sh", CG("/app"), "/bin/sh");
	kubelet_mount(app, "report");
	shipper = fake_child(CHILD_WAITS, &shipper_rel);
	fake_proc(shipper, 0, "sh", CG("/shipper"), "/bin/sh");
	kubelet_mount(shipper, "shipper");
	/* sh -c 'exec busybox httpd': it runs busybox now. */
	web = fake_child(CHILD_WAITS, &web_rel);
	fake_proc(web, 0, "busybox", CG("/web"), "/bin/busybox");
	kubelet_mount(web, "web");
	/* No mount: it exited before its mounts could be read (the fake has none). */
	other = fake_child(CHILD_WAITS, &other_rel);
	fake_proc(other, 0, "sh", CG("/other"), "/bin/sh");

	fake_pod_config(&cfg, loop, specs);
	cfg.nsidecars = 2;
	cfg.apps = true;
	cfg.on_event = on_event;
	ntold = 0;
	is_int(pod_open(&pod, &cfg), 0, "by name: the first scan");
	pod_follow(&pod);
	t = find(DECIDE_EV_APP_SEEN, id_of(app, &pod));
	ok(t && strcmp(t->name, "report") == 0, "an app running the sidecar's program is an app, told by its name");
	is_int(fake_container_of(&pod, shipper)->role, ROLE_SIDECAR, "the container named shipper is that sidecar");
	is_int((int)fake_container_of(&pod, shipper)->sidecar, 0, "spec 0");
	is_int(fake_container_of(&pod, web)->role, ROLE_SIDECAR, "web, whatever it runs now, is its sidecar");
	is_int((int)fake_container_of(&pod, web)->sidecar, 1, "spec 1");
	is_str(fake_container_of(&pod, web)->kname, "web", "its name in the pod");
	ok(fake_container_of(&pod, other)->role == ROLE_APP, "a container without its name is no named sidecar");
	t = find(DECIDE_EV_APP_SEEN, id_of(other, &pod));
	ok(t && strcmp(t->name, "runc:[2:INIT]") == 0,
	   "an app without its name is unnamed, not its program's (%s): it pairs as an OnFailure attempt",
	   t ? t->name : "none");
	pod_close(&pod);

	/* The agent's container shows no name: none is read, and the program says, as without a kubelet. */
	fake_put(getpid(), "mountinfo", "", 0);
	ntold = 0;
	is_int(pod_open(&pod, &cfg), 0, "no names: the first scan");
	pod_follow(&pod);
	is_str(fake_container_of(&pod, app)->kname, "", "no names: its mount is not read");
	ok(fake_container_of(&pod, app)->role == ROLE_SIDECAR && fake_container_of(&pod, app)->sidecar == 0,
	   "no names: a container is matched by its program");

	fake_release(app_rel, 0);
	fake_release(shipper_rel, 0);
	fake_release(web_rel, 0);
	fake_release(other_rel, 0);
	pod_close(&pod);
	spec_free(&specs[0]);
	spec_free(&specs[1]);
}

/*
 * Native sidecars: with --first, a container created before the agent's
 * is one, unless a plain spec matches it; a native spec's container is one
 * whenever it comes; the kubelet's restart of one is one again. Their
 * roots' exits are natives' exits; their codes are nobody's concern; an
 * app container is signalled when decide asks.
 */
static void natives(void)
{
	/* The agent's pid, higher than any child of the test: the containers that ran before it. */
	const pid_t self = above_every_pid();
	struct sidecar_spec specs[2];
	struct pod_config cfg;
	const struct told *t;
	struct pod pod;
	int vec_rel, otel_rel, fb_rel, app_rel, again_rel;
	pid_t vec, otel, fb, app, again;
	unsigned sent = 0, app_id;
	size_t i;

	fake_spec(&specs[0], "name=fb,match=fluent-bit");
	fake_spec(&specs[1], "name=otel,match=otelcol,native");
	fake_reset();
	fake_proc(1, 0, "pause", CG("/pause"), "/pause");
	vec = fake_child(CHILD_WAITS, &vec_rel);
	fake_proc(vec, 0, "vector", CG("/vector"), "/usr/bin/vector");
	otel = fake_child(CHILD_WAITS, &otel_rel);
	fake_proc(otel, 0, "otelcol", CG("/otel"), "/otelcol");
	fb = fake_child(CHILD_WAITS, &fb_rel);
	fake_proc(fb, 0, "fluent-bit", CG("/proxy"), "/fluent-bit");
	fake_proc(self, 0, "rearguard", CG("/agent"), "/rearguard");

	fake_pod_config(&cfg, loop, specs);
	cfg.self = self;
	cfg.nsidecars = 2;
	cfg.apps = true;
	cfg.first = true;
	cfg.native_restarted = native_restarted;
	cfg.on_event = on_event;
	ntold = 0;
	is_int(pod_open(&pod, &cfg), 0, "a pod with natives: the first scan");
	pod_follow(&pod);
	is_int(native_by(id_of(vec, &pod)), NATIVE_BY_START, "--first: a container from before the agent's");
	ok(!find(DECIDE_EV_APP_SEEN, id_of(vec, &pod)), "is no app");
	t = find(DECIDE_EV_NATIVE_SEEN, id_of(otel, &pod));
	ok(t && t->ev.by == NATIVE_BY_SPEC && strcmp(t->name, "otel") == 0, "a native spec's container, by its name");
	for (i = 0, sent = 0; i < ntold; i++)
		sent += told[i].ev.kind == DECIDE_EV_SIDECAR_SEEN && told[i].ev.sidecar == 1;
	is_int(sent, 0, "no sidecar to stop for the native spec");
	t = find(DECIDE_EV_SIDECAR_SEEN, 0);
	ok(t && t->ev.sidecar == 0 && native_by(id_of(fb, &pod)) < 0,
	   "a plain spec wins over the start order: a sidecar to stop");

	/* An app that starts later is an app, whatever --first says. */
	app = fake_child(CHILD_TERM_EXITS, &app_rel);
	fake_proc(app, 0, "job", CG("/app"), "/job");
	pod_refresh(&pod);
	app_id = id_of(app, &pod);
	ok(find(DECIDE_EV_APP_SEEN, app_id) && native_by(app_id) < 0, "a later container is an app");

	/* The native's root exits: a native's exit, and its code is not asked for. */
	fake_now += 1 * S;
	fake_release(vec_rel, 1);
	t = await_event(DECIDE_EV_NATIVE_EXITED, id_of(vec, &pod));
	ok(t != NULL, "the native's exit is told as a native's");
	ok(!find(DECIDE_EV_APP_EXITED, id_of(vec, &pod)), "not as an app's");
	/* Reaped, its code is in the kernel: an app's would be told now. */
	FAKE_RUN_UNTIL(loop, fake_dead(vec));
	pod_statuses(&pod);
	ok(!find(DECIDE_EV_APP_STATUS, id_of(vec, &pod)) && !find(DECIDE_EV_SIDECAR_STATUS, 0),
	   "and no exit code is told for it");

	/* The kubelet's restart: a new container of that name, which decide knows for a restart. */
	again = fake_child(CHILD_WAITS, &again_rel);
	fake_proc(again, 0, "vector", CG("/vector-2"), "/usr/bin/vector");
	restarted_name = "vector";
	fake_now += 1 * S;
	pod_refresh(&pod);
	restarted_name = NULL;
	is_int(native_by(id_of(again, &pod)), NATIVE_BY_RESTART, "the restart is a native again");
	ok(!find(DECIDE_EV_APP_SEEN, id_of(again, &pod)), "not an app");

	/* decide asks for the app to be stopped: SIGTERM to its main process. */
	is_int(pod_signal_app(&pod, id_of(otel, &pod), SIGTERM, false, &sent), -ESRCH,
	       "a native is never signalled");
	is_int(pod_signal_app(&pod, app_id, SIGTERM, false, &sent), 0, "SIGTERM to the app");
	is_int(sent, 1, "to its main process");
	ok(await_event(DECIDE_EV_APP_EXITED, app_id) != NULL, "which exits of it");

	close(otel_rel);
	close(fb_rel);
	close(again_rel);
	pod_close(&pod);
	spec_free(&specs[0]);
	spec_free(&specs[1]);
}

/*
 * An app's runtime init and a sidecar's, both seen in the runtime's cgroup
 * ("/runtime"); the app exits before it moves, and its exit reaches the pod
 * before or after the rescan that sees the sidecar's init. Either way the
 * sidecar is seen once it moves and execs, and the app still counts as one
 * of the pod's containers.
 */
static void shared_init_cgroup(void)
{
	struct sidecar_spec spec;
	struct pod_config cfg;
	const struct told *t;
	struct pod pod;
	char err[256];
	int app_rel, sc_rel, exit_first;
	pid_t app, sc;
	unsigned app_id;

	if (spec_parse("match=fluent-bit", &spec, err, sizeof(err)) < 0)
		bail_out(err);
	for (exit_first = 0; exit_first < 2; exit_first++) {
		fake_reset();
		fake_proc(1, 0, "pause", CG("/pause"), "/pause");
		fake_proc(getpid(), 0, "rearguard", CG("/agent"), "/rearguard");
		fake_pod_config(&cfg, loop, &spec);
		cfg.apps = true;
		cfg.on_event = on_event;
		ntold = 0;
		if (pod_open(&pod, &cfg) < 0)
			bail_out("no pod");
		pod_follow(&pod);

		app = fake_child(CHILD_WAITS, &app_rel);
		fake_proc(app, 0, "runc:[2:INIT]", CG("/runtime"), "runc");
		pod_refresh(&pod);
		app_id = id_of(app, &pod);
		sc = fake_child(CHILD_TERM_EXITS, &sc_rel);
		fake_proc(sc, 0, "runc:[2:INIT]", CG("/runtime"), "runc");
		fake_release(app_rel, 0);
		if (!exit_first)
			pod_refresh(&pod);
		ok(await_event(DECIDE_EV_APP_EXITED, app_id) != NULL, "%s: the app's exit",
		   exit_first ? "exit before the rescan" : "exit after the rescan");
		fake_gone(app);
		if (exit_first)
			pod_refresh(&pod);

		fake_proc(sc, 0, "runc:[2:INIT]", CG("/proxy"), "runc");
		pod_refresh(&pod);
		fake_proc(sc, 0, "fluent-bit", CG("/proxy"), "/fluent-bit");
		pod_refresh(&pod);
		t = find(DECIDE_EV_SIDECAR_SEEN, 0);
		ok(t != NULL, "the sidecar is seen once it moves and execs");
		ok(t && t->ev.age_us == 0, "its program began at the exec just seen, not at its process's start");
		is_int(pod_containers(&pod), 3, "three containers besides pause: ours, the app's, the sidecar's");

		close(sc_rel);
		pod_close(&pod);
	}
	spec_free(&spec);
}

/* How many descriptors this process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		bail_out("cannot list /proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/*
 * A watch nobody will ask an exit code of ends with its root's exit: a
 * native's (each restart of it is a new one), and a pending root's settled
 * as neither an app nor a sidecar. The pod holds no descriptor for them
 * until it is closed, and closes none it does not hold.
 */
static void watch_descriptors(void)
{
	struct sidecar_spec spec;
	struct podscan_container *c;
	struct pod_config cfg;
	struct pod pod;
	regex_t app_re;
	char err[256];
	int before, scanning, nat_rel, init_rel, i, k;
	pid_t nat, init;

	if (spec_parse("name=otel,match=otelcol,native", &spec, err, sizeof(err)) < 0)
		bail_out(err);
	if (regcomp(&app_re, "^job$", REG_EXTENDED | REG_NOSUB) != 0)
		bail_out("regcomp");
	/* A descriptor 0 to lose, as the agent has one. */
	if (fcntl(0, F_GETFD) < 0 && open("/dev/null", O_RDONLY) != 0)
		bail_out("no descriptor 0");
	before = open_fds();
	fake_reset();
	fake_proc(1, 0, "pause", CG("/pause"), "/pause");
	fake_proc(getpid(), 0, "rearguard", CG("/agent"), "/rearguard");
	nat = fake_child(CHILD_WAITS, &nat_rel);
	fake_proc(nat, 0, "otelcol", CG("/otel"), "/otelcol");
	/* An app container whose root was gone before it was seen: nothing to watch. */
	fake_proc(above_every_pid(), 1, "job", CG("/orphan"), "/job");
	fake_pod_config(&cfg, loop, &spec);
	cfg.apps = true;
	cfg.app_re = &app_re;
	cfg.on_event = on_event;
	ntold = 0;
	if (pod_open(&pod, &cfg) < 0)
		bail_out("no pod");
	pod_follow(&pod);
	scanning = open_fds();

	/* The kubelet restarts the native three times. */
	for (k = 0; k < 3; k++) {
		fake_release(nat_rel, 1);
		if (!await_event(DECIDE_EV_NATIVE_EXITED, id_of(nat, &pod)))
			bail_out("the native's exit was not told");
		for (i = 0; i < 10; i++) {
			ev_run(loop, EVRUN_NOWAIT);
			pod_statuses(&pod);
		}
		fake_gone(nat);
		nat = fake_child(CHILD_WAITS, &nat_rel);
		fake_proc(nat, 0, "otelcol", k == 0 ? CG("/otel-0") : k == 1 ? CG("/otel-1") : CG("/otel-2"),
			  "/otelcol");
		pod_refresh(&pod);
	}
	ok(find(DECIDE_EV_NATIVE_SEEN, id_of(nat, &pod)) != NULL, "the third restart is a native");
	is_int(open_fds(), scanning, "after three restarts of a native, as many descriptors as before");

	/* A runtime's init that exits before its exec, and that --app does not take. */
	init = fake_child(CHILD_WAITS, &init_rel);
	fake_proc(init, 0, "runc:[2:INIT]", CG("/runtime"), "runc");
	pod_refresh(&pod);
	c = podscan_find(pod.ps, id_of(init, &pod));
	ok(c && c->role == ROLE_PENDING, "a pending container");
	fake_release(init_rel, 0);
	FAKE_RUN_UNTIL(loop, !c || c->root_gone);
	ok(c && c->root_gone && c->role == ROLE_OTHER, "settled at its exit: neither an app nor a sidecar");
	is_int(open_fds(), scanning, "and its watch is over");

	/* One that never execs is pending until decide's limit passes its first sighting, by the pod's clock. */
	init = fake_child(CHILD_WAITS, &init_rel);
	fake_proc(init, 0, "runc:[2:INIT]", CG("/stuck"), "runc");
	pod_refresh(&pod);
	c = podscan_find(pod.ps, id_of(init, &pod));
	ok(c && c->role == ROLE_PENDING && c->seen_us == fake_now, "pending, first seen by the pod's clock");
	fake_now += 30 * S;
	pod_pending_over(&pod, fake_now - 30 * S - 1);
	pod_refresh(&pod);
	ok(c && c->role == ROLE_PENDING, "a limit before its first sighting: still pending");
	pod_pending_over(&pod, fake_now - 30 * S);
	pod_refresh(&pod);
	ok(c && c->role == ROLE_OTHER && c->role_changed, "its time is up: classified by what it shows (--app: other)");
	fake_release(init_rel, 0);
	is_int(open_fds(), scanning, "and no longer watched");
	fake_gone(init);
	pod_refresh(&pod);

	close(nat_rel);
	pod_close(&pod);
	is_int(open_fds(), before, "the pod closed and its children gone, as many descriptors as before");
	ok(fcntl(0, F_GETFD) >= 0, "descriptor 0 among them");
	regfree(&app_re);
	spec_free(&spec);
}

int main(void)
{
	static const char run_cmdline[] = "rearguard\0run\0--name\0batch\0--\0job";
	struct sidecar_spec spec;
	struct pod_config cfg;
	const struct told *t;
	struct pod pod;
	int app_rel, sc_rel, brief_rel, batch_rel, late_rel;
	pid_t app, sc, brief, batch, late;
	unsigned app_id;
	size_t i;
	bool at_now = true;

	fake_start(&loop);
	fake_spec(&spec, FAKE_SIDECAR_SPEC);
	fake_pod_app_sidecar(CHILD_TERM_EXITS, &app, &app_rel, &sc, &sc_rel);

	fake_pod_config(&cfg, loop, &spec);
	cfg.apps = true;
	cfg.run_name = options_run_name;
	cfg.on_event = on_event;
	cfg.on_sidecar = on_sidecar;
	is_int(pod_open(&pod, &cfg), 0, "the first scan");
	is_int(ntold, 0, "nothing told before pod_follow");
	is_int(pod_containers(&pod), 3, "three containers besides pause: ours, the app's, the sidecar's");

	/* What the first scan found, told at the test's clock. */
	pod_follow(&pod);
	app_id = id_of(app, &pod);
	t = find(DECIDE_EV_APP_SEEN, app_id);
	ok(t && strcmp(t->name, "job") == 0, "the app container, by its root's name");
	t = find(DECIDE_EV_SIDECAR_SEEN, 0);
	ok(t && t->ev.sidecar == 0, "the sidecar's container");
	t = find(DECIDE_EV_PENDING, 0);
	ok(t && t->ev.count == 0, "no container pending");
	is_int(sidecar_calls, 1, "the sidecar is handed over for pre-flight once");
	for (i = 0; i < ntold; i++)
		at_now &= told[i].when == fake_now;
	ok(at_now, "every event at the test's time");
	is_int(pod_polled(&pod), 0, "both roots watched with pidfds");

	/* The app exits 3: its pidfd turns readable, and the loop tells it, at the test's time. */
	fake_now += 5 * S;
	fake_release(app_rel, 3);
	t = await_event(DECIDE_EV_APP_EXITED, app_id);
	ok(t != NULL, "the app's exit is told from the loop");
	is_int(t ? t->when : 0, fake_now, "when the test's clock says");
	/* Its code comes from the kernel once libev has reaped it. */
	FAKE_RUN_UNTIL(loop, status_told(&pod, DECIDE_EV_APP_STATUS, app_id));
	t = find(DECIDE_EV_APP_STATUS, app_id);
	ok(t && (t->ev.code == 3 || t->ev.code == DECIDE_CODE_UNKNOWN), "its exit code is told (%d)", t ? t->ev.code : -9);
	if (t && t->ev.code == DECIDE_CODE_UNKNOWN)
		printf("# this kernel gives no exit codes (PIDFD_INFO_EXIT, Linux 6.15)\n");

	/* A container that runs rearguard run: the name it will report as. */
	batch = fake_child(CHILD_WAITS, &batch_rel);
	fake_proc(batch, 0, "rearguard", CG("/batch"), NULL);
	fake_cmdline(batch, run_cmdline, sizeof(run_cmdline));
	fake_now += S;
	ntold = 0;
	is_int(pod_refresh(&pod), 0, "a rescan");
	t = find(DECIDE_EV_APP_SEEN, id_of(batch, &pod));
	ok(t && strcmp(t->name, "rearguard") == 0 && t->when == fake_now, "a new app container, told at once");
	t = find(DECIDE_EV_APP_REPORTS_AS, id_of(batch, &pod));
	ok(t && strcmp(t->name, "batch") == 0, "and the name its report will have (--name batch)");

	/* Whether the sidecar's root catches its stop signal: its status says so. */
	ntold = 0;
	pod_catches(&pod, 0, SIGTERM);
	t = find(DECIDE_EV_CATCHES, 0);
	ok(t && t->ev.result == 1, "the sidecar's root catches SIGTERM and sleeps");

	/* A container gone before it could be watched: exited, its code unknown. */
	brief = fake_child(CHILD_WAITS, &brief_rel);
	fake_release(brief_rel, 0);
	waitpid(brief, NULL, 0);
	fake_proc(brief, 0, "true", CG("/brief"), "/bin/true");
	ntold = 0;
	pod_refresh(&pod);
	t = find(DECIDE_EV_APP_STATUS, id_of(brief, &pod));
	ok(find(DECIDE_EV_APP_SEEN, id_of(brief, &pod)) && find(DECIDE_EV_APP_EXITED, id_of(brief, &pod)),
	   "a container already gone: seen and exited");
	ok(t && t->ev.code == DECIDE_CODE_UNKNOWN, "its code unknown (no watch could see it)");

	/* The sidecar's processes are gone: its root is asked at once, no turn of the loop needed. */
	kill(sc, SIGTERM);
	fake_await_exit(sc);
	ntold = 0;
	pod_check_sidecar(&pod, 0);
	t = find(DECIDE_EV_SIDECAR_EXITED, 0);
	ok(t && t->ev.sidecar == 0 && t->ev.pid == sc, "the sidecar's exit, told with its root (a watch saw it)");

	/* Once the drain has begun no command line is read: a rearguard run seen then has no report name. */
	podscan_names_only(pod.ps);
	late = fake_child(CHILD_WAITS, &late_rel);
	fake_proc(late, 0, "rearguard", CG("/late"), NULL);
	fake_cmdline(late, run_cmdline, sizeof(run_cmdline));
	ntold = 0;
	pod_refresh(&pod);
	ok(find(DECIDE_EV_APP_SEEN, id_of(late, &pod)) && !find(DECIDE_EV_APP_REPORTS_AS, id_of(late, &pod)),
	   "after podscan_names_only: an app container, its report name not read");

	fake_release(late_rel, 0);
	fake_release(batch_rel, 0);
	close(sc_rel);
	pod_close(&pod);
	spec_free(&spec);
	natives();
	known_by_name();
	shared_init_cgroup();
	watch_descriptors();
	fake_cleanup();
	ev_loop_destroy(loop);
	return done_testing();
}
