/*
 * The engine with a mode of the test's own, on a fake /proc whose pids are
 * real children (tests/unit/fakepod.h), by the test's clock: the loop
 * carries out what decide decides (the files, the stop signal, its
 * escalation, the exit), and the mode's operations come in order.
 */
#include "config.h"

#include "engine.h"
#include "json.h"
#include "log.h"
#include "options.h"
#include "spec.h"
#include "tap.h"

#include "fakepod.h"

#include <ev.h>

#define S US_PER_S
#define MS US_PER_MS

/* What the mode saw. */
static struct {
	unsigned hello, starts, apps_done, finishes, closes;
	unsigned writes[PROTOCOL_NFILES];
	struct decide_action exit;
	char summary[8192];
} seen;

static void hello(struct engine *e)
{
	seen.hello++;
}

static void configure(struct engine *e, struct decide_config *dc)
{
	dc->readiness = true;
	dc->protocol = true;
}

static void start(struct engine *e)
{
	seen.starts++;
}

static int write_file(struct engine *e, enum protocol_file file, enum decide_reason reason)
{
	seen.writes[file]++;
	return 0;
}

static void apps_done(struct engine *e, const struct decide_action *act)
{
	seen.apps_done++;
}

static void finish(struct engine *e, const struct decide_action *act, const struct jbuf *summary)
{
	seen.finishes++;
	seen.exit = *act;
	snprintf(seen.summary, sizeof(seen.summary), "%s", summary ? summary->buf : "");
}

static void close_mode(struct engine *e)
{
	seen.closes++;
}

static const struct engine_mode test_mode = {
	.apps = true,
	.failed_status = 2,
	.hello = hello,
	.configure = configure,
	.start = start,
	.write = write_file,
	.apps_done = apps_done,
	.finish = finish,
	.close = close_mode,
};

static struct agent_options opt;
static struct sidecar_spec spec;
static const struct engine_world world = { .clock = fake_clock };
static FILE *log_file;

static void on_idle(struct ev_loop *loop, ev_idle *w, int revents)
{
	*(bool *)w->data = true;
}

/*
 * Turns the loop until a turn with nothing else to do (a watcher of the
 * lowest priority runs only then): what is due by the test's clock, a
 * timer of no delay, has been carried out.
 */
static void turn_until_idle(struct engine *e)
{
	bool idle = false;
	ev_idle w;
	int i;

	ev_idle_init(&w, on_idle);
	ev_set_priority(&w, EV_MINPRI);
	w.data = &idle;
	ev_idle_start(engine_loop(e), &w);
	for (i = 0; i < 100 && !idle; i++)
		ev_run(engine_loop(e), EVRUN_ONCE);
	ev_idle_stop(engine_loop(e), &w);
	if (!idle)
		bail_out("the loop never came to rest");
}

/* How long the engine's log is: where the lines of what follows begin. */
static off_t log_mark(void)
{
	struct stat st;

	log_flush();
	if (fstat(fileno(log_file), &st) < 0)
		bail_out("cannot stat the log");
	return st.st_size;
}

/* Whether the engine logged what since mark: what it carried out, whatever its processes did since. */
static bool logged_since(off_t mark, const char *what)
{
	static char buf[65536];
	size_t len = 0;
	ssize_t n;

	log_flush();
	while ((n = pread(fileno(log_file), buf + len, sizeof(buf) - 1 - len, mark + (off_t)len)) > 0)
		len += (size_t)n;
	if (n < 0 || len == sizeof(buf) - 1)
		bail_out("cannot read the log since the mark");
	buf[len] = '\0';
	return strstr(buf, what) != NULL;
}

/*
 * The loop turned until the engine finished, once the app and the sidecar
 * are gone. Their exit codes are in the kernel from their reaps on;
 * decide may have asked for them before, so the test's clock moves on
 * past its next ask.
 */
static void finish_after(struct engine *e, pid_t app, pid_t sc)
{
	FAKE_RUN_UNTIL(engine_loop(e), fake_dead(app) && fake_dead(sc));
	fake_now += 100 * MS;
	engine_decide(e);
	FAKE_RUN_UNTIL(engine_loop(e), engine_finished(e));
}

static void set_options(void)
{
	memset(&opt, 0, sizeof(opt));
	opt.sidecars = &spec;
	opt.nsidecars = 1;
	opt.apps = 1;
	opt.policy = POLICY_NEVER;
	opt.startup_timeout_ms = 600 * 1000;
	opt.ready_timeout_ms = 300 * 1000;
	opt.stop_timeout_ms = 20 * 1000;
	opt.kill_after_ms = 5 * 1000;
	opt.term_grace_ms = 25 * 1000;
	opt.restart_grace_ms = 300 * 1000;
}

/* pause, the test as the agent, an app and a sidecar that lives as said; nothing seen yet. */
static void pod(enum fake_child sidecar, pid_t *app, int *app_rel, pid_t *sc, int *sc_rel)
{
	fake_pod_app_sidecar(sidecar, app, app_rel, sc, sc_rel);
	memset(&seen, 0, sizeof(seen));
}

static struct engine *open_engine(void)
{
	struct engine_world w = world;
	struct engine *e;

	w.proc = fake_root;
	if (engine_open(&e, &test_mode, &opt, NULL, &w) != 0 || !e)
		bail_out("the engine did not start");
	return e;
}

/* The app exits 3; the sidecar stops on its SIGTERM; the exit follows, with the summary. */
static void app_exit_stops_sidecar(void)
{
	struct engine *e;
	int app_rel, sc_rel;
	pid_t app, sc;

	pod(CHILD_TERM_EXITS, &app, &app_rel, &sc, &sc_rel);
	e = open_engine();
	is_int(seen.hello, 1, "the mode's first line");
	is_int(seen.starts, 1, "its start");
	is_int(seen.writes[PROTOCOL_READY], 1, "the sidecar (no ready URL) seen: the ready file written");
	/*
	 * By the test's clock the sidecar was seen long ago, so decide sends its stop signal
	 * without looking for its handler first (the real child set it before fake_child returned).
	 */
	fake_now += 10 * S;
	engine_decide(e);
	ok(!engine_finished(e), "the app runs: nothing else to do");

	fake_release(app_rel, 3);
	finish_after(e, app, sc);
	ok(engine_finished(e), "the app's exit: the engine finished");
	is_int(seen.apps_done, 1, "the drain began once");
	is_int(seen.writes[PROTOCOL_APPS_DONE], 1, "apps-done written");
	is_int(seen.writes[PROTOCOL_DONE], 1, "done written");
	is_int(seen.finishes, 1, "the mode's finish, once");
	is_int(seen.exit.status, 0, "exit status 0");
	ok(fake_dead(sc), "the sidecar is gone");
	ok(strstr(seen.summary, "\"outcome\":\"stopped\"") != NULL, "the summary: stopped");
	ok(strstr(seen.summary, "\"name\":\"job\",\"container\":") && strstr(seen.summary, "\"reason\":\"apps-done\""),
	   "the app, and why the drain began");
	is_int(engine_close(e), 0, "engine_close gives the exit status");
	is_int(seen.closes, 1, "the mode's close");
	close(sc_rel);
}

/* A sidecar that ignores SIGTERM: the test's clock runs --stop-timeout out, then --kill-after. */
static void escalation_by_the_clock(void)
{
	struct engine *e;
	int app_rel, sc_rel;
	pid_t app, sc;
	off_t mark;

	pod(CHILD_IGNORES_TERM, &app, &app_rel, &sc, &sc_rel);
	e = open_engine();
	fake_now += 10 * S;
	engine_decide(e);
	fake_release(app_rel, 0);
	FAKE_RUN_UNTIL(engine_loop(e), seen.apps_done);
	is_int(seen.apps_done, 1, "the app exited: the drain began, and SIGTERM went out");
	turn_until_idle(e);
	ok(!fake_dead(sc) && !engine_finished(e), "it ignores SIGTERM: still there, by the test's clock no time passed");
	/* What the engine carries out, not what the sidecar did yet: a SIGKILL takes a while to kill. */
	fake_now += 20 * S;
	mark = log_mark();
	engine_decide(e);
	turn_until_idle(e);
	ok(!logged_since(mark, "sent SIG") && !engine_finished(e),
	   "--stop-timeout: SIGTERM was its stop signal, so none again, and SIGKILL waits --kill-after");
	fake_now += 5 * S;
	mark = log_mark();
	engine_decide(e);
	ok(logged_since(mark, "sent SIGKILL"), "--kill-after: SIGKILL sent");
	finish_after(e, app, sc);
	ok(engine_finished(e), "--kill-after: SIGKILL, and the exit");
	ok(fake_dead(sc), "the sidecar is gone");
	ok(strstr(seen.summary, "\"outcome\":\"killed\"") != NULL, "the summary: killed");
	is_int(engine_close(e), 0, "exit 0: it is gone, whatever it took");
	close(sc_rel);
}

/* Without the pod's other containers in sight, a mode that needs them does not start. */
static void no_pod(void)
{
	struct engine_world w = world;
	struct engine *e = NULL;

	fake_reset();
	fake_proc(1, 0, "pause", CG("/pause"), "/pause");
	memset(&seen, 0, sizeof(seen));
	w.proc = fake_root;
	w.self = 999999; /* not in this pod */
	is_int(engine_open(&e, &test_mode, &opt, NULL, &w), 2, "the mode's failed status");
	ok(e == NULL, "no engine");
	is_int(seen.starts, 0, "nothing started");
	is_int(seen.closes, 1, "but the mode was closed");
}

int main(void)
{
	log_file = fake_start(NULL);
	fake_spec(&spec, FAKE_SIDECAR_SPEC);
	set_options();
	app_exit_stops_sidecar();
	escalation_by_the_clock();
	no_pod();
	spec_free(&spec);
	fake_cleanup();
	return done_testing();
}
