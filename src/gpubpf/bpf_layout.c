/* Layout strings (records_bpf.h) of map keys, values and events, from the object's BTF. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "gpubpf/bpf_layout.h"
#include "inject/ptx_strbuf.h"
#include "trace/records_bpf.h"

#define MAX_FIELDS 64
#define MAX_DEPTH 8
#define MAX_STRUCT_ELEMS 8 /* elements of an array of structs that are expanded */

struct layout {
	const struct btf *btf;
	struct strbuf b;
	char names[MAX_FIELDS][64];
	unsigned n;
};

/* A snake_case name, not reserved, not used before in this layout. */
static void field_name(struct layout *l, const char *raw, char *out, size_t len)
{
	char base[48];
	size_t n = 0;

	for (const char *p = raw; *p && n < sizeof(base) - 1; p++)
		base[n++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
	base[n] = 0;
	if (!n)
		snprintf(base, sizeof(base), "field");
	if (isdigit((unsigned char)base[0])) {
		memmove(base + 1, base, sizeof(base) - 1);
		base[0] = 'f';
		base[sizeof(base) - 1] = 0;
	}
	for (const char *const *r = grt_bpf_reserved_keys; *r; r++)
		if (!strcmp(base, *r)) {
			char tmp[48];

			snprintf(tmp, sizeof(tmp), "v_%s", base);
			snprintf(base, sizeof(base), "%s", tmp);
			break;
		}
	snprintf(out, len, "%s", base);
	for (unsigned k = 2; k < 1000; k++) {
		bool taken = false;

		for (unsigned i = 0; i < l->n && !taken; i++)
			taken = !strcmp(l->names[i], out);
		if (!taken)
			return;
		snprintf(out, len, "%s_%u", base, k);
	}
}

static void add(struct layout *l, const char *name, const char *type, unsigned long off)
{
	if (l->n == MAX_FIELDS)
		return;
	field_name(l, name, l->names[l->n], sizeof(l->names[l->n]));
	strbuf_printf(&l->b, "%s%s:%s@%lu", l->b.len ? ";" : "", l->names[l->n], type, off);
	l->n++;
}

static const struct btf_type *resolve(const struct btf *btf, uint32_t *id)
{
	const struct btf_type *t = btf__type_by_id(btf, *id);

	for (int i = 0; t && i < 32 && (btf_is_mod(t) || btf_is_typedef(t)); i++) {
		*id = t->type;
		t = btf__type_by_id(btf, *id);
	}
	return t;
}

/* The scalar type letter and width of t ("u32"), or false when it is no scalar. */
static bool scalar_type(const struct btf *btf, const struct btf_type *t, char *out, size_t len,
			bool *is_char)
{
	*is_char = false;
	if (btf_is_int(t)) {
		uint8_t enc = btf_int_encoding(t);
		unsigned bits = t->size * 8;
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
			return false;
		/* clang marks char SIGNED, not CHAR: the name tells */
		*is_char = t->size == 1 && ((enc & BTF_INT_CHAR) || (name && strstr(name, "char")));
		snprintf(out, len, "%c%u", enc & BTF_INT_SIGNED ? 's' : 'u', bits);
		return true;
	}
	if (btf_is_enum(t) || btf_kind(t) == 19 /* BTF_KIND_ENUM64 */) {
		if (t->size != 1 && t->size != 2 && t->size != 4 && t->size != 8)
			return false;
		snprintf(out, len, "s%u", t->size * 8);
		return true;
	}
	if (btf_is_ptr(t)) {
		snprintf(out, len, "x64");
		return true;
	}
	if (btf_kind(t) == BTF_KIND_FLOAT && (t->size == 4 || t->size == 8)) {
		snprintf(out, len, "f%u", t->size * 8);
		return true;
	}
	return false;
}

static void walk(struct layout *l, uint32_t id, const char *name, unsigned long off, int depth);

static void walk_array(struct layout *l, const struct btf_type *t, const char *name,
		       unsigned long off, int depth)
{
	const struct btf_array *a = btf_array(t);
	uint32_t elem_id = a->type, count = a->nelems;
	const struct btf_type *e = resolve(l->btf, &elem_id);
	char type[32];
	bool is_char;
	long elem_size;

	/* a multi-dimensional array is one flat array of its innermost element */
	while (e && btf_is_array(e) && count < (1u << 20)) {
		count *= btf_array(e)->nelems;
		elem_id = btf_array(e)->type;
		e = resolve(l->btf, &elem_id);
	}
	if (!e || !count)
		return;
	if (scalar_type(l->btf, e, type, sizeof(type), &is_char)) {
		char full[48];

		if (is_char)
			snprintf(full, sizeof(full), "str%u", count);
		else
			snprintf(full, sizeof(full), "%s[%u]", type, count);
		add(l, name, full, off);
		return;
	}
	elem_size = btf__resolve_size(l->btf, elem_id);
	if (elem_size <= 0)
		return;
	for (uint32_t i = 0; i < count && i < MAX_STRUCT_ELEMS; i++) {
		char elem_name[64];

		snprintf(elem_name, sizeof(elem_name), "%s_%u", name, i);
		walk(l, elem_id, elem_name, off + (unsigned long)i * (unsigned long)elem_size,
		     depth + 1);
	}
}

static void walk(struct layout *l, uint32_t id, const char *name, unsigned long off, int depth)
{
	const struct btf_type *t = resolve(l->btf, &id);
	char type[32];
	bool is_char;

	if (!t || depth > MAX_DEPTH)
		return;
	if (scalar_type(l->btf, t, type, sizeof(type), &is_char)) {
		add(l, name, type, off);
		return;
	}
	if (btf_is_array(t)) {
		walk_array(l, t, name, off, depth);
		return;
	}
	if (!btf_is_composite(t))
		return;
	for (uint16_t i = 0; i < btf_vlen(t); i++) {
		const struct btf_member *m = btf_members(t) + i;
		const char *mname = btf__name_by_offset(l->btf, m->name_off);
		char full[64];

		if (btf_member_bitfield_size(t, i))
			continue; /* bit fields are not decoded */
		if (!mname || !*mname)
			snprintf(full, sizeof(full), "%s", depth ? name : "");
		else if (depth)
			snprintf(full, sizeof(full), "%s_%s", name, mname);
		else
			snprintf(full, sizeof(full), "%s", mname);
		walk(l, m->type, full, off + btf_member_bit_offset(t, i) / 8, depth + 1);
	}
}

char *gpubpf_btf_layout(const struct btf *btf, uint32_t type_id, const char *scalar_name)
{
	struct layout *l;
	const struct btf_type *t;
	uint32_t id = type_id;
	char *s;

	if (!btf || !type_id)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->btf = btf;
	t = resolve(btf, &id);
	/* a value that is no struct is one field, named after what it is */
	walk(l, type_id, t && btf_is_composite(t) ? "" : scalar_name, 0,
	     t && btf_is_composite(t) ? 0 : 1);
	s = l->b.len ? strbuf_take(&l->b, NULL) : NULL;
	strbuf_free(&l->b);
	free(l);
	return s;
}
