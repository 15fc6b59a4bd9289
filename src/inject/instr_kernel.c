/* Merging the instrumentations' kernel tables, and the arguments of a twin's launch. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "inject/cuda_decls.h"
#include "inject/instr_kernel.h"

int instr_kernels_merge(const struct ptx_rewrite_result *rw, unsigned nrw,
			const unsigned *nr_params, struct instr_kernel *out, size_t *instrumented)
{
	const struct ptx_rewrite_result *first = &rw[0];

	*instrumented = 0;
	for (size_t i = 0; i < first->nr_kernels; i++) {
		struct instr_kernel *k = &out[i];

		memset(k, 0, sizeof(*k));
		k->name = first->kernels[i].name;
		k->nr_params = first->kernels[i].nr_params;
		k->reason = first->kernels[i].reason;
		for (unsigned u = 0; u < nrw; u++) {
			const struct ptx_kernel_result *r = ptx_rewrite_find(&rw[u], k->name);
			unsigned n = nr_params[u];

			if (!r || !r->instrumented)
				continue;
			if (k->nr_extra + n > INSTR_MAX_PARAMS ||
			    (k->nr_extra && r->param_offset != k->extra_offset + 8 * k->nr_extra))
				return -EINVAL;
			if (!k->nr_extra)
				k->extra_offset = r->param_offset;
			k->user[k->nusers] = (uint8_t)u;
			k->user_param[k->nusers++] = (uint8_t)k->nr_extra;
			k->nr_extra += n;
			k->param_size = r->param_size;
			k->users |= 1u << u;
		}
		if (k->users)
			(*instrumented)++;
	}
	return 0;
}

void **instr_args_extra(void **extra, const struct instr_kernel *k, const uint64_t *values,
			void **storage, size_t *size_storage)
{
	void *data = NULL;
	size_t *size = NULL;
	uint8_t *copy;

	for (void **e = extra; e && *e != CU_LAUNCH_PARAM_END; e += 2) {
		if (e[0] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			data = e[1];
		else if (e[0] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			size = e[1];
		else
			return NULL; /* an option we do not know: leave the launch alone */
	}
	if (!data || !size || k->extra_offset + 8 * k->nr_extra > k->param_size)
		return NULL;
	copy = calloc(1, k->param_size);
	if (!copy)
		return NULL;
	memcpy(copy, data, *size < k->extra_offset ? *size : k->extra_offset);
	memcpy(copy + k->extra_offset, values, 8 * k->nr_extra);
	*size_storage = k->param_size;
	storage[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
	storage[1] = copy;
	storage[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
	storage[3] = size_storage;
	storage[4] = CU_LAUNCH_PARAM_END;
	return storage;
}
