/* Function names for file offsets of ELF files (executables, shared libraries), with a small cache. */
#ifndef GRT_ELF_SYMBOLS_H
#define GRT_ELF_SYMBOLS_H

#include <stdint.h>

struct elf_symbols;

/* A cache of at most max_files parsed files (oldest evicted). NULL on ENOMEM. */
struct elf_symbols *elf_symbols_new(unsigned max_files);
void elf_symbols_free(struct elf_symbols *c);

/*
 * The function of path containing file_offset (as /proc/PID/maps offsets
 * count: mapping offset + (ip - mapping start)), and the distance from its
 * start in *sym_offset. NULL when the file cannot be read, is not ELF, has no
 * symbols, or no function covers the offset. Functions come from .symtab and
 * .dynsym; a symbol of size 0 covers up to the next symbol. The returned
 * name lives as long as the cache entry (until the next lookup may evict it).
 */
const char *elf_symbols_lookup(struct elf_symbols *c, const char *path, uint64_t file_offset,
			       uint64_t *sym_offset);

#endif
