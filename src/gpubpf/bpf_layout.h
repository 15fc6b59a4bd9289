/* Layout strings (records_bpf.h) of map keys, values and events, from the object's BTF. */
#ifndef GRT_GPUBPF_BPF_LAYOUT_H
#define GRT_GPUBPF_BPF_LAYOUT_H

#include <stdint.h>

struct btf;

/*
 * The layout of BTF type type_id: a struct's members by name (nested ones as
 * outer_inner, bit fields left out), anything else as one field named
 * scalar_name. malloc'd; NULL without BTF or when nothing decodes.
 */
char *gpubpf_btf_layout(const struct btf *btf, uint32_t type_id, const char *scalar_name);

#endif
