/* Packing the verified programs of a recording for the injected library, and reading them back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpubpf/bpf_session.h"
#include "gpubpf/gpubpf.h"

/*
 * Layout (host byte order: the recorder and the target share the machine):
 * a header, the maps, then per program a fixed part followed by its four
 * strings (name, kernel pattern, declarations, body), each NUL-terminated
 * and padded to 8 bytes.
 */
struct blob_head {
	uint32_t magic, version;
	uint32_t thread_capacity, nr_maps;
	uint32_t nr_progs, reserved;
	uint64_t ring_bytes;
	uint64_t total_len;
};

struct blob_map {
	uint32_t slot, type, key_size, value_size, max_entries, rodata, stripe_width, reserved;
};

struct blob_prog {
	uint32_t id, attach, ctx_fields, nr_args;
	uint32_t ptx_insns, stack_in_registers, stack_bytes, reserved;
	uint32_t len[4]; /* the strings, NUL included */
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static const char *str_or_empty(const char *s)
{
	return s ? s : "";
}

void *gpubpf_session_pack(const struct gpubpf_bundle *bundles, size_t nr_bundles,
			  uint32_t thread_capacity, uint64_t ring_bytes, size_t *len)
{
	struct blob_head h = {GPUBPF_SESSION_MAGIC, GPUBPF_SESSION_VERSION, thread_capacity};
	size_t total = sizeof(h), at;
	uint8_t *out;

	h.ring_bytes = ring_bytes;
	for (size_t b = 0; b < nr_bundles; b++) {
		h.nr_maps += (uint32_t)bundles[b].obj.nr_maps;
		total += bundles[b].obj.nr_maps * sizeof(struct blob_map);
		for (size_t p = 0; p < bundles[b].nr_progs; p++) {
			const struct gpubpf_program *pg = &bundles[b].progs[p];

			h.nr_progs++;
			total += sizeof(struct blob_prog) + pad8(strlen(pg->ptx.name) + 1) +
				 pad8(strlen(str_or_empty(pg->prog->kernel)) + 1) +
				 pad8(strlen(str_or_empty(pg->ptx.decls)) + 1) +
				 pad8(strlen(str_or_empty(pg->ptx.body)) + 1);
		}
	}
	if (h.nr_maps > GRT_BPF_MAX_MAPS || h.nr_progs > GPUBPF_SESSION_MAX_PROGS)
		return NULL;
	out = calloc(1, total);
	if (!out)
		return NULL;
	h.total_len = total;
	memcpy(out, &h, sizeof(h));
	at = sizeof(h);
	for (size_t b = 0; b < nr_bundles; b++)
		for (size_t i = 0; i < bundles[b].obj.nr_maps; i++) {
			const struct gpubpf_map *m = &bundles[b].obj.maps[i];
			struct blob_map bm = {bundles[b].map_slot_base + (uint32_t)i,
					      m->type,
					      m->key_size,
					      m->value_size,
					      m->max_entries,
					      m->rodata,
					      m->stripe_width};

			memcpy(out + at, &bm, sizeof(bm));
			at += sizeof(bm);
		}
	for (size_t b = 0; b < nr_bundles; b++)
		for (size_t p = 0; p < bundles[b].nr_progs; p++) {
			const struct gpubpf_program *pg = &bundles[b].progs[p];
			const char *s[4] = {pg->ptx.name, str_or_empty(pg->prog->kernel),
					    str_or_empty(pg->ptx.decls), str_or_empty(pg->ptx.body)};
			struct blob_prog bp = {pg->id,
					       pg->prog->attach,
					       pg->ptx.ctx_fields,
					       pg->ptx.nr_args,
					       (uint32_t)pg->ptx.ptx_insns,
					       pg->ptx.stack_in_registers,
					       pg->ptx.stack_bytes};

			for (int k = 0; k < 4; k++)
				bp.len[k] = (uint32_t)strlen(s[k]) + 1;
			memcpy(out + at, &bp, sizeof(bp));
			at += sizeof(bp);
			for (int k = 0; k < 4; k++) {
				memcpy(out + at, s[k], bp.len[k]);
				at += pad8(bp.len[k]);
			}
		}
	*len = total;
	return out;
}

static int fail(char *err, size_t err_len, const char *what)
{
	snprintf(err, err_len, "GPU eBPF programs from the recorder: %s", what);
	return -EINVAL;
}

/* The maps: slots distinct and in range, shapes that fit the device layouts. */
static int unpack_maps(struct gpubpf_session *s, const uint8_t *at, size_t n, char *err,
		       size_t err_len)
{
	uint64_t used = 0;

	for (size_t i = 0; i < n; i++) {
		struct blob_map bm;

		memcpy(&bm, at + i * sizeof(bm), sizeof(bm));
		if (bm.slot >= GRT_BPF_MAX_MAPS || used & (1ull << bm.slot))
			return fail(err, err_len, "bad map slot");
		if (!bm.value_size || bm.value_size > 65536 || bm.key_size > 512 ||
		    !bm.max_entries || (bm.stripe_width && bm.stripe_width != 4 && bm.stripe_width != 8))
			return fail(err, err_len, "bad map shape");
		used |= 1ull << bm.slot;
		s->maps[i] = (struct gpubpf_session_map){
		    bm.slot,
		    {bm.type, bm.key_size, bm.value_size, bm.max_entries, bm.stripe_width},
		    bm.rodata != 0};
	}
	s->nr_maps = n;
	return 0;
}

int gpubpf_session_unpack(const void *blob, size_t len, struct gpubpf_session *s, char *err,
			  size_t err_len)
{
	struct blob_head h;
	size_t at;

	memset(s, 0, sizeof(*s));
	if (len < sizeof(h))
		return fail(err, err_len, "too short");
	memcpy(&h, blob, sizeof(h));
	if (h.magic != GPUBPF_SESSION_MAGIC || h.version != GPUBPF_SESSION_VERSION ||
	    h.total_len != len || h.nr_maps > GRT_BPF_MAX_MAPS ||
	    h.nr_progs > GPUBPF_SESSION_MAX_PROGS || !h.thread_capacity || !h.ring_bytes ||
	    h.ring_bytes % 8 || h.ring_bytes > (1ull << 32))
		return fail(err, err_len, "bad header");
	s->blob = malloc(len);
	s->ptx = calloc(h.nr_progs + 1, sizeof(*s->ptx));
	s->progs = calloc(h.nr_progs + 1, sizeof(*s->progs));
	s->prog_ids = calloc(h.nr_progs + 1, sizeof(*s->prog_ids));
	if (!s->blob || !s->ptx || !s->progs || !s->prog_ids) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	memcpy(s->blob, blob, len);
	s->thread_capacity = h.thread_capacity;
	s->ring_bytes = h.ring_bytes;
	at = sizeof(h);
	if ((len - at) / sizeof(struct blob_map) < h.nr_maps)
		return fail(err, err_len, "maps cut short");
	if (unpack_maps(s, s->blob + at, h.nr_maps, err, err_len))
		return -EINVAL;
	at += h.nr_maps * sizeof(struct blob_map);
	for (uint32_t p = 0; p < h.nr_progs; p++) {
		struct gpubpf_translation *t = &s->ptx[p];
		struct blob_prog bp;
		char *str[4];

		if (len - at < sizeof(bp))
			return fail(err, err_len, "programs cut short");
		memcpy(&bp, s->blob + at, sizeof(bp));
		at += sizeof(bp);
		for (int k = 0; k < 4; k++) {
			if (!bp.len[k] || bp.len[k] > len - at || s->blob[at + bp.len[k] - 1] ||
			    strlen((char *)s->blob + at) + 1 != bp.len[k])
				return fail(err, err_len, "bad program text");
			str[k] = (char *)s->blob + at;
			at += pad8(bp.len[k]);
			if (at > len)
				return fail(err, err_len, "programs cut short");
		}
		if (bp.attach < GRT_BPF_ATTACH_ENTRY || bp.attach > GRT_BPF_ATTACH_MEMCAPTURE ||
		    bp.len[0] > GPUBPF_NAME_MAX || bp.nr_args > 32 || bp.id > UINT16_MAX ||
		    (bp.attach != GRT_BPF_ATTACH_MEMCAPTURE && bp.len[1] == 1))
			return fail(err, err_len, "bad program");
		memcpy(t->name, str[0], bp.len[0]);
		t->attach = bp.attach;
		t->ctx_fields = bp.ctx_fields;
		t->nr_args = bp.nr_args;
		t->decls = str[2];
		t->body = str[3];
		t->ptx_insns = bp.ptx_insns;
		t->stack_in_registers = bp.stack_in_registers;
		t->stack_bytes = bp.stack_bytes;
		s->progs[p] = (struct gpubpf_attach_prog){
		    .attach = t->attach,
		    .kernel = bp.attach == GRT_BPF_ATTACH_MEMCAPTURE ? NULL : str[1],
		    .ptx = t};
		s->prog_ids[p] = (uint16_t)bp.id;
		s->nr_progs++;
	}
	if (at != len)
		return fail(err, err_len, "trailing bytes");
	return 0;
}

void gpubpf_session_free(struct gpubpf_session *s)
{
	free(s->blob);
	free(s->ptx);
	free(s->progs);
	free(s->prog_ids);
	memset(s, 0, sizeof(*s));
}
