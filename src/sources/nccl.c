/* The `nccl` source: communicator creation and collectives, uprobes on the libnccl the target loads. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/types.h>
#include "common/clock.h"
#include "sources/bpf_source.h"
#include "sources/bpf_util.h"
#include "sources/cuda_locate.h"
#include "sources/libcuda_locate.h"
#include "sources/nccl.h"
#include "sources/proc_maps.h"
#include "sources/session.h"
#include "sources/source.h"
#include "trace/records_core.h"
#include "trace/records_nccl.h"
#include "nccl.skel.h"

#define LIBNCCL_SONAME "libnccl.so.2"
#define NCCL_MAX_LINKS 32	/* an entry and a return link per entry point */

struct nccl_source {
	struct grt_bpf_source base;
	struct grt_session *session;
	struct nccl_bpf *skel;
	struct bpf_link *links[NCCL_MAX_LINKS];
	unsigned nlinks;
};

/* Each probed entry point, its program and the kind its events carry (the cookie). */
static const struct {
	const char *symbol;
	uint32_t kind;
	int program;	/* index into the programs below */
} entry_points[] = {
	{ "ncclCommInitRank", NCCL_CALL_COMM_INIT, 0 },
	{ "ncclCommInitRankConfig", NCCL_CALL_COMM_INIT, 0 },
	{ "ncclCommInitRankScalable", NCCL_CALL_COMM_INIT, 5 },
	{ "ncclAllReduce", GRT_NCCL_ALL_REDUCE, 1 },
	{ "ncclReduceScatter", GRT_NCCL_REDUCE_SCATTER, 1 },
	{ "ncclAllGather", GRT_NCCL_ALL_GATHER, 2 },
	{ "ncclBroadcast", GRT_NCCL_BROADCAST, 3 },
	{ "ncclReduce", GRT_NCCL_REDUCE, 4 },
	{ "ncclSend", GRT_NCCL_SEND, 6 },
	{ "ncclRecv", GRT_NCCL_RECV, 6 },
	{ "ncclCommSplit", NCCL_CALL_COMM_SPLIT, 7 },
};

static struct bpf_program *program_of(struct nccl_source *ns, int index)
{
	struct bpf_program *programs[] = {
		ns->skel->progs.nccl_enter_comm_init, ns->skel->progs.nccl_enter_reduction,
		ns->skel->progs.nccl_enter_all_gather, ns->skel->progs.nccl_enter_broadcast,
		ns->skel->progs.nccl_enter_reduce, ns->skel->progs.nccl_enter_comm_init_scalable,
		ns->skel->progs.nccl_enter_p2p, ns->skel->progs.nccl_enter_comm_split,
	};

	return programs[index];
}

static void emit_comm(struct nccl_source *ns, const struct nccl_event *e,
		      const struct grt_event_origin *origin)
{
	struct grt_nccl_comm_rec rec = {
		.return_ns = e->return_ns, .ret = e->ret, .comm = e->ret ? 0 : e->comm,
		.comm_id = e->comm_id, .nranks = e->nranks, .rank = e->rank,
	};

	if (e->kind == NCCL_CALL_COMM_SPLIT) {
		rec.flags = GRT_NCCL_F_SPLIT;
		rec.parent = e->parent;
		rec.color = e->color;
		rec.key = e->key;
	}

	grt_session_emit(ns->session, GRT_REC_NCCL_COMM, origin, &rec, sizeof(rec));
}

static void emit_coll(struct nccl_source *ns, const struct nccl_event *e,
		      const struct grt_event_origin *origin)
{
	struct grt_nccl_coll_rec rec = {
		.return_ns = e->return_ns, .ret = e->ret, .op = e->kind, .comm = e->comm,
		.stream = e->stream, .count = e->count,
		.bytes = e->count * grt_nccl_datatype_size(e->datatype), .datatype = e->datatype,
		.root = e->root, .redop = e->redop,
	};

	grt_session_emit(ns->session, GRT_REC_NCCL_COLL, origin, &rec, sizeof(rec));
}

static int on_nccl_event(void *ctx, void *data, size_t len)
{
	const struct nccl_event *e = data;
	struct grt_event_origin origin;

	if (len < sizeof(*e))
		return 0;
	origin = (struct grt_event_origin){ .ts_ns = e->entry_ns, .cpu = e->cpu, .pid = e->pid,
					    .tid = e->tid };
	if (e->kind == NCCL_CALL_COMM_INIT || e->kind == NCCL_CALL_COMM_SPLIT)
		emit_comm(ctx, e, &origin);
	else if (e->kind < GRT_NCCL_OPS)
		emit_coll(ctx, e, &origin);
	return 0;
}

static int nccl_probe(char *why, size_t why_len)
{
	return grt_bpf_probe(why, why_len);
}

struct nccl_search {
	char *out;
	size_t len;
	bool found;
};

static int find_mapped_nccl(const struct proc_mapping *m, void *ctx)
{
	struct nccl_search *s = ctx;
	const char *base = strrchr(m->path, '/');

	if (s->found || !m->executable || !base || strncmp(base + 1, "libnccl.so", 10))
		return 0;
	snprintf(s->out, s->len, "%s", m->path);
	s->found = true;
	return 0;
}

/*
 * The libnccl to probe: --libnccl (a Python wheel's copy is off the loader
 * path), else the one an attached process maps, else the one a launched
 * command would load. -ENOENT when none.
 */
static int locate_libnccl(struct grt_session *s, char *out, size_t len)
{
	const struct grt_session_config *cfg = grt_session_config(s);
	const char *given = grt_session_option(s, "libnccl");
	struct nccl_search search = { out, len, false };

	if (given && given[0]) {
		snprintf(out, len, "%s", given);
		return 0;
	}
	if (cfg->target_pid && !cfg->launched) {
		proc_maps_foreach(cfg->target_pid, find_mapped_nccl, &search);
		return search.found ? 0 : -ENOENT;
	}
	if (cfg->launched)
		return library_find_for_launch(LIBNCCL_SONAME, cfg->target_env, out, len);
	return -ENOENT;
}

/* A status record and a note: the source runs without probes (no libnccl, or refused). */
static void note_status(struct nccl_source *ns, int status, const char *message)
{
	grt_session_status(ns->session, GRT_SRC_NCCL, 0, status, message);
	if (status)
		fprintf(stderr, "grtrace: record: nccl: %s\n", message);
}

static int attach_probes(struct nccl_source *ns, const char *path)
{
	unsigned probed = 0;
	char message[PATH_MAX + 96];

	for (size_t i = 0; i < sizeof(entry_points) / sizeof(entry_points[0]); i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = entry_points[i].symbol,
			    .bpf_cookie = entry_points[i].kind);
		struct bpf_link *enter, *exit;

		if (ns->nlinks + 2 > NCCL_MAX_LINKS)
			break;
		enter = bpf_program__attach_uprobe_opts(program_of(ns, entry_points[i].program), -1,
							path, 0, &opts);
		if (!enter)
			continue; /* an older or newer libnccl without this entry point */
		opts.retprobe = true;
		exit = bpf_program__attach_uprobe_opts(ns->skel->progs.nccl_exit, -1, path, 0, &opts);
		if (!exit) {
			bpf_link__destroy(enter);
			continue;
		}
		ns->links[ns->nlinks++] = enter;
		ns->links[ns->nlinks++] = exit;
		probed++;
	}
	snprintf(message, sizeof(message), "%s: %u of %zu entry points probed", path, probed,
		 sizeof(entry_points) / sizeof(entry_points[0]));
	note_status(ns, probed ? 0 : -ENOENT, message);
	return 0;
}

static void nccl_detach(void *ctx)
{
	struct nccl_source *ns = ctx;

	if (!ns)
		return;
	for (unsigned i = 0; i < ns->nlinks; i++)
		bpf_link__destroy(ns->links[i]);
	grt_bpf_source_detach(&ns->base, ns->skel ? ns->skel->skeleton : NULL);
	nccl_bpf__destroy(ns->skel);
	free(ns);
}

static int nccl_attach(struct grt_session *s, void **ctx)
{
	struct nccl_source *ns = calloc(1, sizeof(*ns));
	char path[PATH_MAX];
	int err;

	if (!ns)
		return -ENOMEM;
	ns->session = s;
	ns->skel = nccl_bpf__open();
	if (!ns->skel) {
		err = -errno;
		goto fail;
	}
	err = grt_bpf_use_pid_filter(s, ns->skel->obj, &ns->skel->rodata->filter_by_tgid);
	if (!err)
		err = nccl_bpf__load(ns->skel);
	if (!err)
		err = grt_bpf_source_start(&ns->base, s, GRT_SRC_NCCL, ns->skel->maps.nccl_events,
					   ns->skel->maps.dropped_events, on_nccl_event, ns);
	if (err)
		goto fail;
	if (locate_libnccl(s, path, sizeof(path)))
		note_status(ns, -ENOENT, "no " LIBNCCL_SONAME " found for the target (searched its "
					 "maps, LD_LIBRARY_PATH and the loader cache): name it "
					 "with --libnccl PATH");
	else
		attach_probes(ns, path);
	*ctx = ns;
	return 0;
fail:
	grt_bpf_source_fail(s, "nccl", err);
	nccl_detach(ns);
	return err;
}

static int nccl_drain(void *ctx)
{
	grt_bpf_source_drain(&((struct nccl_source *)ctx)->base);
	return 0;
}

/* A path that is no regular file is a usage error before anything starts. */
static int check_libnccl(const char *path, char *why, size_t why_len)
{
	struct stat st;
	const char *problem;

	if (stat(path, &st))
		problem = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		problem = "not a regular file";
	else
		return 0;
	snprintf(why, why_len, "bad value '%s' for --libnccl: %s; give the libnccl.so.2 the program loads",
		 path, problem);
	return -EINVAL;
}

static const struct grt_source_option nccl_options[] = {
	{ "libnccl", "PATH",
	  "nccl source: the libnccl.so.2 to probe (default: the one the\n"
	  "                     target maps or would load)", check_libnccl },
	{ NULL },
};

static const struct grt_source nccl_source = {
	.name = "nccl",
	.id = GRT_SRC_NCCL,
	.summary = "NCCL communicators and collectives (uprobes on libnccl.so.2): op, bytes, rank",
	.probe = nccl_probe,
	.attach = nccl_attach,
	.drain = nccl_drain,
	.detach = nccl_detach,
	.options = nccl_options,
};

GRT_SOURCE_REGISTER(nccl_source);
