/* ELF symbol tables read with libelf at report time, sorted for binary search, cached per path. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "analysis/elf_symbols.h"
#include "common/elf_file.h"

struct elf_func {
	uint64_t addr;
	uint64_t size;
	char *name;
};

/* A PT_LOAD segment: how file offsets become virtual addresses. */
struct elf_segment {
	uint64_t file_offset;
	uint64_t file_size;
	uint64_t vaddr;
};

struct elf_file {
	char *path;
	bool readable;		/* false: remembered failure, not retried */
	struct elf_func *funcs;	/* sorted by addr */
	size_t nfuncs, cap;
	struct elf_segment *segments;
	size_t nsegments;
	uint64_t last_used;
};

struct elf_symbols {
	struct elf_file *files;
	unsigned nfiles, max_files;
	uint64_t clock;
};

struct elf_symbols *elf_symbols_new(unsigned max_files)
{
	struct elf_symbols *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max_files = max_files ? max_files : 1;
	c->files = calloc(c->max_files, sizeof(*c->files));
	if (!c->files) {
		free(c);
		return NULL;
	}
	return c;
}

static void file_clear(struct elf_file *f)
{
	for (size_t i = 0; i < f->nfuncs; i++)
		free(f->funcs[i].name);
	free(f->funcs);
	free(f->segments);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

void elf_symbols_free(struct elf_symbols *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nfiles; i++)
		file_clear(&c->files[i]);
	free(c->files);
	free(c);
}

static int load_segments(Elf *elf, struct elf_file *f)
{
	size_t nphdr;

	if (elf_getphdrnum(elf, &nphdr))
		return -EINVAL;
	f->segments = calloc(nphdr ? nphdr : 1, sizeof(*f->segments));
	if (!f->segments)
		return -ENOMEM;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segments[f->nsegments++] = (struct elf_segment){
			.file_offset = ph.p_offset, .file_size = ph.p_filesz, .vaddr = ph.p_vaddr,
		};
	}
	return 0;
}

/* Appends one function symbol to the file's table. */
static int add_function(void *arg, Elf *elf, const GElf_Sym *sym, const char *name)
{
	struct elf_file *f = arg;

	(void)elf;
	if (f->nfuncs == f->cap) {
		size_t bigger_cap = f->cap ? f->cap * 2 : 256;
		struct elf_func *bigger = realloc(f->funcs, bigger_cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		f->funcs = bigger;
		f->cap = bigger_cap;
	}
	f->funcs[f->nfuncs].name = strdup(name);
	if (!f->funcs[f->nfuncs].name)
		return -ENOMEM;
	f->funcs[f->nfuncs].addr = sym->st_value;
	f->funcs[f->nfuncs].size = sym->st_size;
	f->nfuncs++;
	return 0;
}

static int compare_funcs(const void *a, const void *b)
{
	const struct elf_func *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address, the sized symbol first: it says where the function ends */
	return (x->size < y->size) - (x->size > y->size);
}

static int load_functions(Elf *elf, struct elf_file *f)
{
	int err = elf_each_function(elf, add_function, f);

	if (!err && f->nfuncs)
		qsort(f->funcs, f->nfuncs, sizeof(*f->funcs), compare_funcs);
	return err;
}

/* Parses path into f; a failure leaves f marked unreadable rather than failing the report. */
static void file_load(struct elf_file *f)
{
	struct elf_handle h;

	if (elf_handle_open(f->path, &h))
		return;
	if (!load_segments(h.elf, f) && !load_functions(h.elf, f))
		f->readable = true;
	elf_handle_close(&h);
	if (!f->readable) {
		char *path = f->path;

		f->path = NULL;
		file_clear(f);
		f->path = path;
	}
}

static struct elf_file *file_get(struct elf_symbols *c, const char *path)
{
	struct elf_file *slot = NULL;

	for (unsigned i = 0; i < c->nfiles; i++)
		if (c->files[i].path && !strcmp(c->files[i].path, path)) {
			c->files[i].last_used = ++c->clock;
			return &c->files[i];
		}
	if (c->nfiles < c->max_files) {
		slot = &c->files[c->nfiles++];
	} else {
		slot = &c->files[0];
		for (unsigned i = 1; i < c->nfiles; i++)
			if (c->files[i].last_used < slot->last_used)
				slot = &c->files[i];
		file_clear(slot);
	}
	slot->path = strdup(path);
	if (!slot->path)
		return NULL;	/* an empty slot matches nothing and is evicted first */
	slot->last_used = ++c->clock;
	file_load(slot);
	return slot;
}

static bool offset_to_vaddr(const struct elf_file *f, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < f->nsegments; i++) {
		const struct elf_segment *s = &f->segments[i];

		if (offset >= s->file_offset && offset - s->file_offset < s->file_size) {
			*vaddr = s->vaddr + (offset - s->file_offset);
			return true;
		}
	}
	return false;
}

/* The last function starting at or before addr, or NULL. */
static const struct elf_func *func_before(const struct elf_file *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nfuncs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* step back to the first entry at that address: the sized one sorts first */
	while (lo > 1 && f->funcs[lo - 2].addr == f->funcs[lo - 1].addr)
		lo--;
	return &f->funcs[lo - 1];
}

const char *elf_symbols_lookup(struct elf_symbols *c, const char *path, uint64_t file_offset,
			       uint64_t *sym_offset)
{
	struct elf_file *f;
	const struct elf_func *fn;
	uint64_t vaddr;

	if (!path || !*path)
		return NULL;
	f = file_get(c, path);
	if (!f || !f->readable || !offset_to_vaddr(f, file_offset, &vaddr))
		return NULL;
	fn = func_before(f, vaddr);
	if (!fn || (fn->size && vaddr - fn->addr >= fn->size))
		return NULL;
	*sym_offset = vaddr - fn->addr;
	return fn->name;
}
