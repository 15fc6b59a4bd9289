/* Loading a clang-built eBPF object for the GPU: programs by section, maps, relocations, BTF. */
#ifndef GRT_GPUBPF_BPF_OBJECT_H
#define GRT_GPUBPF_BPF_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_insn.h"
#include "gpubpf/gpu_abi.h"

#define GPUBPF_NAME_MAX 64
#define GPUBPF_MAX_MAPS GRT_BPF_MAX_MAPS
#define GPUBPF_MAX_INSNS 65536

struct btf;

struct gpubpf_map {
	char name[GPUBPF_NAME_MAX];
	uint32_t type; /* BPF_MAP_TYPE_* or GRT_BPF_MAP_* */
	uint32_t key_size;
	uint32_t value_size;
	uint32_t max_entries;
	uint32_t map_flags;
	uint32_t btf_key_type; /* BTF type ids, 0 when unknown */
	uint32_t btf_value_type;
	/* A read-only data section (.rodata*, string literals) seen as a one-entry array. */
	bool rodata;
	uint8_t *data; /* rodata's bytes (value_size of them), owned by the object */
	/* 4 or 8: a counter kept as one copy per SM, summed in words of that size
	 * (gpubpf_stripe_counters); 0: one copy */
	uint32_t stripe_width;
};

struct gpubpf_prog {
	char *section; /* "kretprobe/_Z9vectorAddPKfS0_Pf" */
	char *name;    /* the function's symbol */
	enum grt_bpf_attach attach;
	char *kernel; /* the kernel name or glob; NULL for memcapture */
	/*
	 * Instructions after relocation: a map reference is an LD_IMM64 with
	 * src_reg BPF_PSEUDO_MAP_FD and imm = map index; an address inside a
	 * read-only section is BPF_PSEUDO_MAP_VALUE with imm = map index and the
	 * second half's imm = byte offset.
	 */
	struct bpf_insn *insns;
	size_t nr_insns;
};

struct gpubpf_object {
	char *name; /* the file name, for messages */
	struct gpubpf_prog *progs;
	size_t nr_progs;
	struct gpubpf_map maps[GPUBPF_MAX_MAPS];
	size_t nr_maps;
	struct btf *btf;   /* parsed .BTF, for map and event layouts */
	uint8_t *btf_data; /* the raw .BTF section, as written into traces */
	size_t btf_len;
	uint8_t *image; /* the object file's bytes (owned) */
	size_t image_len;
};

/*
 * Loads an object from a file or from memory (copied). Returns 0, or a
 * negative errno with one line in err: -ENOENT/-EACCES (file), -ENOEXEC (not
 * an eBPF ELF object), -EINVAL (a section, map or relocation grtrace cannot
 * run on the GPU: the line names it and says what to do), -ENOMEM.
 * gpubpf_object_free() in every case.
 */
int gpubpf_object_open(const char *path, struct gpubpf_object *obj, char *err, size_t err_len);
int gpubpf_object_open_mem(const void *buf, size_t len, const char *name, struct gpubpf_object *obj,
			   char *err, size_t err_len);
void gpubpf_object_free(struct gpubpf_object *obj);

/* A whole file, NUL-terminated, in a malloc'd buffer (at most 64 MiB); NULL with errno set. */
char *gpubpf_read_file(const char *path, size_t *len);

/* Parses a section name into an attach kind and kernel pattern; false when it is not a GPU one. */
bool gpubpf_parse_section(const char *section, enum grt_bpf_attach *attach, const char **kernel);

/* The map type's name ("hash", "gpu_array", ...) for messages, or NULL when not supported. */
const char *gpubpf_map_type_name(uint32_t type);

#endif
