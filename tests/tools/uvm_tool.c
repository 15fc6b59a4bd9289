/* uvm_tool: raw UVM queue capture, live uvm snoop, uvm trace to CSV (GPU bench helper). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "export/snoop_uvm.h"
#include "sources/session.h"
#include "sources/uvm_bind.h"
#include "sources/uvm_capture.h"
#include "sources/uvm_decode.h"
#include "trace/grt_reader.h"
#include "trace/records_uvm.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = 1;
}

static void install_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- rawcap: two trackers (v1 and v2) on one process, entries kept as the driver wrote them ----
 */

struct raw_capture {
	struct uvm_tracker tracker;
	uint8_t *data;
	size_t len, cap;
	uint64_t count;
};

static void keep_entry(void *ctx, const void *entry)
{
	struct raw_capture *c = ctx;
	size_t size = c->tracker.queue.entry_size;

	if (c->len + size > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1 << 20;
		uint8_t *grown = realloc(c->data, cap);

		if (!grown)
			return;
		c->data = grown;
		c->cap = cap;
	}
	memcpy(c->data + c->len, entry, size);
	c->len += size;
	c->count++;
}

static int write_sample(const char *dir, struct raw_capture *c, pid_t pid)
{
	struct uvm_capture_header h = {.version = c->tracker.version,
				      .entry_size = c->tracker.queue.entry_size,
				      .count = c->count,
				      .owner_pid = (uint32_t)pid};
	struct uvm_clock_map clock;
	char path[4096];
	FILE *f;

	memcpy(h.magic, UVM_CAPTURE_MAGIC, 8);
	uvm_clock_map_sample(&clock);
	h.mono_minus_raw_ns = clock.mono_minus_raw;
	h.dropped = uvm_queue_new_drops(&c->tracker.queue, NULL, NULL);
	if ((f = fopen("/sys/module/nvidia_uvm/version", "r"))) {
		if (fgets(h.driver, sizeof(h.driver), f))
			h.driver[strcspn(h.driver, "\n")] = 0;
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/v%u.bin", dir, c->tracker.version);
	if (!(f = fopen(path, "wb")))
		return -errno;
	fwrite(&h, sizeof(h), 1, f);
	fwrite(c->data, 1, c->len, f);
	if (fclose(f))
		return -errno;
	printf("rawcap: %s: %" PRIu64 " entries of %u bytes (queue v%u), %" PRIu64
	       " dropped, driver %s\n",
	       path, c->count, h.entry_size, h.version, h.dropped, h.driver);
	return 0;
}

/* Waits for pid's VA-space UVM descriptor and binds one tracker per version to it. */
static int rawcap_bind(pid_t pid, int pidfd, struct raw_capture caps[2], int *uvm_fd, bool want_v1)
{
	uint64_t deadline = mono_ns() + 60ULL * 1000000000ULL;
	uint32_t last_status = UVM_NV_OK;

	while (!stop_requested && mono_ns() < deadline && !uvm_pidfd_exited(pidfd)) {
		int fds[16], n = uvm_find_fds(pid, UVM_DEVICE_PATH, fds, 16);

		for (int i = 0; i < n; i++) {
			int local = uvm_pidfd_getfd(pidfd, fds[i]);
			uint32_t st2 = 0, st1 = 0;
			uint64_t en;

			if (local < 0) {
				fprintf(stderr, "rawcap: pidfd_getfd(%d, %d): %s\n", (int)pid,
					fds[i], strerror(-local));
				return local;
			}
			/* v2 is required; v1 is taken too where the driver still offers it */
			if (!uvm_tracker_open(&caps[1].tracker, UVM_TOOLS_DEVICE_PATH, local,
					      1u << 16, UVM_QUEUE_V2, &st2) &&
			    !uvm_tracker_enable(&caps[1].tracker, UVM_EV_MASK_ALL, &en)) {
				if (want_v1 &&
				    (uvm_tracker_open(&caps[0].tracker, UVM_TOOLS_DEVICE_PATH,
						      local, 1u << 16, UVM_QUEUE_V1, &st1) ||
				     uvm_tracker_enable(&caps[0].tracker, UVM_EV_MASK_ALL, &en))) {
					printf("rawcap: no v1 tracker (status 0x%x)\n", st1);
					uvm_tracker_close(&caps[0].tracker);
				}
				*uvm_fd = local;
				printf("rawcap: bound to pid %d fd %d (tracker v%u%s, events "
				       "0x%" PRIx64 ")\n",
				       (int)pid, fds[i], caps[1].tracker.version,
				       caps[0].tracker.tools_fd >= 0 ? " and v1" : "", en);
				return 0;
			}
			if (st2 != last_status) /* once per kind of refusal, not every retry */
				fprintf(stderr,
					"rawcap: pid %d fd %d: no tracker yet (status 0x%x)\n",
					(int)pid, fds[i], st2);
			last_status = st2;
			uvm_tracker_close(&caps[0].tracker);
			uvm_tracker_close(&caps[1].tracker);
			close(local);
		}
		usleep(2000);
	}
	return -ETIMEDOUT;
}

static int cmd_rawcap(int argc, char **argv)
{
	struct raw_capture caps[2] = {0};
	pid_t pid = 0;
	const char *dir = ".";
	int opt, pidfd, uvm_fd = -1, err;
	bool want_v1 = true;

	/* -2: the v2 tracker only (what grtrace itself binds), for measuring the driver's share */
	while ((opt = getopt(argc, argv, "p:o:2")) != -1) {
		if (opt == '2')
			want_v1 = false;
		else if (opt == 'p')
			pid = atoi(optarg);
		else if (opt == 'o')
			dir = optarg;
		else
			return 2;
	}
	if (pid <= 0 || (pidfd = uvm_pidfd_open(pid)) < 0) {
		fprintf(stderr, "rawcap: need -p PID of a live process\n");
		return 2;
	}
	uvm_tracker_init(&caps[0].tracker);
	uvm_tracker_init(&caps[1].tracker);
	install_signals();
	err = rawcap_bind(pid, pidfd, caps, &uvm_fd, want_v1);
	if (err) {
		fprintf(stderr, "rawcap: could not bind to pid %d: %s\n", (int)pid, strerror(-err));
		return 1;
	}
	while (!stop_requested && !uvm_pidfd_exited(pidfd)) {
		struct pollfd p[2] = {{.fd = caps[0].tracker.tools_fd, .events = POLLIN},
				      {.fd = caps[1].tracker.tools_fd, .events = POLLIN}};

		poll(p, 2, 20);
		for (int i = 0; i < 2; i++)
			if (caps[i].tracker.tools_fd >= 0)
				uvm_queue_drain(&caps[i].tracker.queue, keep_entry, &caps[i]);
	}
	uvm_flush_events(uvm_fd);
	for (int i = 0; i < 2; i++) {
		if (caps[i].tracker.tools_fd < 0)
			continue;
		uvm_queue_drain(&caps[i].tracker.queue, keep_entry, &caps[i]);
		if (write_sample(dir, &caps[i], pid))
			err = 1;
		uvm_tracker_close(&caps[i].tracker);
		free(caps[i].data);
	}
	close(uvm_fd);
	close(pidfd);
	return err ? 1 : 0;
}

/* ---- snoop: the uvm source through the session, printed live (until cmd_snoop carries it) ---- */

static int cmd_snoop(int argc, char **argv)
{
	struct grt_session_config cfg = {0};
	struct snoop_uvm *printer;
	struct grt_session *s;
	double seconds = 0;
	bool csv = false;
	uint64_t start;
	int opt;

	while ((opt = getopt(argc, argv, "p:cd:")) != -1) {
		if (opt == 'p')
			cfg.target_pid = atoi(optarg);
		else if (opt == 'c')
			csv = true;
		else if (opt == 'd')
			seconds = atof(optarg);
		else
			return 2;
	}
	printer = snoop_uvm_new(stdout, csv);
	s = printer ? grt_session_new(&cfg, snoop_uvm_sink(printer)) : NULL;
	if (!s) {
		fprintf(stderr, "snoop: out of memory\n");
		return 1;
	}
	if (grt_session_attach(s, "uvm")) {
		fprintf(stderr, "grtrace: snoop: %s\n", grt_session_error(s));
		grt_session_free(s);
		snoop_uvm_free(printer);
		return 1;
	}
	install_signals();
	start = mono_ns();
	while (!stop_requested) {
		grt_session_poll(s, 100);
		if (cfg.target_pid && kill(cfg.target_pid, 0) && errno == ESRCH)
			break;
		if (seconds > 0 && mono_ns() - start >= (uint64_t)(seconds * 1e9))
			break;
	}
	grt_session_free(s);
	fprintf(stderr, "snoop: %" PRIu64 " uvm events\n", snoop_uvm_events(printer));
	snoop_uvm_free(printer);
	return 0;
}

/* ---- csv: a recorded trace back to the snoop CSV ---- */

static struct grt_reader *open_trace(const char *path)
{
	char err[256];
	struct grt_reader *r = grt_reader_open(path, err, sizeof(err));

	if (!r)
		fprintf(stderr, "%s: %s\n", path, err);
	return r;
}

static int cmd_csv(int argc, char **argv)
{
	struct snoop_uvm *p;
	struct grt_record rec;
	struct grt_reader *r;

	if (argc < 2 || !(r = open_trace(argv[1])))
		return argc < 2 ? 2 : 1;
	p = snoop_uvm_new(stdout, true);
	while (grt_reader_next(r, &rec) == GRT_READ_OK)
		if (rec.hdr.type == GRT_REC_UVM_EVENT)
			snoop_uvm_print(p, rec.hdr.pid, rec.hdr.tid, rec.hdr.ts_ns, rec.payload,
					rec.hdr.payload_len);
	snoop_uvm_free(p);
	grt_reader_close(r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "rawcap"))
		return cmd_rawcap(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "snoop"))
		return cmd_snoop(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "csv"))
		return cmd_csv(argc - 1, argv + 1);
	fprintf(stderr,
		"usage: uvm_tool rawcap [-2] -p PID [-o DIR] | snoop [-p PID] [-c] [-d SECONDS] |\n"
		"                csv FILE.grt\n");
	return 2;
}
