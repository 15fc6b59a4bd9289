/* uprobe_multi links (kernel 6.6+) through the raw bpf(2) call: this libbpf predates them. */
#ifndef GRT_UPROBE_MULTI_H
#define GRT_UPROBE_MULTI_H

#include <stdbool.h>
#include <stdint.h>

/* enum bpf_attach_type values of uprobe_multi programs: set before loading them. */
#define GRT_BPF_TRACE_UPROBE_MULTI 48
#define GRT_BPF_TRACE_UPROBE_SESSION 57 /* kernel 6.13+ */

/* Where a uprobe_multi link's program runs. */
enum grt_uprobe_mode {
	GRT_UPROBE_ENTRY,
	GRT_UPROBE_RETURN,
	/*
	 * Both: at the entry, and at the return of the calls whose entry run
	 * returned 0 (a program loaded with GRT_BPF_TRACE_UPROBE_SESSION).
	 */
	GRT_UPROBE_SESSION,
};

/* Whether this kernel attaches one program to many uprobes with one link. */
bool grt_uprobe_multi_supported(void);
/* Whether it has uprobe sessions (BPF_TRACE_UPROBE_SESSION, bpf_session_is_return()). */
bool grt_uprobe_session_supported(void);

/*
 * Attaches prog_fd (loaded with GRT_BPF_TRACE_UPROBE_MULTI, or _SESSION for
 * GRT_UPROBE_SESSION) at cnt file offsets of path, each with its cookie, for
 * every process. Returns the link fd or a negative errno.
 */
int grt_uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets,
			    const uint64_t *cookies, uint32_t cnt, enum grt_uprobe_mode mode);

/*
 * Closes n link fds at once from several threads: releasing a uprobe link
 * waits for an RCU grace period (~0.1 s), and those waits overlap only when
 * the releases do.
 */
void grt_close_links_parallel(const int *fds, unsigned n);
/* The same for libbpf links (one perf-event uprobe each, on kernels before 6.6). */
struct bpf_link;
void grt_destroy_links_parallel(struct bpf_link **links, unsigned n);

struct bpf_link;

/*
 * Releases one probed file's links: its uprobe_multi link fds (closed in
 * parallel) and its perf-event links, and frees both arrays.
 */
void grt_release_file_links(int *fds, unsigned nfds, struct bpf_link **links, unsigned nlinks);

#endif
