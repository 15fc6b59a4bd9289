/* Loading a clang-built eBPF object for the GPU: programs by section, maps, relocations, BTF. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include "common/elf_file.h"
#include "gpubpf/bpf_object.h"
#include "trace/records_bpf.h"

#define MAX_SYMBOLS 65536
#define MAX_PROGS 64

/* What the loader keeps while it walks the ELF file. */
struct loader {
	struct gpubpf_object *obj;
	Elf *elf;
	Elf_Data *symbols; /* .symtab */
	size_t nr_symbols;
	size_t symbols_strtab;
	size_t maps_shndx;		      /* section index of .maps, 0 when none */
	size_t rodata_shndx[GPUBPF_MAX_MAPS]; /* section of each rodata map, by map index */
	char *err;
	size_t err_len;
};

static int fail(struct loader *l, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct loader *l, int code, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(l->err, l->err_len, "%s: ", l->obj->name);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < l->err_len)
		vsnprintf(l->err + n, l->err_len - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

const char *gpubpf_map_type_name(uint32_t type)
{
	const char *name = grt_bpf_map_type_name(type);

	return strcmp(name, "unknown") ? name : NULL;
}

bool gpubpf_parse_section(const char *section, enum grt_bpf_attach *attach, const char **kernel)
{
	static const char kprobe[] = "kprobe/", kretprobe[] = "kretprobe/";

	if (!strncmp(section, kprobe, sizeof(kprobe) - 1)) {
		*kernel = section + sizeof(kprobe) - 1;
		*attach = strcmp(*kernel, "__memcapture") ? GRT_BPF_ATTACH_ENTRY
							  : GRT_BPF_ATTACH_MEMCAPTURE;
	} else if (!strncmp(section, kretprobe, sizeof(kretprobe) - 1)) {
		*kernel = section + sizeof(kretprobe) - 1;
		*attach = GRT_BPF_ATTACH_EXIT;
	} else {
		return false;
	}
	if (*attach == GRT_BPF_ATTACH_MEMCAPTURE)
		*kernel = NULL;
	return *attach == GRT_BPF_ATTACH_MEMCAPTURE || **kernel;
}

static bool get_symbol(struct loader *l, size_t i, GElf_Sym *sym, const char **name)
{
	if (!l->symbols || i >= l->nr_symbols || !gelf_getsym(l->symbols, (int)i, sym))
		return false;
	*name = elf_strptr(l->elf, l->symbols_strtab, sym->st_name);
	if (!*name)
		*name = "";
	return true;
}

/* --- maps, from BTF ------------------------------------------------------------------- */

static const struct btf_type *skip_typedefs(const struct btf *btf, uint32_t id, uint32_t *res)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	for (int depth = 0; t && depth < 32 && (btf_is_mod(t) || btf_is_typedef(t)); depth++) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (res)
		*res = id;
	return t;
}

/* __uint(name, N) is `int (*name)[N]`: N is the array's element count. */
static bool member_uint(const struct btf *btf, uint32_t type, uint32_t *value)
{
	const struct btf_type *t = skip_typedefs(btf, type, NULL);

	if (!t || !btf_is_ptr(t))
		return false;
	t = skip_typedefs(btf, t->type, NULL);
	if (!t || !btf_is_array(t))
		return false;
	*value = btf_array(t)->nelems;
	return true;
}

/* __type(name, T) is `T *name`: the pointee's type id and size. */
static bool member_type(const struct btf *btf, uint32_t type, uint32_t *id, uint32_t *size)
{
	const struct btf_type *t = skip_typedefs(btf, type, NULL);
	long sz;

	if (!t || !btf_is_ptr(t))
		return false;
	*id = t->type;
	sz = btf__resolve_size(btf, t->type);
	if (sz <= 0 || sz > (1 << 20))
		return false;
	*size = (uint32_t)sz;
	return true;
}

static int check_map(struct loader *l, const struct gpubpf_map *m)
{
	const char *type = gpubpf_map_type_name(m->type);

	if (!type)
		return fail(
		    l, -EINVAL,
		    "map '%s' has type %u, which does not run on the GPU (supported: array, "
		    "hash, percpu_array, ringbuf, perf_event_array, 1502, 1503, 1527)",
		    m->name, m->type);
	if (!m->max_entries)
		return fail(l, -EINVAL, "map '%s' has no max_entries", m->name);
	if (m->type == BPF_MAP_TYPE_RINGBUF) {
		/* a value type may name the events' layout (a grtrace extension); no key */
		if (m->key_size)
			return fail(l, -EINVAL, "ringbuf map '%s' must not have a key", m->name);
		return 0;
	}
	if (m->type == BPF_MAP_TYPE_PERF_EVENT_ARRAY && !m->value_size)
		return 0;
	if (!m->value_size || m->value_size > (1u << 16))
		return fail(l, -EINVAL, "map '%s': value size %u (1 to 65536 bytes)", m->name,
			    m->value_size);
	if (m->type == BPF_MAP_TYPE_HASH) {
		if (!m->key_size || m->key_size > 512)
			return fail(l, -EINVAL, "hash map '%s': key size %u (1 to 512 bytes)",
				    m->name, m->key_size);
		if (m->max_entries > (1u << 24))
			return fail(l, -EINVAL, "hash map '%s': %u entries (at most 16777216)",
				    m->name, m->max_entries);
	} else if (!gpubpf_map_is_ring(m->type) && m->key_size != 4) {
		return fail(l, -EINVAL, "%s map '%s' needs a 4-byte key (it has %u)", type, m->name,
			    m->key_size);
	}
	return 0;
}

static int parse_map_var(struct loader *l, const struct btf_type *var, const char *name)
{
	const struct btf *btf = l->obj->btf;
	const struct btf_type *def = skip_typedefs(btf, var->type, NULL);
	struct gpubpf_map *m;

	if (l->obj->nr_maps == GPUBPF_MAX_MAPS)
		return fail(l, -EINVAL, "more than %u maps", GPUBPF_MAX_MAPS);
	if (!def || !btf_is_struct(def))
		return fail(l, -EINVAL, "map '%s' is not a BTF map definition struct", name);
	m = &l->obj->maps[l->obj->nr_maps];
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	for (uint16_t i = 0; i < btf_vlen(def); i++) {
		const struct btf_member *mb = btf_members(def) + i;
		const char *field = btf__name_by_offset(btf, mb->name_off);
		bool ok = true;

		if (!field)
			continue;
		if (!strcmp(field, "type"))
			ok = member_uint(btf, mb->type, &m->type);
		else if (!strcmp(field, "max_entries"))
			ok = member_uint(btf, mb->type, &m->max_entries);
		else if (!strcmp(field, "key_size"))
			ok = member_uint(btf, mb->type, &m->key_size);
		else if (!strcmp(field, "value_size"))
			ok = member_uint(btf, mb->type, &m->value_size);
		else if (!strcmp(field, "map_flags"))
			ok = member_uint(btf, mb->type, &m->map_flags);
		else if (!strcmp(field, "key"))
			ok = member_type(btf, mb->type, &m->btf_key_type, &m->key_size);
		else if (!strcmp(field, "value"))
			ok = member_type(btf, mb->type, &m->btf_value_type, &m->value_size);
		else if (!strcmp(field, "values") || !strcmp(field, "inner_map"))
			return fail(l, -EINVAL, "map '%s': maps of maps do not run on the GPU",
				    name);
		if (!ok)
			return fail(l, -EINVAL, "map '%s': field '%s' is malformed", name, field);
	}
	l->obj->nr_maps++;
	return check_map(l, m);
}

static int load_maps(struct loader *l)
{
	const struct btf *btf = l->obj->btf;
	int id;
	const struct btf_type *sec;

	if (!l->maps_shndx)
		return 0;
	if (!btf)
		return fail(l, -EINVAL, "maps without BTF: compile with -g");
	id = btf__find_by_name_kind(btf, ".maps", BTF_KIND_DATASEC);
	if (id <= 0)
		return fail(l, -EINVAL, "no .maps in the BTF: compile with -g");
	sec = btf__type_by_id(btf, (uint32_t)id);
	for (uint16_t i = 0; sec && i < btf_vlen(sec); i++) {
		const struct btf_var_secinfo *vi = btf_var_secinfos(sec) + i;
		const struct btf_type *var = btf__type_by_id(btf, vi->type);
		const char *name;
		int err;

		if (!var || !btf_is_var(var))
			return fail(l, -EINVAL, "malformed .maps section in the BTF");
		name = btf__name_by_offset(btf, var->name_off);
		err = parse_map_var(l, var, name ? name : "");
		if (err)
			return err;
	}
	return 0;
}

static int map_by_name(const struct gpubpf_object *obj, const char *name)
{
	for (size_t i = 0; i < obj->nr_maps; i++)
		if (!obj->maps[i].rodata && !strcmp(obj->maps[i].name, name))
			return (int)i;
	return -1;
}

/* Read-only data sections become one-entry arrays the programs read through pointers. */
static int add_rodata(struct loader *l, Elf_Scn *scn, const GElf_Shdr *sh, const char *name)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct gpubpf_map *m;

	if (!sh->sh_size)
		return 0;
	if (l->obj->nr_maps == GPUBPF_MAX_MAPS)
		return fail(l, -EINVAL, "more than %u maps and read-only sections",
			    GPUBPF_MAX_MAPS);
	if (!data || !data->d_buf || data->d_size != sh->sh_size || sh->sh_size > (1u << 16))
		return fail(l, -EINVAL, "section %s is malformed or larger than 64 KiB", name);
	m = &l->obj->maps[l->obj->nr_maps];
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->type = BPF_MAP_TYPE_ARRAY;
	m->key_size = 4;
	m->value_size = (uint32_t)sh->sh_size;
	m->max_entries = 1;
	m->map_flags = BPF_F_RDONLY_PROG;
	m->rodata = true;
	m->data = malloc(sh->sh_size);
	if (!m->data)
		return fail(l, -ENOMEM, "out of memory");
	memcpy(m->data, data->d_buf, sh->sh_size);
	l->rodata_shndx[l->obj->nr_maps++] = elf_ndxscn(scn);
	return 0;
}

static int rodata_map(const struct loader *l, size_t shndx)
{
	for (size_t i = 0; i < l->obj->nr_maps; i++)
		if (l->obj->maps[i].rodata && l->rodata_shndx[i] == shndx)
			return (int)i;
	return -1;
}

/* --- programs and relocations ---------------------------------------------------------- */

static const char *section_name_of(struct loader *l, size_t shndx)
{
	Elf_Scn *scn = elf_getscn(l->elf, shndx);
	GElf_Shdr sh;
	const char *name;

	if (!scn || !gelf_getshdr(scn, &sh))
		return "?";
	name = elf_section_name(l->elf, &sh);
	return name ? name : "?";
}

/* Applies one relocation of program p (whose code starts at byte `start` of its section). */
static int relocate(struct loader *l, struct gpubpf_prog *p, uint64_t start, const GElf_Rel *rel)
{
	size_t idx = (size_t)((rel->r_offset - start) / sizeof(struct bpf_insn));
	struct bpf_insn *insn;
	const char *name;
	GElf_Sym sym;
	int map;

	if (rel->r_offset < start || (rel->r_offset - start) % sizeof(struct bpf_insn) ||
	    idx >= p->nr_insns)
		return 0; /* another program's */
	insn = &p->insns[idx];
	if (!get_symbol(l, GELF_R_SYM(rel->r_info), &sym, &name))
		return fail(l, -EINVAL, "%s insn %zu: relocation with a bad symbol", p->section,
			    idx);
	if (insn->code == (BPF_JMP | BPF_CALL) || GELF_ST_TYPE(sym.st_info) == STT_FUNC)
		return fail(l, -EINVAL,
			    "%s insn %zu: calls function '%s' (calls between eBPF functions do "
			    "not run on the GPU: declare it static __always_inline)",
			    p->section, idx, name);
	if (!bpf_is_ld_imm64(insn) || idx + 1 >= p->nr_insns)
		return fail(l, -EINVAL, "%s insn %zu: relocation against '%s' on a non-ld_imm64",
			    p->section, idx, name);
	if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
		return fail(
		    l, -EINVAL,
		    "%s insn %zu: uses extern '%s' (externs and kconfig do not run on the GPU)",
		    p->section, idx, name);
	if (l->maps_shndx && sym.st_shndx == l->maps_shndx) {
		map = map_by_name(l->obj, name);
		if (map < 0)
			return fail(l, -EINVAL, "%s insn %zu: '%s' is not a map in .maps",
				    p->section, idx, name);
		insn->src_reg = BPF_PSEUDO_MAP_FD;
		insn->imm = map;
		insn[1].imm = 0;
		return 0;
	}
	map = rodata_map(l, sym.st_shndx);
	if (map < 0)
		return fail(l, -EINVAL,
			    "%s insn %zu: uses '%s' in section %s (writable globals do not run on "
			    "the GPU: keep state in a map, or define BPF_NO_GLOBAL_DATA)",
			    p->section, idx, name, section_name_of(l, sym.st_shndx));
	{
		uint64_t off = (uint64_t)(uint32_t)insn->imm +
			       (GELF_ST_TYPE(sym.st_info) == STT_SECTION ? 0 : sym.st_value);

		if (off >= l->obj->maps[map].value_size)
			return fail(l, -EINVAL, "%s insn %zu: offset %llu outside section %s",
				    p->section, idx, (unsigned long long)off,
				    l->obj->maps[map].name);
		insn->src_reg = BPF_PSEUDO_MAP_VALUE;
		insn->imm = map;
		insn[1].imm = (int32_t)off;
	}
	return 0;
}

static int relocate_prog(struct loader *l, struct gpubpf_prog *p, size_t shndx, uint64_t start)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(l->elf, scn))) {
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_REL || sh.sh_info != shndx)
			continue;
		data = elf_getdata(scn, NULL);
		n = data && sh.sh_entsize == sizeof(Elf64_Rel) ? data->d_size / sizeof(Elf64_Rel)
							       : 0;
		for (size_t i = 0; data && i < n; i++) {
			GElf_Rel rel;
			int err;

			if (!gelf_getrel(data, (int)i, &rel))
				return fail(l, -EINVAL, "%s: malformed relocation", p->section);
			err = relocate(l, p, start, &rel);
			if (err)
				return err;
		}
	}
	/* A reference the compiler meant for the loader but that has no relocation. */
	for (size_t i = 0; i < p->nr_insns; i++) {
		if (!bpf_is_ld_imm64(&p->insns[i]))
			continue;
		if (p->insns[i].src_reg != 0 && p->insns[i].src_reg != BPF_PSEUDO_MAP_FD &&
		    p->insns[i].src_reg != BPF_PSEUDO_MAP_VALUE)
			return fail(l, -EINVAL,
				    "%s insn %zu: ld_imm64 of kind %u does not run on the GPU",
				    p->section, i, p->insns[i].src_reg);
		i++;
	}
	return 0;
}

/* The extent of function `sym` in a section of `size` bytes: to the next function or the end. */
static uint64_t func_end(struct loader *l, size_t shndx, const GElf_Sym *sym, uint64_t size)
{
	uint64_t end = size;

	if (sym->st_size)
		return sym->st_value + sym->st_size <= size ? sym->st_value + sym->st_size : size;
	for (size_t i = 0; i < l->nr_symbols; i++) {
		GElf_Sym s;
		const char *n;

		if (get_symbol(l, i, &s, &n) && s.st_shndx == shndx &&
		    GELF_ST_TYPE(s.st_info) == STT_FUNC && s.st_value > sym->st_value &&
		    s.st_value < end)
			end = s.st_value;
	}
	return end;
}

static int add_prog(struct loader *l, size_t shndx, const char *section, const uint8_t *code,
		    uint64_t size, const GElf_Sym *sym, const char *name)
{
	struct gpubpf_object *obj = l->obj;
	uint64_t start = sym ? sym->st_value : 0, end = sym ? func_end(l, shndx, sym, size) : size;
	struct gpubpf_prog *p, *v;
	const char *kernel;

	if (start >= end || (end - start) % sizeof(struct bpf_insn) || start % 8)
		return fail(l, -EINVAL, "%s: function '%s' has a malformed extent", section, name);
	if ((end - start) / sizeof(struct bpf_insn) > GPUBPF_MAX_INSNS)
		return fail(l, -EINVAL, "%s: more than %u instructions", section, GPUBPF_MAX_INSNS);
	if (obj->nr_progs == MAX_PROGS)
		return fail(l, -EINVAL, "more than %d programs", MAX_PROGS);
	v = realloc(obj->progs, (obj->nr_progs + 1) * sizeof(*v));
	if (!v)
		return fail(l, -ENOMEM, "out of memory");
	obj->progs = v;
	p = &obj->progs[obj->nr_progs++];
	memset(p, 0, sizeof(*p));
	gpubpf_parse_section(section, &p->attach, &kernel);
	p->section = strdup(section);
	p->name = strdup(name);
	p->kernel = kernel ? strdup(kernel) : NULL;
	p->nr_insns = (size_t)((end - start) / sizeof(struct bpf_insn));
	p->insns = malloc(p->nr_insns * sizeof(struct bpf_insn));
	if (!p->section || !p->name || (kernel && !p->kernel) || !p->insns)
		return fail(l, -ENOMEM, "out of memory");
	memcpy(p->insns, code + start, p->nr_insns * sizeof(struct bpf_insn));
	return relocate_prog(l, p, shndx, start);
}

static int load_section_progs(struct loader *l, Elf_Scn *scn, const GElf_Shdr *sh,
			      const char *section)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t shndx = elf_ndxscn(scn);
	size_t found = 0;
	enum grt_bpf_attach attach;
	const char *kernel;

	if (!sh->sh_size)
		return 0;
	if (!strcmp(section, ".text"))
		return 0; /* functions only reachable by calls, which are refused at the call */
	if (!gpubpf_parse_section(section, &attach, &kernel))
		return fail(l, -EINVAL,
			    "section '%s' is not a GPU program (use SEC(\"kprobe/KERNEL\"), "
			    "SEC(\"kretprobe/KERNEL\") or SEC(\"kprobe/__memcapture\"))",
			    section);
	if (!data || !data->d_buf || data->d_size != sh->sh_size)
		return fail(l, -EINVAL, "section '%s' is malformed", section);
	for (size_t i = 0; i < l->nr_symbols; i++) {
		GElf_Sym sym;
		const char *name;
		int err;

		if (!get_symbol(l, i, &sym, &name) || sym.st_shndx != shndx ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		err = add_prog(l, shndx, section, data->d_buf, sh->sh_size, &sym, name);
		if (err)
			return err;
		found++;
	}
	return found ? 0 : add_prog(l, shndx, section, data->d_buf, sh->sh_size, NULL, section);
}

/* --- the object ------------------------------------------------------------------------ */

static int find_symbols(struct loader *l)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(l->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		l->symbols = elf_getdata(scn, NULL);
		/* what the section holds, not what its header claims */
		l->nr_symbols = l->symbols && sh.sh_entsize == sizeof(Elf64_Sym)
				    ? l->symbols->d_size / sizeof(Elf64_Sym)
				    : 0;
		if (l->nr_symbols > MAX_SYMBOLS)
			return fail(l, -EINVAL, "more than %d symbols", MAX_SYMBOLS);
		l->symbols_strtab = sh.sh_link;
		return 0;
	}
	return fail(l, -ENOEXEC, "no symbol table: not a clang -target bpf object");
}

static int load_btf(struct loader *l)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(l->elf, ".BTF", &sh);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	struct btf *btf;

	if (!data || !data->d_buf || !data->d_size)
		return 0;
	l->obj->btf_data = malloc(data->d_size);
	if (!l->obj->btf_data)
		return fail(l, -ENOMEM, "out of memory");
	memcpy(l->obj->btf_data, data->d_buf, data->d_size);
	l->obj->btf_len = data->d_size;
	btf = btf__new(l->obj->btf_data, (uint32_t)l->obj->btf_len);
	if (!btf)
		return fail(l, -EINVAL, "malformed .BTF section");
	l->obj->btf = btf;
	return 0;
}

/* First pass: .maps, then read-only sections, which the programs' relocations refer to. */
static int load_data_sections(struct loader *l)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	while ((scn = elf_nextscn(l->elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_section_name(l->elf, &sh)))
			continue;
		if (!strcmp(name, ".maps"))
			l->maps_shndx = elf_ndxscn(scn);
		else if (!strcmp(name, "maps"))
			return fail(
			    l, -EINVAL,
			    "legacy 'maps' section: declare maps in SEC(\".maps\") with BTF");
	}
	err = load_maps(l);
	while (!err && (scn = elf_nextscn(l->elf, scn))) {
		const char *name;

		if (gelf_getshdr(scn, &sh) && (name = elf_section_name(l->elf, &sh)) &&
		    !strncmp(name, ".rodata", 7) && sh.sh_type == SHT_PROGBITS)
			err = add_rodata(l, scn, &sh, name);
	}
	return err;
}

static int load_progs(struct loader *l)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(l->elf, scn))) {
		const char *name;
		int err;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(name = elf_section_name(l->elf, &sh)))
			continue;
		err = load_section_progs(l, scn, &sh, name);
		if (err)
			return err;
	}
	if (!l->obj->nr_progs)
		return fail(l, -EINVAL,
			    "no program: add a function in SEC(\"kprobe/KERNEL\"), "
			    "SEC(\"kretprobe/KERNEL\") or SEC(\"kprobe/__memcapture\")");
	return 0;
}

static int load(struct loader *l)
{
	GElf_Ehdr eh;
	struct elf_handle h;
	int err = elf_handle_open_memory(l->obj->image, l->obj->image_len, &h);

	if (err)
		return fail(l, err, "%s", err == -ENOEXEC ? "not an ELF file" : "libelf unusable");
	l->elf = h.elf;
	if (!gelf_getehdr(h.elf, &eh) || eh.e_machine != EM_BPF || eh.e_type != ET_REL ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB) {
		err = fail(l, -ENOEXEC,
			   "not a little-endian eBPF object (build it with clang -target bpf -c)");
	} else {
		err = find_symbols(l);
		if (!err)
			err = load_btf(l);
		if (!err)
			err = load_data_sections(l);
		if (!err)
			err = load_progs(l);
	}
	elf_handle_close(&h);
	return err;
}

int gpubpf_object_open_mem(const void *buf, size_t len, const char *name, struct gpubpf_object *obj,
			   char *err, size_t err_len)
{
	struct loader l = {.obj = obj, .err = err, .err_len = err_len};

	memset(obj, 0, sizeof(*obj));
	obj->name = strdup(name ? name : "object");
	obj->image = malloc(len ? len : 1);
	if (!obj->name || !obj->image) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	memcpy(obj->image, buf, len);
	obj->image_len = len;
	return load(&l);
}

char *gpubpf_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size = -1;
	int saved;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (size = ftell(f)) >= 0 && !fseek(f, 0, SEEK_SET)) {
		if (size > (64l << 20))
			errno = EFBIG;
		else if ((buf = malloc((size_t)size + 1)) &&
			 fread(buf, 1, (size_t)size, f) != (size_t)size) {
			free(buf);
			buf = NULL;
			errno = EIO;
		}
	}
	saved = errno;
	fclose(f);
	errno = saved;
	if (buf) {
		buf[size] = 0;
		*len = (size_t)size;
	}
	return buf;
}

int gpubpf_object_open(const char *path, struct gpubpf_object *obj, char *err, size_t err_len)
{
	size_t len;
	char *buf;
	int rc;

	memset(obj, 0, sizeof(*obj));
	errno = 0;
	buf = gpubpf_read_file(path, &len);
	if (!buf) {
		rc = errno ? -errno : -EIO;
		snprintf(err, err_len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = gpubpf_object_open_mem(buf, len, path, obj, err, err_len);
	free(buf);
	return rc;
}

void gpubpf_object_free(struct gpubpf_object *obj)
{
	for (size_t i = 0; i < obj->nr_progs; i++) {
		free(obj->progs[i].section);
		free(obj->progs[i].name);
		free(obj->progs[i].kernel);
		free(obj->progs[i].insns);
	}
	free(obj->progs);
	for (size_t i = 0; i < obj->nr_maps; i++)
		free(obj->maps[i].data);
	btf__free(obj->btf);
	free(obj->btf_data);
	free(obj->image);
	free(obj->name);
	memset(obj, 0, sizeof(*obj));
}
