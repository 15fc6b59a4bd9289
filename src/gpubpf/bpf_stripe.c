/* Which array maps are counters that only adds reach, so that each SM can keep its own copy. */
#include "gpubpf/bpf_stripe.h"
#include "gpubpf/bpf_device.h"
#include "gpubpf/bpf_insn.h"
#include "gpubpf/gpu_abi.h"

enum map_use {
	USE_ADD4 = 1,  /* 4-byte atomic add, result unused */
	USE_ADD8 = 2,  /* 8-byte atomic add, result unused */
	USE_OTHER = 4, /* anything else: a load, store, other atomic, helper, update, delete */
};

/* map -1: an access whose map differs between paths; every map is then read or written */
static void mark(uint8_t *use, size_t nr_maps, int16_t map, uint8_t how)
{
	if (map >= 0 && (size_t)map < nr_maps) {
		use[map] |= how;
		return;
	}
	for (size_t i = 0; i < nr_maps; i++)
		use[i] |= USE_OTHER;
}

static void note_insn(uint8_t *use, size_t nr_maps, const struct bpf_insn *insn,
		      const struct gpubpf_insn_info *info)
{
	uint8_t cls = BPF_INSN_CLASS(insn->code);

	if (cls == BPF_LDX || cls == BPF_ST || cls == BPF_STX) {
		bool add = cls == BPF_STX && BPF_INSN_MODE(insn->code) == BPF_ATOMIC &&
			   insn->imm == BPF_ADD && info->mem.bases == GPUBPF_BASE_MAP;

		if (info->mem.bases & GPUBPF_BASE_MAP)
			mark(use, nr_maps, info->mem.map,
			     !add ? USE_OTHER : bpf_size_bytes(insn->code) == 8 ? USE_ADD8 : USE_ADD4);
		return;
	}
	if (cls != BPF_JMP || BPF_INSN_OP(insn->code) != BPF_CALL || insn->src_reg)
		return;
	for (int a = 0; a < 5; a++)
		if (info->arg[a].bases & GPUBPF_BASE_MAP)
			mark(use, nr_maps, info->arg[a].map, USE_OTHER);
	if (insn->imm == BPF_FUNC_map_update_elem || insn->imm == BPF_FUNC_map_delete_elem)
		mark(use, nr_maps, info->map, USE_OTHER);
}

void gpubpf_stripe_counters(struct gpubpf_bundle *b)
{
	uint8_t use[GPUBPF_MAX_MAPS] = {0};
	size_t nr_maps = b->obj.nr_maps;

	for (size_t p = 0; p < b->nr_progs; p++) {
		const struct gpubpf_prog *prog = b->progs[p].prog;
		const struct gpubpf_verified *ver = &b->progs[p].ver;

		for (size_t pc = 0; pc < ver->nr_insns && pc < prog->nr_insns; pc++)
			if (ver->info[pc].seen)
				note_insn(use, nr_maps, &prog->insns[pc], &ver->info[pc]);
	}
	for (size_t i = 0; i < nr_maps; i++) {
		struct gpubpf_map *m = &b->obj.maps[i];
		struct gpubpf_map_shape striped = {m->type, m->key_size, m->value_size,
						   m->max_entries, 8};
		size_t bytes = gpubpf_map_bytes(&striped, 0, 0);

		m->stripe_width = 0;
		/* sections as maps (.bss, .data) hold initial values the host would have to place */
		if ((m->type != BPF_MAP_TYPE_ARRAY && m->type != GRT_BPF_MAP_GPU_ARRAY) ||
		    m->rodata || m->name[0] == '.' || bytes > GPUBPF_STRIPE_MAX_BYTES)
			continue;
		if (use[i] == USE_ADD8)
			m->stripe_width = 8;
		else if (use[i] == USE_ADD4)
			m->stripe_width = 4;
	}
}
