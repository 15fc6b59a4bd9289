/* Per-process stack symbolization for leak reports, through the report's user_stacks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/user_stacks.h"
#include "common/text_escape.h"
#include "common/u64_map.h"
#include "serve/proc_stacks.h"
#include "sources/proc_maps.h"
#include "trace/grt_strings.h"
#include "trace/records_core.h"

struct proc_stacks {
	pid_t pid;
	struct user_stacks *stacks;
	struct grt_strings *paths; /* mapping records name their file by string id */
	uint32_t next_path_id;
	struct u64_map ids;	   /* key -> the stack id given to user_stacks */
	uint32_t next_stack_id;
	size_t mappings_read; /* 0: the process was gone before its maps could be read */
};

struct proc_stacks *proc_stacks_new(pid_t pid)
{
	struct proc_stacks *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->pid = pid;
	u64_map_init(&ps->ids);
	ps->stacks = user_stacks_new();
	ps->paths = grt_strings_new();
	if (!ps->stacks || !ps->paths) {
		proc_stacks_free(ps);
		return NULL;
	}
	return ps;
}

void proc_stacks_free(struct proc_stacks *ps)
{
	if (!ps)
		return;
	user_stacks_free(ps->stacks);
	grt_strings_free(ps->paths);
	u64_map_destroy(&ps->ids);
	free(ps);
}

/* user_stacks learns from trace records: a live process's mapping becomes one. */
static int keep_mapping(const struct proc_mapping *m, void *ctx)
{
	struct proc_stacks *ps = ctx;
	struct grt_mapping_rec rec = {
	    .start = m->start, .end = m->end, .file_offset = m->file_offset};
	struct grt_record r = {.hdr = {.type = GRT_REC_MAPPING, .pid = (uint32_t)ps->pid},
			       .payload = &rec};

	if (!m->executable || !m->path[0] || m->path[0] == '[')
		return 0;
	rec.path_str = ++ps->next_path_id;
	if (grt_strings_set(ps->paths, rec.path_str, m->path))
		return -ENOMEM;
	ps->mappings_read++;
	return user_stacks_on_record(ps->stacks, &r, ps->paths);
}

int proc_stacks_read_maps(struct proc_stacks *ps)
{
	return proc_maps_foreach(ps->pid, keep_mapping, ps);
}

int proc_stacks_add(struct proc_stacks *ps, uint64_t key, const uint64_t *ips, uint32_t depth)
{
	struct {
		struct grt_stack_rec head;
		uint64_t ips[GRT_MAX_STACK_DEPTH];
	} rec = {.head = {.stack_id = ps->next_stack_id}};
	struct grt_record r = {.hdr = {.type = GRT_REC_STACK, .pid = (uint32_t)ps->pid},
			       .payload = &rec};
	int err;

	if (!key || u64_map_get(&ps->ids, key, NULL))
		return 0;
	if (depth > GRT_MAX_STACK_DEPTH)
		depth = GRT_MAX_STACK_DEPTH;
	while (depth && !ips[depth - 1])
		depth--;
	rec.head.depth = depth;
	memcpy(rec.ips, ips, depth * sizeof(ips[0]));
	err = user_stacks_on_record(ps->stacks, &r, ps->paths);
	if (err)
		return err;
	if (u64_map_put(&ps->ids, key, ps->next_stack_id))
		return -ENOMEM;
	ps->next_stack_id++;
	return 0;
}

bool proc_stacks_has_mappings(const struct proc_stacks *ps)
{
	return ps->mappings_read > 0;
}

int proc_stacks_has(const struct proc_stacks *ps, uint64_t key)
{
	return key && u64_map_get(&ps->ids, key, NULL);
}

void proc_stacks_format(struct proc_stacks *ps, uint64_t key, unsigned max_frames, char *buf,
			size_t len)
{
	uint32_t depth = 0;
	uint64_t id;
	const uint64_t *ips = key && u64_map_get(&ps->ids, key, &id)
				  ? user_stacks_get(ps->stacks, (int32_t)id, &depth)
				  : NULL;
	size_t at = 0;
	char frame[512];

	buf[0] = 0;
	if (!ips) {
		snprintf(buf, len, "no stack");
		return;
	}
	for (uint32_t i = 0; i < depth && i < max_frames && at + 1 < len; i++) {
		user_stacks_format_frame(ps->stacks, (uint32_t)ps->pid, ips[i], i, frame,
					 sizeof(frame));
		if (i)
			at += (size_t)snprintf(buf + at, len - at, " <- ");
		/* function names come from the program's ELF files: escaped before they reach a log */
		if (at + 1 < len)
			text_escape(buf + at, len - at, frame, false);
		at += strlen(buf + at);
	}
}
