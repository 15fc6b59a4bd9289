/* System-wide discovery of libcuda files: at start, and whenever a process maps one not seen yet. */
#ifndef GRT_LIBCUDA_WATCH_H
#define GRT_LIBCUDA_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct libcuda_watch;

/*
 * Called once per distinct libcuda file (device and inode): open_path
 * reaches it from here (a /proc/PID/map_files link where possible),
 * shown_path is how its process names it. A negative return is remembered as
 * the watch's last failure and the file is not offered again.
 */
typedef int (*libcuda_found_fn)(void *ctx, const char *open_path, const char *shown_path);

struct libcuda_watch_config {
	/*
	 * The processes to look at: these (and their children from now on), or
	 * every process when npids is 0. Their pids go into pid_map_fd too
	 * (a BPF hash tgid -> u8, the filter every source shares), or into a
	 * map of the watch's own when pid_map_fd is negative.
	 */
	const pid_t *pids;
	unsigned npids;
	int pid_map_fd;
	/* also offered at start: --libcuda files, then the one the loader would pick */
	const char *const *extra_paths;
	unsigned nextra;
	bool skip_loader_search;
	/* seconds between full rescans of /proc (a safety net behind the probes); 0: 30 */
	double rescan_s;
	libcuda_found_fn found;
	void *ctx;
};

/*
 * Looks at every process's mappings for libcuda files and dynamic loaders,
 * offers the libcuda files, and probes the loaders (their _dl_debug_state,
 * which runs after every dlopen and dlclose) and exec: a process that maps
 * a new libcuda file is looked at again within one poll. Returns 0 or a
 * negative errno with one line in why.
 */
int libcuda_watch_start(struct libcuda_watch **out, const struct libcuda_watch_config *cfg,
			char *why, size_t why_len);
/* An fd that becomes readable when processes need a look (for epoll). */
int libcuda_watch_fd(const struct libcuda_watch *w);
/* The watch's pid filter map (the one given, or its own); -1 when every process is watched. */
int libcuda_watch_pid_map_fd(const struct libcuda_watch *w);
/* Handles pending notifications and, when due, the full rescan. Never blocks. */
void libcuda_watch_poll(struct libcuda_watch *w);
/* Whether tgid is one of the watched processes (always true when every process is). */
bool libcuda_watch_covers(const struct libcuda_watch *w, pid_t tgid);
/* Counters for health metrics. */
struct libcuda_watch_stats {
	uint64_t libraries;	 /* distinct libcuda files offered */
	uint64_t loaders;	 /* dynamic loaders probed */
	uint64_t process_scans;	 /* /proc/PID/maps reads */
	uint64_t lost_events;	 /* notifications lost (ring buffer full) */
	int last_error;		 /* the found callback's last failure, 0 when none */
};
void libcuda_watch_stats(const struct libcuda_watch *w, struct libcuda_watch_stats *out);
void libcuda_watch_stop(struct libcuda_watch *w);

#endif
