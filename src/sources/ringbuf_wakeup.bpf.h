/* BPF side of batched ring-buffer wakeups for high-rate sources. */
#ifndef GRT_RINGBUF_WAKEUP_BPF_H
#define GRT_RINGBUF_WAKEUP_BPF_H

/*
 * A wakeup per event costs an irq_work and a context switch of the reader:
 * more than the event itself for syscall-rate sources. Wake the reader only
 * once the buffer holds `threshold` bytes; the session's poll timeout picks up
 * the rest.
 */
static __always_inline __u64 ringbuf_wakeup_flags(void *ringbuf, __u64 threshold)
{
	return bpf_ringbuf_query(ringbuf, BPF_RB_AVAIL_DATA) >= threshold ? BPF_RB_FORCE_WAKEUP
									   : BPF_RB_NO_WAKEUP;
}

#endif
