/* Stack and mapping records kept for symbolizing at print time. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/elf_symbols.h"
#include "analysis/report_util.h"
#include "analysis/user_stacks.h"
#include "common/u64_map.h"
#include "trace/records_core.h"

/* Enough for the executable, libcuda, libcudart and a few more without rereading. */
#define ELF_CACHE_FILES 16

struct stack {
	uint32_t depth;
	uint64_t ips[];
};

struct mapping {
	uint64_t start, end, file_offset;
	long path;		/* index in user_stacks.paths, -1 when the record had none */
};

struct pid_mappings {
	struct mapping *v;
	size_t count, cap;
};

struct user_stacks {
	struct u64_map stacks;	 /* stack_id -> struct stack * */
	struct u64_map mappings; /* pid -> struct pid_mappings * */
	struct name_table paths;
	struct elf_symbols *elf;
};

struct user_stacks *user_stacks_new(void)
{
	struct user_stacks *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->elf = elf_symbols_new(ELF_CACHE_FILES);
	if (!u->elf) {
		free(u);
		return NULL;
	}
	u64_map_init(&u->stacks);
	u64_map_init(&u->mappings);
	name_table_init(&u->paths);
	return u;
}

void user_stacks_free(struct user_stacks *u)
{
	uint64_t v;

	if (!u)
		return;
	for (size_t i = 0; u64_map_iter(&u->stacks, &i, NULL, &v);)
		free((void *)(uintptr_t)v);
	for (size_t i = 0; u64_map_iter(&u->mappings, &i, NULL, &v);) {
		struct pid_mappings *m = (void *)(uintptr_t)v;

		free(m->v);
		free(m);
	}
	u64_map_destroy(&u->stacks);
	u64_map_destroy(&u->mappings);
	name_table_destroy(&u->paths);
	elf_symbols_free(u->elf);
	free(u);
}

static int keep_stack(struct user_stacks *u, const struct grt_stack_rec *rec)
{
	struct stack *s = malloc(sizeof(*s) + rec->depth * sizeof(s->ips[0]));
	uint64_t old = 0;

	if (!s)
		return -ENOMEM;
	s->depth = rec->depth;
	memcpy(s->ips, rec->ips, rec->depth * sizeof(s->ips[0]));
	u64_map_get(&u->stacks, rec->stack_id, &old);
	if (u64_map_put(&u->stacks, rec->stack_id, (uintptr_t)s)) {
		free(s);
		return -ENOMEM;
	}
	free((void *)(uintptr_t)old);	/* a repeated id: the later stack wins */
	return 0;
}

static struct pid_mappings *pid_mappings_get(struct user_stacks *u, uint32_t pid, bool create)
{
	struct pid_mappings *m;
	uint64_t v;

	if (u64_map_get(&u->mappings, pid, &v))
		return (void *)(uintptr_t)v;
	if (!create)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m || u64_map_put(&u->mappings, pid, (uintptr_t)m)) {
		free(m);
		return NULL;
	}
	return m;
}

static int keep_mapping(struct user_stacks *u, uint32_t pid, const struct grt_mapping_rec *rec,
			const struct grt_strings *strings)
{
	struct pid_mappings *m = pid_mappings_get(u, pid, true);
	const char *path = grt_strings_get(strings, rec->path_str);
	struct mapping *slot = NULL;

	if (!m)
		return -ENOMEM;
	/* the same start again (exec, remap) replaces the older mapping */
	for (size_t i = 0; i < m->count && !slot; i++)
		if (m->v[i].start == rec->start)
			slot = &m->v[i];
	if (!slot) {
		if (m->count == m->cap) {
			size_t cap = m->cap ? m->cap * 2 : 16;
			struct mapping *bigger = realloc(m->v, cap * sizeof(*bigger));

			if (!bigger)
				return -ENOMEM;
			m->v = bigger;
			m->cap = cap;
		}
		slot = &m->v[m->count++];
	}
	*slot = (struct mapping){
		.start = rec->start, .end = rec->end, .file_offset = rec->file_offset,
		.path = path ? name_table_intern(&u->paths, path) : -1,
	};
	return slot->path < -1 ? -ENOMEM : 0;
}

int user_stacks_on_record(struct user_stacks *u, const struct grt_record *rec,
			  const struct grt_strings *strings)
{
	if (rec->hdr.type == GRT_REC_STACK)
		return keep_stack(u, rec->payload);
	if (rec->hdr.type == GRT_REC_MAPPING)
		return keep_mapping(u, rec->hdr.pid, rec->payload, strings);
	return 0;
}

const uint64_t *user_stacks_get(const struct user_stacks *u, int32_t stack_id, uint32_t *depth)
{
	uint64_t v;
	const struct stack *s;

	if (stack_id < 0 || !u64_map_get(&u->stacks, (uint32_t)stack_id, &v))
		return NULL;
	s = (const void *)(uintptr_t)v;
	*depth = s->depth;
	return s->ips;
}

static const struct mapping *mapping_of(struct user_stacks *u, uint32_t pid, uint64_t ip)
{
	struct pid_mappings *m = pid_mappings_get(u, pid, false);

	for (size_t i = 0; m && i < m->count; i++)
		if (ip >= m->v[i].start && ip < m->v[i].end)
			return &m->v[i];
	return NULL;
}

void user_stacks_format_frame(struct user_stacks *u, uint32_t pid, uint64_t ip, uint32_t frame,
			      char *buf, size_t len)
{
	/* a return address points after the call, possibly past the caller's last byte */
	uint64_t lookup_ip = frame && ip ? ip - 1 : ip;
	const struct mapping *m = mapping_of(u, pid, lookup_ip);
	const char *path, *func;
	uint64_t offset, sym_offset;

	if (!m || m->path < 0) {
		snprintf(buf, len, "0x%llx", (unsigned long long)ip);
		return;
	}
	path = u->paths.names[m->path];
	offset = m->file_offset + (lookup_ip - m->start);
	func = elf_symbols_lookup(u->elf, path, offset, &sym_offset);
	if (!func) {
		snprintf(buf, len, "%s+0x%llx", path, (unsigned long long)(offset + (ip - lookup_ip)));
		return;
	}
	sym_offset += ip - lookup_ip;
	if (sym_offset)
		snprintf(buf, len, "%s+0x%llx (%s)", func, (unsigned long long)sym_offset, path);
	else
		snprintf(buf, len, "%s (%s)", func, path);
}
