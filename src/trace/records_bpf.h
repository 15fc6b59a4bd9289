/* Payloads of GPU eBPF output: programs, maps, layouts, map dumps, ring events, printk. */
#ifndef GRT_RECORDS_BPF_H
#define GRT_RECORDS_BPF_H

#include <stdint.h>
#include "grt_format.h"
#include "record_desc.h"

/*
 * The `gpu` source's records 112..127. A session describes each object
 * (its BTF), program and map once; then map dumps (the contents read back at
 * a collection), ring events and printk lines follow as the device produces
 * them. Values are decoded with layouts: a map record names the layout of its
 * key and value as strings built from the object's BTF (see
 * grt_bpf_layout_describe), so parse and report name the fields without
 * parsing BTF; the BTF itself travels in the object record for other tools.
 */
enum grt_bpf_record_type {
	GRT_REC_BPF_OBJECT = GRT_REC_GPU_FIRST + 16, /* 112 */
	GRT_REC_BPF_PROG = GRT_REC_GPU_FIRST + 17,
	GRT_REC_BPF_MAP = GRT_REC_GPU_FIRST + 18,
	GRT_REC_BPF_MAP_DUMP = GRT_REC_GPU_FIRST + 19,
	GRT_REC_BPF_EVENT = GRT_REC_GPU_FIRST + 20,
	GRT_REC_BPF_PRINTK = GRT_REC_GPU_FIRST + 21,
	GRT_REC_BPF_LOST = GRT_REC_GPU_FIRST + 22,
};

/* An object file and its raw .BTF section. */
struct grt_bpf_object_rec {
	uint32_t object_id;
	uint32_t name_str;
	uint32_t btf_len; /* bytes of btf[]; 0 when the object had none or it did not fit */
	uint32_t reserved;
	uint8_t btf[];
};

enum grt_bpf_attach_kind {
	GRT_BPF_REC_ENTRY = 1,
	GRT_BPF_REC_EXIT = 2,
	GRT_BPF_REC_MEMORY = 3,
};

struct grt_bpf_prog_rec {
	uint32_t object_id;
	uint16_t prog_id; /* as in the ring records it writes */
	uint16_t attach;  /* enum grt_bpf_attach_kind */
	uint32_t section_str;
	uint32_t name_str;
	uint32_t nr_insns;
	int32_t status;	     /* 0 running, negative errno when refused */
	uint32_t reason_str; /* the refusal, one line */
	uint32_t ptx_insns;
};

enum grt_bpf_map_flags {
	GRT_BPF_MAP_F_RODATA = 1, /* read-only data of the object, never dumped */
};

struct grt_bpf_map_rec {
	uint32_t object_id;
	uint16_t slot;	/* environment map slot: dumps and events name the map by it */
	uint16_t flags; /* enum grt_bpf_map_flags */
	uint32_t name_str;
	uint32_t type; /* BPF_MAP_TYPE_* or 1502/1503/1527 */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t key_layout_str;   /* 0: undecoded bytes */
	uint32_t value_layout_str; /* for rings, the layout of an event */
	uint32_t btf_key_type;
	uint32_t btf_value_type;
	uint32_t reserved;
};

enum grt_bpf_dump_flags {
	GRT_BPF_DUMP_FINAL = 1, /* taken at the end of the session */
	GRT_BPF_DUMP_LAST = 2,	/* the last record of its snapshot */
};

/*
 * A map's contents at one collection, in records of at most
 * GRT_BPF_DUMP_MAX_ENTRIES entries. An entry is
 *   uint32_t sub;  the thread (per-thread arrays) or SM (per-SM arrays), else 0
 *   uint32_t reserved;
 *   key bytes, padded to 8;  value bytes, padded to 8
 * Arrays list their non-zero values only; hashes every key present.
 */
struct grt_bpf_map_dump_rec {
	uint16_t slot;
	uint16_t flags;	   /* enum grt_bpf_dump_flags */
	uint32_t snapshot; /* 1, 2, ... per map */
	uint32_t nr_entries;
	uint32_t entry_size;
	uint64_t total_entries; /* of the whole snapshot */
	uint8_t entries[];
};

#define GRT_BPF_DUMP_ENTRY_HEAD 8u
#define GRT_BPF_DUMP_MAX_ENTRIES 4096u

/* One record a program wrote into a ring; the header's ts_ns is its time on CLOCK_MONOTONIC. */
struct grt_bpf_event_rec {
	uint16_t slot;
	uint16_t prog_id;
	uint32_t smid;
	uint64_t gpu_ns; /* %globaltimer as read on the device */
	uint32_t map_name_str;
	uint32_t layout_str;
	uint32_t data_len;
	uint32_t reserved;
	uint8_t data[];
};

enum grt_bpf_printk_rec_kind {
	GRT_BPF_REC_PRINTK = 1,
	GRT_BPF_REC_PUTS = 2,
};

/* A bpf_trace_printk or puts line, formatted by the host. */
struct grt_bpf_printk_rec {
	uint16_t prog_id;
	uint16_t kind; /* enum grt_bpf_printk_rec_kind */
	uint32_t smid;
	uint64_t gpu_ns;
	uint32_t len; /* bytes of text, its NUL included */
	uint32_t reserved;
	char text[];
};

#define GRT_BPF_PRINTK_SLOT 0xffff /* the slot of the printk ring in lost records */

/* Records a ring could not take (it was full) since the previous one. */
struct grt_bpf_lost_rec {
	uint16_t slot; /* or GRT_BPF_PRINTK_SLOT */
	uint16_t reserved16;
	uint32_t map_name_str;
	uint64_t count;
};

_Static_assert(sizeof(struct grt_bpf_object_rec) == 16, "bpf object layout");
_Static_assert(sizeof(struct grt_bpf_prog_rec) == 32, "bpf prog layout");
_Static_assert(sizeof(struct grt_bpf_map_rec) == 48, "bpf map layout");
_Static_assert(sizeof(struct grt_bpf_map_dump_rec) == 24, "bpf map dump layout");
_Static_assert(sizeof(struct grt_bpf_event_rec) == 32, "bpf event layout");
_Static_assert(sizeof(struct grt_bpf_printk_rec) == 24, "bpf printk layout");
_Static_assert(sizeof(struct grt_bpf_lost_rec) == 16, "bpf lost layout");

/*
 * Layouts. A layout string lists the fields of a value:
 *   name:type@offset;name:type@offset;...
 * type is u8..u64 (unsigned), s8..s64 (signed), x8..x64 (hexadecimal:
 * pointers), f32/f64, strN (a char array of N bytes), or one of the first
 * three with [N] (an array). Names are snake_case and never one of
 * grt_bpf_reserved_keys. Example: "pid:u32@0;comm:str16@4;args:u64[3]@24".
 */

/* Keys the records' own fields and the printers use: decoded names avoid them. */
extern const char *const grt_bpf_reserved_keys[];

/*
 * Emits the fields of `data` as `layout` describes them: integers as
 * numbers, arrays as name_0, name_1, ..., strings up to their NUL. Fields
 * beyond len are left out; a NULL or malformed layout emits nothing.
 */
void grt_bpf_layout_describe(struct grt_fields *out, const char *layout, const uint8_t *data,
			     uint32_t len);

/* "hash", "gpu_array", ... for a map type number; "unknown" otherwise. */
const char *grt_bpf_map_type_name(uint32_t type);

#endif
