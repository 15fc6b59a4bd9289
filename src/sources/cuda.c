/* The `cuda` source: uprobe pairs on every libcuda copy the target maps, events drained into
 * records. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "common/clock.h"
#include "common/num_parse.h"
#include "common/u64_map.h"
#include "sources/bpf_util.h"
#include "sources/cuda_api.h"
#include "sources/cuda_events.h"
#include "sources/cuda_inproc.h"
#include "sources/inject_preload.h"
#include "sources/cuda_locate.h"
#include "sources/elf_symbols.h"
#include "common/regular_file.h"
#include "sources/libcuda_locate.h"
#include "sources/libcuda_watch.h"
#include "sources/session.h"
#include "sources/source.h"
#include "sources/stack_store.h"
#include "sources/uprobe_multi.h"
#include "trace/records_core.h"
#include "trace/records_cuda.h"
#include "cuda.skel.h"

#define CUDA_MAX_LIBRARIES 8
/* ~450k events of 144 bytes: half a second of a 1M events/s storm */
#define CUDA_RING_BYTES (64u << 20)
#define CUDA_RESCAN_NS 500000000ull
/* events handled per ring-buffer wakeup before the session loop gets a turn */
#define CUDA_BATCH_EVENTS 65536
#define LAUNCH_RETURNS_MAX 1000000000u /* --launch-returns: at most one in a billion */

/*
 * One libcuda file with its probes: uprobe_multi links, one per class and
 * direction, or on kernels without them one perf link per symbol and direction.
 */
struct cuda_library {
	dev_t dev;
	ino_t ino;
	int *link_fds;
	unsigned nfds;
	struct bpf_link **links;
	unsigned nlinks;
	unsigned refused; /* entry points the kernel would not probe */
	int refusal;	  /* the last refusal's negative errno */
	uint32_t refused_api[GRT_CUDA_API_COUNT]; /* which ones, named in the status line */
};

struct cuda_tracer {
	struct grt_session *session;
	struct cuda_bpf *skel;
	struct ring_buffer *ring;
	struct cuda_decoder *decoder;
	bool multi; /* uprobe_multi links (kernel 6.6+) */
	/* how the launch classes are probed (enum grt_cuda_launch_probes) */
	uint32_t launch_probes;
	uint32_t launch_return_every; /* --launch-returns */
	struct bpf_program *enter[CUDA_CLASS_COUNT];
	struct bpf_program *exit[CUDA_CLASS_COUNT];
	struct bpf_program *both[CUDA_CLASS_COUNT]; /* session programs, launch classes only */
	struct cuda_library libs[CUDA_MAX_LIBRARIES];
	unsigned nlibs;
	struct libcuda_watch *watch; /* system-wide: libcuda files as processes map them */
	uint64_t next_rescan_ns;
	char why[PATH_MAX + 128]; /* why the last library could not be probed */
	char why_told[PATH_MAX + 128]; /* the last such reason put in the trace */
	/*
	 * --cuda-via inject: the in-process rings, the probe on the library's
	 * announcement, and the processes found recorded by uprobes instead
	 */
	bool via_inject;
	bool check_only; /* attach_library() only checks the file: its symbols, no probes */
	struct cuda_inproc *inproc;
	struct bpf_link *inproc_links[2];
	struct u64_map uprobe_pids;
	struct stack_store stacks; /* the frames the BPF programs sent, by id */
	unsigned batch;
	int sink_error;
	unsigned long long drops_seen;
};

static const char *libbpf_reason(int err)
{
	return grt_bpf_last_message()[0] ? grt_bpf_last_message() : strerror(-err);
}

/* ---- attaching one library ---- */

static struct bpf_program *find_program(struct cuda_tracer *t, enum cuda_probe_class cls,
					enum cuda_program_kind kind)
{
	char name[64];

	if (cuda_class_program_name(cls, kind, name, sizeof(name)))
		return NULL;
	return bpf_object__find_program_by_name(t->skel->obj, name);
}

static int find_programs(struct cuda_tracer *t)
{
	for (int cls = 0; cls < CUDA_CLASS_COUNT; cls++) {
		t->enter[cls] = find_program(t, cls, CUDA_PROGRAM_ENTER);
		t->exit[cls] = find_program(t, cls, CUDA_PROGRAM_EXIT);
		if (cuda_class_is_launch(cls))
			t->both[cls] = find_program(t, cls, CUDA_PROGRAM_SESSION);
		if (!t->enter[cls] || !t->exit[cls] || (cuda_class_is_launch(cls) && !t->both[cls]))
			return -ENOENT;
	}
	return 0;
}

/* Whether a class has a return probe of its own (a session program does both ends). */
static bool class_has_exit(const struct cuda_tracer *t, enum cuda_probe_class cls)
{
	return !cuda_class_is_launch(cls) || t->launch_probes == GRT_CUDA_PROBES_RETPROBE;
}

static bool class_uses_session(const struct cuda_tracer *t, enum cuda_probe_class cls)
{
	return cuda_class_is_launch(cls) && t->launch_probes == GRT_CUDA_PROBES_SESSION;
}

static uint64_t cookie_of(uint32_t api)
{
	return api | (cuda_api_is_legacy32(api) ? CUDA_COOKIE_LEGACY32 : 0);
}

/*
 * Out of file descriptors is no refusal of an entry point: the library is not probed, and the
 * message says so (ulimit -n), rather than calls going unseen behind a list of "refused" names.
 */
static bool out_of_fds(int err)
{
	return err == -EMFILE || err == -ENFILE;
}

static void note_refusal(struct cuda_library *lib, uint32_t api, int refusal)
{
	if (lib->refused < GRT_CUDA_API_COUNT)
		lib->refused_api[lib->refused++] = api;
	lib->refusal = refusal;
}

/* Kernels without uprobe_multi: one perf-event uprobe per symbol and direction. */
static int attach_single(struct cuda_tracer *t, struct cuda_library *lib, const char *path,
			 uint32_t api, uint64_t offset, bool at_return)
{
	enum cuda_probe_class cls = cuda_api_class(api);
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = at_return, .bpf_cookie = cookie_of(api));
	struct bpf_link *link;

	if (at_return && !class_has_exit(t, cls))
		return 0; /* --launch-returns 0 without sessions: entry probes only */
	link = bpf_program__attach_uprobe_opts(at_return ? t->exit[cls] : t->enter[cls], -1, path,
					       offset, &opts);
	if (!link)
		return -errno;
	lib->links[lib->nlinks++] = link;
	return 0;
}

/*
 * The links of one class over n offsets: an entry and a return link, a
 * session link, or (launches without returns) an entry link alone. None is
 * left when one fails.
 */
static int attach_pair(struct cuda_tracer *t, struct cuda_library *lib, const char *path,
		       enum cuda_probe_class cls, const uint64_t *offsets, const uint64_t *cookies,
		       uint32_t n)
{
	bool session = class_uses_session(t, cls);
	int enter = grt_uprobe_multi_attach(bpf_program__fd(session ? t->both[cls] : t->enter[cls]),
					    path, offsets, cookies, n,
					    session ? GRT_UPROBE_SESSION : GRT_UPROBE_ENTRY);
	int exit = -1;

	if (enter < 0)
		return enter;
	if (!session && class_has_exit(t, cls)) {
		exit = grt_uprobe_multi_attach(bpf_program__fd(t->exit[cls]), path, offsets,
					       cookies, n, GRT_UPROBE_RETURN);
		if (exit < 0) {
			close(enter);
			return exit;
		}
	}
	lib->link_fds[lib->nfds++] = enter;
	if (exit >= 0)
		lib->link_fds[lib->nfds++] = exit;
	return 0;
}

/*
 * One uprobe_multi link pair per class over the symbols of that class. The
 * kernel refuses a whole link when one offset cannot be probed (an entry
 * point starting with an instruction x86 uprobes cannot step, in a library
 * already mapped): then each symbol is probed on its own and the refused
 * ones are skipped and counted. Returns 0, or running out of file descriptors.
 */
static int attach_class(struct cuda_tracer *t, struct cuda_library *lib, const char *path,
			enum cuda_probe_class cls, const uint64_t *offsets,
			const uint64_t *cookies, uint32_t n)
{
	int err = attach_pair(t, lib, path, cls, offsets, cookies, n);

	for (uint32_t i = 0; err && !out_of_fds(err) && i < n; i++) {
		int refusal = attach_pair(t, lib, path, cls, offsets + i, cookies + i, 1);

		if (out_of_fds(refusal))
			return refusal;
		if (refusal)
			note_refusal(lib, (uint32_t)(cookies[i] & ~CUDA_COOKIE_LEGACY32), refusal);
	}
	return out_of_fds(err) ? err : 0;
}

static int attach_multi(struct cuda_tracer *t, struct cuda_library *lib, const char *path,
			const struct u64_map *by_offset)
{
	size_t n = u64_map_size(by_offset);
	uint64_t *offsets = calloc(n, sizeof(*offsets)), *cookies = calloc(n, sizeof(*cookies));
	uint64_t offset, api;
	int err = 0;

	/* a pair per class, or per symbol where a class link was refused */
	lib->link_fds = calloc(2 * (CUDA_CLASS_COUNT + n), sizeof(*lib->link_fds));
	if (!offsets || !cookies || !lib->link_fds)
		err = -ENOMEM;
	for (int cls = 0; cls < CUDA_CLASS_COUNT && !err; cls++) {
		uint32_t count = 0;

		for (size_t i = 0; u64_map_iter(by_offset, &i, &offset, &api);) {
			if (cuda_api_class((uint32_t)api) != (enum cuda_probe_class)cls)
				continue;
			offsets[count] = offset;
			cookies[count++] = cookie_of((uint32_t)api);
		}
		if (count)
			err = attach_class(t, lib, path, cls, offsets, cookies, count);
	}
	free(offsets);
	free(cookies);
	return err;
}

static void library_release(struct cuda_library *lib)
{
	grt_release_file_links(lib->link_fds, lib->nfds, lib->links, lib->nlinks);
	memset(lib, 0, sizeof(*lib));
}

/*
 * Entry points that share an address (aliases) are probed once: a second
 * probe there would report every call twice. The later name in the list,
 * the newer ABI, wins.
 */
static int probe_offsets(struct cuda_tracer *t, struct cuda_library *lib, const char *path,
			 const uint64_t *offsets)
{
	struct u64_map by_offset;
	uint64_t offset, api;
	int err = 0;

	u64_map_init(&by_offset);
	for (uint32_t a = 1; a < GRT_CUDA_API_COUNT && !err; a++)
		if (offsets[a])
			err = u64_map_put(&by_offset, offsets[a], a);
	if (!err && t->multi) {
		err = attach_multi(t, lib, path, &by_offset);
	} else if (!err) {
		lib->links = calloc(2 * u64_map_size(&by_offset), sizeof(*lib->links));
		err = lib->links ? 0 : -ENOMEM;
		for (size_t i = 0; !err && u64_map_iter(&by_offset, &i, &offset, &api);) {
			int refusal = attach_single(t, lib, path, (uint32_t)api, offset, false);

			/* an entry probe whose return probe was refused stays: it sends nothing */
			if (!refusal)
				refusal = attach_single(t, lib, path, (uint32_t)api, offset, true);
			if (out_of_fds(refusal))
				err = refusal;
			else if (refusal)
				note_refusal(lib, (uint32_t)api, refusal);
		}
	}
	/* all refused: nothing will be seen, and the last refusal says why */
	if (!err && lib->refused == u64_map_size(&by_offset))
		err = lib->refusal;
	u64_map_destroy(&by_offset);
	return err;
}

/*
 * A status record per library: which file, how many entry points were probed,
 * absent or refused, and the refused ones by name (their calls go unseen).
 */
static void note_library(struct cuda_tracer *t, const char *shown_path, int found,
			 const struct cuda_library *lib)
{
	char message[PATH_MAX + 512];
	size_t len;

	len = (size_t)snprintf(message, sizeof(message),
			       "%s: %d of %d entry points probed, %d absent, %u refused", shown_path,
			       found - (int)lib->refused, GRT_CUDA_API_COUNT - 1,
			       GRT_CUDA_API_COUNT - 1 - found, lib->refused);
	for (unsigned i = 0; i < lib->refused && len < sizeof(message); i++)
		len += (size_t)snprintf(message + len, sizeof(message) - len, "%s%s",
					i ? ", " : " (", cuda_api_symbol(lib->refused_api[i]));
	if (lib->refused && len < sizeof(message))
		snprintf(message + len, sizeof(message) - len, ")");
	grt_session_status(t->session, GRT_SRC_CUDA, 0, 0, message);
}

/* Records why a library was not probed; returns -err. The callers report it (attach_later). */
static int library_failed(struct cuda_tracer *t, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int library_failed(struct cuda_tracer *t, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

/*
 * Probes every listed entry point of the library at path (open_path: where
 * this process reaches it). Entry points the library lacks are skipped. A
 * file already probed (same inode) is a no-op returning 0.
 */
static int attach_library_fd(struct cuda_tracer *t, const char *open_path, const char *shown_path,
			     const struct stat *st)
{
	const char *names[GRT_CUDA_API_COUNT];
	uint64_t offsets[GRT_CUDA_API_COUNT];
	struct cuda_library *lib;
	int found, err;

	for (unsigned i = 0; i < t->nlibs; i++)
		if (t->libs[i].dev == st->st_dev && t->libs[i].ino == st->st_ino)
			return 0;
	if (t->nlibs == CUDA_MAX_LIBRARIES)
		return library_failed(t, -ENOSPC, "more than %d copies of libcuda to probe",
				      CUDA_MAX_LIBRARIES);
	names[0] = "";
	for (uint32_t a = 1; a < GRT_CUDA_API_COUNT; a++)
		names[a] = cuda_api_symbol(a);
	found = elf_find_functions(open_path, names + 1, GRT_CUDA_API_COUNT - 1, offsets + 1);
	offsets[0] = 0;
	if (found > 0)
		elf_skip_landing_pads(open_path, offsets + 1, GRT_CUDA_API_COUNT - 1);
	if (found == -ENOEXEC)
		return library_failed(t, found,
				      "%s is not a valid shared library (not ELF, or cut short)",
				      shown_path);
	if (found < 0)
		return library_failed(t, found, "libcuda %s: %s", shown_path, strerror(-found));
	if (!found)
		return library_failed(t, -ENOENT, "%s exports none of the CUDA driver entry points",
				      shown_path);
	if (t->check_only)
		return 0;
	lib = &t->libs[t->nlibs];
	err = probe_offsets(t, lib, open_path, offsets);
	if (err) {
		library_release(lib);
		if (out_of_fds(err))
			return library_failed(t, err, "cannot attach uprobes to %s: out of file "
					      "descriptors (a probe holds one or two); raise ulimit -n",
					      shown_path);
		return library_failed(t, err, "cannot attach uprobes to %s: %s", shown_path,
				      libbpf_reason(err));
	}
	lib->dev = st->st_dev;
	lib->ino = st->st_ino;
	t->nlibs++;
	note_library(t, shown_path, found, lib);
	return 0;
}

static int attach_library(struct cuda_tracer *t, const char *open_path, const char *shown_path)
{
	char fd_path[64];
	void *mapped;
	struct stat st;
	int err, fd;

	/*
	 * One open file for everything that follows: its symbols are read and
	 * its uprobes attached through /proc/self/fd, so they are the same inode
	 * even if the path is swapped meanwhile; a FIFO or device is refused.
	 */
	fd = regular_file_open(open_path, &st);
	if (fd == REGULAR_FILE_NOT_REGULAR)
		return library_failed(t, -ENOEXEC, "%s is not a valid shared library (not a regular file)",
				      shown_path);
	if (fd < 0)
		return library_failed(t, fd, "libcuda %s: %s", shown_path, strerror(-fd));
	snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
	/*
	 * The kernel checks an entry point's first instruction only where a
	 * process maps the file when the probe is attached; elsewhere a probe it
	 * cannot take is accepted and then silently left out at the target's
	 * mmap. Mapping the file here (read-only, never run) makes every attach
	 * see the refusal, whether the target runs already or is launched later
	 * and whether another process happens to map the same file.
	 */
	mapped = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)
			    : MAP_FAILED;
	err = attach_library_fd(t, fd_path, shown_path, &st);
	if (mapped != MAP_FAILED)
		munmap(mapped, (size_t)st.st_size);
	close(fd);
	return err;
}

/* ---- finding libraries ---- */

/* --cuda-via inject: whether the library announced itself in pid (it records it). */
static bool inproc_records(struct cuda_tracer *t, __u32 pid)
{
	__u8 one;

	return !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.inproc_tgids), &pid, &one) ||
	       cuda_inproc_has_process(t->inproc, pid);
}

/*
 * --cuda-via inject: a traced process that maps libcuda without the library
 * in it (static, setuid, LD_PRELOAD cleared). Its libcuda is probed from now
 * on; the trace says which path recorded it.
 */
static void note_uprobe_process(struct cuda_tracer *t, __u32 pid)
{
	char message[160];

	if (u64_map_get(&t->uprobe_pids, pid, NULL) || u64_map_put(&t->uprobe_pids, pid, 1))
		return;
	snprintf(message, sizeof(message),
		 "pid %u: CUDA calls recorded by uprobes (libgrtrace-inject is not in it)", pid);
	grt_session_status(t->session, GRT_SRC_CUDA, pid, 0, message);
}

/*
 * A copy found while tracing that could not be probed: its calls go unseen, so the trace says
 * why (once per reason: the next rescan tries the copy again).
 */
static int attach_later(struct cuda_tracer *t, const char *open_path, const char *shown_path)
{
	int err;

	t->why[0] = 0;
	err = attach_library(t, open_path, shown_path);
	if (err >= 0 || !t->why[0] || !strcmp(t->why, t->why_told))
		return err;
	snprintf(t->why_told, sizeof(t->why_told), "%s", t->why);
	grt_session_status(t->session, GRT_SRC_CUDA, 0, err, t->why);
	return err;
}

static int attach_found(const struct cuda_lib_found *lib, void *ctx)
{
	return attach_later(ctx, lib->open_path, lib->path);
}

/*
 * Every traced process (the target and its descendants) is looked at for a
 * libcuda copy at a path not probed yet: dlopen() of another driver copy.
 */
static void rescan_traced(struct cuda_tracer *t)
{
	int fd = grt_session_pid_map_fd(t->session);
	__u32 key = 0, next;
	bool first = true;

	if (fd < 0)
		return;
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		key = next;
		first = false;
		if (t->inproc && inproc_records(t, next))
			continue;
		/* a failure here is one unreadable process, not a reason to stop tracing */
		if (cuda_locate_in_pid((pid_t)next, attach_found, t) > 0 && t->inproc)
			note_uprobe_process(t, next);
	}
}

static int attach_initial(struct cuda_tracer *t)
{
	const struct grt_session_config *cfg = grt_session_config(t->session);
	char cached[PATH_MAX];
	int err;

	t->why[0] = 0;
	if (cfg->libcuda_path)
		err = attach_library(t, cfg->libcuda_path, cfg->libcuda_path);
	else if (cfg->target_pid && cuda_locate_in_pid(cfg->target_pid, attach_found, t) > 0)
		err = 0;
	else if (t->why[0])
		err = -EINVAL; /* the target maps a libcuda that could not be probed */
	else if (!libcuda_find_for_launch(cfg->target_env, cached, sizeof(cached)))
		err = attach_library(t, cached, cached);
	else
		err = -ENOENT;
	if (err && t->why[0])
		return grt_session_fail(t->session, err, "%s", t->why);
	if (!err)
		return 0;
	if (cfg->target_pid)
		return grt_session_fail(
		    t->session, -ENOENT,
		    "no libcuda.so.1 mapped in pid %d nor in %s (name it with --libcuda PATH)",
		    (int)cfg->target_pid, libcuda_search_description());
	return grt_session_fail(t->session, -ENOENT,
				"no libcuda.so.1 in %s (name it with --libcuda PATH)",
				libcuda_search_description());
}

/* ---- system-wide discovery ---- */

static int watch_found(void *ctx, const char *open_path, const char *shown_path)
{
	return attach_later(ctx, open_path, shown_path);
}

static int watch_ready(void *ctx)
{
	libcuda_watch_poll(ctx);
	return 0;
}

/* record -a: every libcuda file mapped now or later is probed (libcuda_watch.h). */
static int watch_everything(struct cuda_tracer *t)
{
	const char *given = grt_session_config(t->session)->libcuda_path;
	const struct libcuda_watch_config wc = {
	    .pid_map_fd = -1,
	    .extra_paths = &given,
	    .nextra = given ? 1 : 0,
	    .found = watch_found,
	    .ctx = t,
	};
	char why[512];
	int err;

	t->why[0] = 0;
	err = libcuda_watch_start(&t->watch, &wc, why, sizeof(why));
	if (err)
		return grt_session_fail(t->session, err, "cuda: %s", why);
	if (!t->nlibs && t->why[0])
		return grt_session_fail(t->session, -ENOENT, "%s", t->why);
	if (!t->nlibs)
		return grt_session_fail(t->session, -ENOENT,
					"no process maps a libcuda.so.1 and none is in %s (name it "
					"with --libcuda PATH)",
					libcuda_search_description());
	err = grt_session_watch_fd(t->session, libcuda_watch_fd(t->watch), watch_ready, t->watch);
	return err ? grt_session_fail(t->session, err, "cuda: %s", strerror(-err)) : 0;
}

/* ---- events ---- */

static int lookup_stack(void *ctx, uint32_t stack_id, uint64_t *ips)
{
	struct cuda_tracer *t = ctx;

	if (t->inproc && stack_id >= CUDA_INPROC_STACK_BASE)
		return cuda_inproc_stack(t->inproc, stack_id, ips);
	return stack_store_get(&t->stacks, stack_id, ips);
}

/*
 * A BPF event (len >= sizeof(struct cuda_event)) with frames behind it
 * (cuda_stack_event): the decoder gets it with their id in stack_id. Most
 * events carry none and go as they are.
 */
static int decode_with_stack(struct cuda_tracer *t, const void *data, size_t len)
{
	const struct cuda_stack_event *se = data;
	struct cuda_event ev;

	ev = se->event;
	/* never a frame count taken for an id: frames that are not all there are none */
	ev.stack_id = len >= sizeof(*se) && ev.stack_id <= CUDA_STACK_DEPTH
			  ? stack_store_id(&t->stacks, (const uint64_t *)se->ips, (uint32_t)ev.stack_id)
			  : -1;
	if (ev.stack_id < 0)
		ev.flags |= CUDA_EVENT_STACK_LOST;
	return cuda_decoder_event(t->decoder, &ev, sizeof(ev));
}

static int on_cuda_event(void *ctx, void *data, size_t len)
{
	struct cuda_tracer *t = ctx;
	const struct cuda_event *ev = data;
	int err = len >= sizeof(*ev) && ev->stack_id > 0 ? decode_with_stack(t, data, len)
							  : cuda_decoder_event(t->decoder, data, len);

	if (err && !t->sink_error)
		t->sink_error = err;
	/* a storm never empties the ring: give the session loop its turn */
	if (++t->batch >= CUDA_BATCH_EVENTS) {
		t->batch = 0;
		return -EAGAIN;
	}
	return 0;
}

static void flush_event(struct cuda_tracer *t, struct cuda_event *ev)
{
	/* its frames stayed in the thread's storage, gone with the thread or read by no one */
	if (ev->stack_id > 0) {
		ev->stack_id = -1;
		ev->flags |= CUDA_EVENT_STACK_LOST;
	}
	ev->flags |= CUDA_EVENT_NO_RETURN;
	ev->text_len = 0;
	cuda_decoder_event(t->decoder, ev, sizeof(*ev));
}

/* A thread's launch slot (grt_bpf_foreach_task_value): the launch it is inside, if any. */
static void flush_launch(pid_t tid, void *value, void *ctx)
{
	struct cuda_launch_slot *slot = value;

	if (slot->in_flight)
		flush_event(ctx, &slot->ev);
}

/* Calls in flight when tracing stops still happened: they become records flagged no-return. */
static void flush_unreturned(struct cuda_tracer *t)
{
	struct cuda_launch_slot slot;
	int fd = bpf_map__fd(t->skel->maps.calls);
	struct cuda_event ev;
	struct cuda_call_key key = {0}, next;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &ev))
			flush_event(t, &ev);
		key = next;
		first = false;
	}
	grt_bpf_foreach_task_value(t->session, bpf_map__fd(t->skel->maps.launch_slots), &slot,
				   flush_launch, t);
}

/* ---- the source interface ---- */

static int cuda_probe(char *why, size_t why_len)
{
	int err = grt_bpf_probe(why, why_len);

	if (err)
		return err;
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		snprintf(why, why_len,
			 "this kernel has no uprobe events (CONFIG_UPROBE_EVENTS), "
			 "which the cuda source needs");
		return -ENOSYS;
	}
	return 0;
}

/* All libraries' links closed together, so their grace-period waits overlap. */
static void release_libraries(struct cuda_tracer *t)
{
	unsigned total = 0, at = 0;
	int *fds;

	for (unsigned i = 0; i < t->nlibs; i++)
		total += t->libs[i].nfds;
	fds = calloc(total ? total : 1, sizeof(*fds));
	for (unsigned i = 0; fds && i < t->nlibs; i++) {
		if (!t->libs[i].nfds)
			continue; /* perf-event links only (no uprobe_multi): no array of fds */
		memcpy(fds + at, t->libs[i].link_fds, t->libs[i].nfds * sizeof(*fds));
		at += t->libs[i].nfds;
		t->libs[i].nfds = 0;
	}
	grt_close_links_parallel(fds, at);
	free(fds);
	for (unsigned i = 0; i < t->nlibs; i++)
		library_release(&t->libs[i]);
	t->nlibs = 0;
}

/* How many calls came from grtrace's own threads in the target (kept, flagged own). */
static void note_own_calls(struct cuda_tracer *t)
{
	uint64_t own = cuda_decoder_own_calls(t->decoder);
	char message[160];

	if (!own)
		return;
	snprintf(message, sizeof(message),
		 "%llu calls from grtrace's own threads in the target, flagged own (left out of reports)",
		 (unsigned long long)own);
	grt_session_status(t->session, GRT_SRC_CUDA, 0, 0, message);
}

static void cuda_detach(void *ctx)
{
	struct cuda_tracer *t = ctx;

	if (!t)
		return;
	/* no new events first, then everything still queued, then the calls that never returned */
	libcuda_watch_stop(t->watch);
	release_libraries(t);
	for (unsigned i = 0; i < 2; i++)
		bpf_link__destroy(t->inproc_links[i]);
	cuda_inproc_stop(t->inproc);
	if (t->ring)
		while (ring_buffer__consume(t->ring) == -EAGAIN)
			;
	if (t->skel && t->decoder)
		flush_unreturned(t);
	if (t->decoder)
		note_own_calls(t);
	ring_buffer__free(t->ring);
	cuda_decoder_free(t->decoder);
	cuda_bpf__destroy(t->skel);
	u64_map_destroy(&t->uprobe_pids);
	stack_store_destroy(&t->stacks);
	free(t);
}

/* CUDA_RING_BYTES, or GRT_CUDA_RING_KB (a power of two, >= 4): tests that provoke losses. */
static uint32_t ring_bytes(void)
{
	const char *kb = getenv("GRT_CUDA_RING_KB");
	unsigned long n = kb ? strtoul(kb, NULL, 10) : 0;

	return n >= 4 && n <= (1ul << 20) && !(n & (n - 1)) ? (uint32_t)(n * 1024)
							    : CUDA_RING_BYTES;
}

/* --launch-returns N: one launch's return in N per thread, 0 none; when not given, every one. */
static uint32_t launch_return_every(const struct grt_session *s)
{
	const char *text = grt_session_option(s, "launch-returns");
	uint64_t every = 1;

	/* checked by check_launch_returns before the session started */
	if (text)
		num_parse_u64(text, 0, LAUNCH_RETURNS_MAX, &every);
	return (uint32_t)every;
}

/*
 * Launches are probed with uprobe sessions where the kernel has them: the
 * entry program decides whether the return is seen at all. Without them,
 * --launch-returns 1 is an entry and a return probe, 0 an entry probe
 * alone, and any other N an error: sampling there would still pay the
 * return trap of every launch, the cost the option exists to avoid.
 */
static int choose_launch_probes(struct cuda_tracer *t)
{
	bool sessions = t->multi && !getenv("GRT_CUDA_NO_UPROBE_SESSION") &&
			grt_uprobe_session_supported();
	const char *why = getenv("GRT_CUDA_NO_UPROBE_SESSION") ? "GRT_CUDA_NO_UPROBE_SESSION turns off"
			  : getenv("GRT_CUDA_NO_UPROBE_MULTI") ? "GRT_CUDA_NO_UPROBE_MULTI turns off"
							       : "this kernel lacks";

	t->launch_return_every = launch_return_every(t->session);
	t->skel->rodata->launch_return_every = t->launch_return_every;
	if (sessions)
		t->launch_probes = GRT_CUDA_PROBES_SESSION;
	else if (t->launch_return_every == 0)
		t->launch_probes = GRT_CUDA_PROBES_ENTRY;
	else if (t->launch_return_every == 1)
		t->launch_probes = GRT_CUDA_PROBES_RETPROBE;
	else
		return grt_session_fail(t->session, -EOPNOTSUPP,
					"cuda: --launch-returns %u needs uprobe sessions "
					"(BPF_TRACE_UPROBE_SESSION, Linux 6.13+), which %s; use "
					"--launch-returns 1 (every launch) or 0 (none)",
					t->launch_return_every, why);
	for (int cls = 0; cls < CUDA_CLASS_COUNT; cls++) {
		if (!cuda_class_is_launch(cls))
			continue;
		if (sessions)
			bpf_program__set_expected_attach_type(t->both[cls],
							      GRT_BPF_TRACE_UPROBE_SESSION);
		else
			bpf_program__set_autoload(t->both[cls], false);
	}
	return 0;
}

static int load_programs(struct cuda_tracer *t)
{
	int err;

	t->skel = cuda_bpf__open();
	if (!t->skel)
		return grt_session_fail(t->session, -errno, "cuda: cannot open the BPF object: %s",
					libbpf_reason(-errno));
	err = find_programs(t);
	if (err)
		return grt_session_fail(t->session, err, "cuda: the BPF object lacks a program");
	err = bpf_map__set_max_entries(t->skel->maps.events, ring_bytes());
	t->skel->rodata->wakeup_bytes = ring_bytes() / 16;
	/* benchmark switches: what stacks and argument words cost */
	t->skel->rodata->capture_stacks = !getenv("GRT_CUDA_NO_STACKS");
	t->skel->rodata->capture_launch_stacks = grt_session_option(t->session, "launch-stacks") != NULL;
	t->skel->rodata->capture_args = !getenv("GRT_CUDA_NO_ARGS");
	t->multi = grt_uprobe_multi_supported() && !getenv("GRT_CUDA_NO_UPROBE_MULTI");
	for (struct bpf_program *p = NULL;
	     t->multi && (p = bpf_object__next_program(t->skel->obj, p));)
		if (p != t->skel->progs.inproc_begin && p != t->skel->progs.inproc_exec)
			bpf_program__set_expected_attach_type(p, GRT_BPF_TRACE_UPROBE_MULTI);
	t->skel->rodata->inproc_filter = t->via_inject;
	bpf_program__set_autoload(t->skel->progs.inproc_begin, t->via_inject);
	bpf_program__set_autoload(t->skel->progs.inproc_exec, t->via_inject);
	if (!err && choose_launch_probes(t))
		return -EOPNOTSUPP; /* it said why */
	if (!err)
		err = grt_bpf_use_pid_filter(t->session, t->skel->obj,
					     &t->skel->rodata->filter_by_tgid);
	if (!err)
		err = cuda_bpf__load(t->skel);
	if (err)
		return grt_session_fail(t->session, err,
					"cuda: loading the BPF programs failed: %s",
					libbpf_reason(err));
	return 0;
}

/* The settings record: what launch records can hold, for parse and report. */
static void note_config(struct cuda_tracer *t)
{
	struct grt_cuda_config_rec rec = {
	    .launch_return_every = t->launch_return_every,
	    .launch_probes = t->inproc ? GRT_CUDA_PROBES_INPROC : t->launch_probes,
	    .launch_stacks = grt_session_option(t->session, "launch-stacks") != NULL,
	};
	struct grt_event_origin origin = {.ts_ns = grt_monotonic_ns()};

	grt_session_emit(t->session, GRT_REC_CUDA_CONFIG, &origin, &rec, sizeof(rec));
}

/*
 * --cuda-via: inject when grtrace launches the command and the library is
 * there (the default), uprobe for -p, -a, or when asked.
 */
static int choose_via(struct cuda_tracer *t)
{
	const struct grt_session_config *cfg = grt_session_config(t->session);
	const char *via = grt_session_option(t->session, "cuda-via");
	bool inject = via && !strcmp(via, "inject");
	char lib[PATH_MAX];

	if (via && !strcmp(via, "uprobe"))
		return 0;
	if (inject && (!cfg->launched || cfg->system_wide))
		return grt_session_fail(t->session, -EINVAL,
					"cuda: --cuda-via inject needs a command to launch (-- CMD); "
					"use --cuda-via uprobe with -p or -a");
	t->via_inject = cfg->launched && !cfg->system_wide &&
			(inject || !gpu_find_inject_lib(lib, sizeof(lib)));
	return 0;
}

/* The library's announcement in each process, and its forgetting at exec (cuda.bpf.c). */
static int attach_inproc_probes(struct cuda_tracer *t)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "grt_cuda_inproc_begin");
	char lib[PATH_MAX];
	int err;

	err = gpu_find_inject_lib(lib, sizeof(lib));
	if (!err) {
		t->inproc_links[0] =
		    bpf_program__attach_uprobe_opts(t->skel->progs.inproc_begin, -1, lib, 0, &opts);
		err = t->inproc_links[0] ? 0 : -errno;
	}
	if (!err) {
		t->inproc_links[1] = bpf_program__attach(t->skel->progs.inproc_exec);
		err = t->inproc_links[1] ? 0 : -errno;
	}
	return err ? grt_session_fail(t->session, err,
				      "cuda: cannot probe libgrtrace-inject.so's announcement: %s",
				      libbpf_reason(err))
		   : 0;
}

/*
 * In-process recording. The libcuda probes are attached only when a traced
 * process turns out to map libcuda without the library (rescan_traced), so
 * that processes recorded in-process pay no uprobe trap.
 */
static int attach_inproc(struct cuda_tracer *t)
{
	const struct grt_session_config *cfg = grt_session_config(t->session);
	struct call_rings_config rc = {
	    .launch_return_every = t->launch_return_every,
	    .launch_stacks = grt_session_option(t->session, "launch-stacks") != NULL,
	    .stacks = !getenv("GRT_CUDA_NO_STACKS"),
	    .args = !getenv("GRT_CUDA_NO_ARGS"),
	};
	int err;

	/* a libcuda named or found for the command is checked now, as the uprobe path would */
	if (cfg->libcuda_path) {
		t->why[0] = 0;
		t->check_only = true;
		err = attach_library(t, cfg->libcuda_path, cfg->libcuda_path);
		t->check_only = false;
		if (err)
			return grt_session_fail(t->session, err, "%s", t->why);
	}
	err = cuda_inproc_start(t->session, t->decoder, &rc, &t->inproc);
	return err ? err : attach_inproc_probes(t);
}

static int cuda_attach(struct grt_session *s, void **ctx)
{
	struct cuda_tracer *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->session = s;
	u64_map_init(&t->uprobe_pids);
	stack_store_init(&t->stacks, 0);
	grt_bpf_capture_messages();
	err = choose_via(t);
	if (!err)
		err = load_programs(t);
	if (!err) {
		t->decoder = cuda_decoder_new(s, lookup_stack, t);
		err = t->decoder ? 0 : grt_session_fail(s, -ENOMEM, "cuda: out of memory");
	}
	if (!err && t->via_inject)
		err = attach_inproc(t);
	else if (!err)
		err = grt_session_config(s)->system_wide ? watch_everything(t) : attach_initial(t);
	/* last: the session keeps calling a watched fd's handler even after a failed attach */
	if (!err) {
		t->ring =
		    grt_bpf_watch_ringbuf(s, bpf_map__fd(t->skel->maps.events), on_cuda_event, t);
		err = t->ring
			  ? 0
			  : grt_session_fail(s, -errno, "cuda: ring buffer: %s", strerror(errno));
	}
	if (err) {
		cuda_detach(t);
		return err;
	}
	note_config(t);
	if (grt_session_config(s)->target_pid)
		rescan_traced(t);
	t->next_rescan_ns = grt_monotonic_ns() + CUDA_RESCAN_NS;
	*ctx = t;
	return 0;
}

static int cuda_drain(void *ctx)
{
	struct cuda_tracer *t = ctx;
	uint64_t now;
	int err;

	if (t->inproc && (err = cuda_inproc_drain(t->inproc)))
		return err;
	/* events are sent without waking us (see wakeup_bytes): every tick collects them */
	ring_buffer__consume(t->ring);
	grt_session_count_drop(
	    t->session, GRT_SRC_CUDA,
	    grt_bpf_new_drops(bpf_map__fd(t->skel->maps.dropped_events), &t->drops_seen));
	if (t->watch)
		libcuda_watch_poll(t->watch); /* its periodic rescan */
	if (grt_session_config(t->session)->target_pid) {
		now = grt_monotonic_ns();
		if (now >= t->next_rescan_ns) {
			rescan_traced(t);
			t->next_rescan_ns = now + CUDA_RESCAN_NS;
		}
	}
	return t->sink_error;
}

static int check_launch_returns(const char *text, char *why, size_t why_len)
{
	uint64_t every;
	int err = num_parse_u64(text, 0, LAUNCH_RETURNS_MAX, &every);

	if (err)
		snprintf(why, why_len, "bad value '%s' for --launch-returns: %sgive a whole number from 0 to %u",
			 text, err == -ERANGE ? "out of range; " : "", LAUNCH_RETURNS_MAX);
	return err;
}

static int check_cuda_via(const char *text, char *why, size_t why_len)
{
	if (!strcmp(text, "inject") || !strcmp(text, "uprobe"))
		return 0;
	snprintf(why, why_len, "bad value '%s' for --cuda-via; give inject or uprobe", text);
	return -EINVAL;
}

static const struct grt_source_option cuda_options[] = {
	{ "launch-stacks", NULL,
	  "cuda source: user stacks of launches too (allocations always\n"
	  "                     have them; about 1 us more per launch)", NULL },
	{ "launch-returns", "N",
	  "cuda source: record the return (API time, return code) of\n"
	  "                     one launch in N per thread, 0 none (default 1: every one);\n"
	  "                     a launch without needs one trap instead of two",
	  check_launch_returns },
	{ "cuda-via", "WAY",
	  "cuda source: inject (the in-process library; the default\n"
	  "                     for a launched command) or uprobe (the default for -p, -a)",
	  check_cuda_via, .needs_command = "inject" },
	{ NULL },
};

static const struct grt_source cuda_source = {
    .name = "cuda",
    .id = GRT_SRC_CUDA,
    .summary = "CUDA driver API calls (uprobes on libcuda.so.1): launches, memory, copies, syncs",
    .probe = cuda_probe,
    .attach = cuda_attach,
    .drain = cuda_drain,
    .detach = cuda_detach,
    .options = cuda_options,
};

GRT_SOURCE_REGISTER(cuda_source);
