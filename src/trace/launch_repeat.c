/* Launch repeat records: encoding a launch against the one before it, and expanding it back. */
#include <stddef.h>
#include <string.h>
#include "trace/launch_repeat.h"

/*
 * repeats() names every field; one added to the record must be added there
 * too, or a repeat would drop it. (The size says whether one was.)
 */
_Static_assert(sizeof(struct grt_cuda_launch_rec) == 112 && sizeof(struct grt_cuda_call) == 24,
	       "launch record fields: see repeats()");

/*
 * Whether rec equals before in every field a repeat record does not carry
 * (it carries the return, result, flags, and the first arg_words argument
 * words), the unused argument slots included, so that the expansion is
 * exact. *args_differ: whether the carried words differ.
 */
static bool repeats(const struct grt_cuda_launch_rec *before, const struct grt_cuda_launch_rec *rec,
		    bool *args_differ)
{
	uint32_t words = rec->arg_words; /* at most GRT_LAUNCH_ARG_WORDS: the caller checked */

	if (rec->call.api != before->call.api || rec->call.ppid != before->call.ppid ||
	    rec->call.comm_str != before->call.comm_str || rec->function != before->function ||
	    rec->stream != before->stream || rec->kernel_str != before->kernel_str ||
	    rec->shared_mem != before->shared_mem || rec->user_stack_id != before->user_stack_id ||
	    rec->arg_words != before->arg_words || rec->grid[0] != before->grid[0] ||
	    rec->grid[1] != before->grid[1] || rec->grid[2] != before->grid[2] ||
	    rec->block[0] != before->block[0] || rec->block[1] != before->block[1] ||
	    rec->block[2] != before->block[2])
		return false;
	*args_differ = false;
	for (uint32_t i = 0; i < GRT_LAUNCH_ARG_WORDS; i++) {
		if (rec->args[i] == before->args[i])
			continue;
		if (i >= words)
			return false;
		*args_differ = true;
	}
	return true;
}

uint32_t launch_repeat_encode(const struct launch_repeat_base *base,
			      const struct grt_cuda_launch_rec *rec, uint64_t ts_ns, void *out)
{
	struct grt_cuda_launch_repeat_rec head = {
	    .ret = rec->call.ret, .flags = rec->call.flags, .base = (uint32_t)base->offset};
	bool returned = grt_cuda_call_returned(&rec->call), args_differ = false;
	uint32_t words = rec->arg_words;
	uint64_t *args_out = (uint64_t *)((char *)out + sizeof(head));

	if (!base->valid || words > GRT_LAUNCH_ARG_WORDS ||
	    /* the return, as the reader rebuilds it from the header's time */
	    (returned ? rec->call.return_ns < ts_ns || rec->call.return_ns - ts_ns > UINT32_MAX
		      : rec->call.return_ns != 0) ||
	    !repeats(&base->rec, rec, &args_differ))
		return 0;
	head.api_ns = returned ? (uint32_t)(rec->call.return_ns - ts_ns) : 0;
	head.arg_words = args_differ ? (uint16_t)words : 0;
	memcpy(out, &head, sizeof(head));
	for (uint32_t i = 0; i < head.arg_words; i++)
		args_out[i] = rec->args[i];
	return (uint32_t)(sizeof(head) + head.arg_words * sizeof(rec->args[0]));
}

void launch_repeat_note(struct launch_repeat_base *base, const void *launch, uint32_t len,
			uint64_t offset)
{
	if (len < sizeof(base->rec))
		memset(&base->rec, 0, sizeof(base->rec));
	memcpy(&base->rec, launch, len < sizeof(base->rec) ? len : sizeof(base->rec));
	base->offset = offset;
	base->valid = true;
}

void launch_repeat_advance(struct launch_repeat_base *base, const struct grt_cuda_launch_rec *rec,
			   uint64_t offset)
{
	base->rec.call.return_ns = rec->call.return_ns;
	base->rec.call.ret = rec->call.ret;
	base->rec.call.flags = rec->call.flags;
	for (uint32_t i = 0; i < rec->arg_words && i < GRT_LAUNCH_ARG_WORDS; i++)
		base->rec.args[i] = rec->args[i];
	base->offset = offset;
}

int launch_repeat_expand(struct launch_repeat_base *base, const void *payload, uint32_t len,
			 uint64_t ts_ns, uint64_t offset)
{
	struct grt_cuda_launch_rec *out = &base->rec;
	struct grt_cuda_launch_repeat_rec head;

	if (!base->valid)
		return -1;
	if (len < sizeof(head))
		return -3;
	memcpy(&head, payload, sizeof(head));
	if (head.base != (uint32_t)base->offset)
		return -2;
	/* argument words come whole, as many as the launch before has, or not at all */
	if (head.arg_words > GRT_LAUNCH_ARG_WORDS ||
	    (head.arg_words && head.arg_words != base->rec.arg_words) ||
	    len != sizeof(head) + head.arg_words * sizeof(out->args[0]))
		return -3;
	out->call.flags = head.flags;
	out->call.ret = head.ret;
	out->call.return_ns = grt_cuda_call_returned(&out->call) ? ts_ns + head.api_ns : 0;
	memcpy(out->args, (const char *)payload + sizeof(head), head.arg_words * sizeof(out->args[0]));
	base->offset = offset;
	return 0;
}
