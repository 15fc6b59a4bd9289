/* The GRTRACE_BPF_VARIANTS list: which measured code forms the translator emits. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "gpubpf/bpf_ptx.h"

static const struct {
	const char *name;
	unsigned bit;
} known[] = {
    {"ring_fast_drop", GPUBPF_VARIANT_RING_FAST_DROP},
    {"ring_warp_slots", GPUBPF_VARIANT_RING_WARP_SLOTS},
    {"l2_evict_last", GPUBPF_VARIANT_L2_EVICT_LAST},
    {"ring_early_read", GPUBPF_VARIANT_RING_EARLY_READ},
    {"ring_entry_read", GPUBPF_VARIANT_RING_EARLY_READ | GPUBPF_VARIANT_RING_ENTRY_READ},
};

int gpubpf_variants_parse(const char *list, unsigned *out, char *err, size_t err_len)
{
	/* unset: the forms measured faster (bench/RESULTS.md, run 33); "none": the first forms */
	*out = list ? 0 : GPUBPF_VARIANTS_DEFAULT;
	if (list && !strcmp(list, "none"))
		return 0;
	while (list && *list) {
		size_t n = strcspn(list, ","), i;

		for (i = 0; n && i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i].name) == n && !strncmp(known[i].name, list, n))
				break;
		if (n && i == sizeof(known) / sizeof(known[0])) {
			snprintf(
			    err, err_len,
			    "%s: unknown variant '%.*s'; known: ring_fast_drop, ring_warp_slots, "
			    "ring_early_read, ring_entry_read, l2_evict_last (or none)",
			    GPUBPF_VARIANTS_ENV, (int)(n > 64 ? 64 : n), list);
			return -EINVAL;
		}
		if (n)
			*out |= known[i].bit;
		list += n + (list[n] == ',');
	}
	return 0;
}
