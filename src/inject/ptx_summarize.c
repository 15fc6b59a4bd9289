/* The device-side summarizer of block-mode probe buffers: spans in, SM totals and histogram out. */
#include "ptx_summarize.h"

/*
 * One CTA of GRT_SUMMARIZE_THREADS threads per launch to summarize. CTA i
 * reads jobs[i] = {buffer, spans, tag} (struct grt_probe_summary_job, in
 * mapped host memory), walks the buffer's spans, keeps those with the
 * launch's tag, and accumulates in shared memory an image of the buffer's
 * bytes [GRT_PROBE_HIST_OFF, GRT_PROBE_AGG_END): the duration histogram
 * (64 u32 buckets) then 256 SM slots (struct grt_probe_sm). It then writes
 * the histogram and the first sm_slots SM slots over the buffer's totals,
 * every word of them, so they need no zeroing between launches.
 *
 * Shared-memory atomics are cheap; the same reductions done by every block
 * of the application's kernel in global memory were what made the probes
 * slow (bench/RESULTS.md, run 17). The offsets below are probe_buffer.h's:
 * the histogram at shared byte 0 (buffer byte 64), SM slot s at shared
 * byte 256 + 32 s, spans from buffer byte 8512 (asserted below).
 */
_Static_assert(GRT_PROBE_HIST_OFF == 64 && GRT_PROBE_HIST_BUCKETS == 64,
	       "the summarizer's histogram");
_Static_assert(GRT_PROBE_SM_OFF - GRT_PROBE_HIST_OFF == 256 && GRT_PROBE_SM_SLOTS == 256,
	       "the summarizer's SM slots");
_Static_assert(GRT_PROBE_AGG_END == 8512 && GRT_PROBE_AGG_END - GRT_PROBE_HIST_OFF == 8448,
	       "the summarizer's spans and shared image");
_Static_assert(sizeof(struct grt_probe_summary_job) == 16, "the summarizer's jobs");

const char grt_summarize_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry __grt_summarize(.param .u64 jobs, .param .u32 sm_slots)\n"
    "{\n"
    "	.reg .pred %p<4>;\n"
    "	.reg .b32 %r<16>;\n"
    "	.reg .b64 %rd<16>;\n"
    "	.shared .align 8 .b8 tot[8448];\n"
    /* the job: rd1 buffer (global), r2 spans, r3 tag */
    "	ld.param.u64 %rd1, [jobs];\n"
    "	cvta.to.global.u64 %rd1, %rd1;\n"
    "	mov.u32 %r1, %ctaid.x;\n"
    "	mul.wide.u32 %rd2, %r1, 16;\n"
    "	add.u64 %rd1, %rd1, %rd2;\n"
    "	ld.global.u64 %rd3, [%rd1];\n"
    "	ld.global.u32 %r2, [%rd1+8];\n"
    "	ld.global.u32 %r3, [%rd1+12];\n"
    "	and.b32 %r3, %r3, 65535;\n"
    "	cvta.to.global.u64 %rd3, %rd3;\n"
    "	mov.u64 %rd13, tot;\n"
    "	mov.u32 %r4, %tid.x;\n"
    "	mov.u32 %r5, %ntid.x;\n"
    /* zero the 2112 words of shared totals */
    "	mov.u32 %r6, %r4;\n"
    "ZERO:\n"
    "	setp.ge.u32 %p1, %r6, 2112;\n"
    "	@%p1 bra ZEROED;\n"
    "	mul.wide.u32 %rd4, %r6, 4;\n"
    "	add.u64 %rd4, %rd4, %rd13;\n"
    "	st.shared.u32 [%rd4], 0;\n"
    "	add.u32 %r6, %r6, %r5;\n"
    "	bra ZERO;\n"
    "ZEROED:\n"
    "	bar.sync 0;\n"
    /* every span of the launch: rd5 start, rd6 = dur | smid << 32 | tag << 48 */
    "	mov.u32 %r6, %r4;\n"
    "SPAN:\n"
    "	setp.ge.u32 %p1, %r6, %r2;\n"
    "	@%p1 bra SPANS_DONE;\n"
    "	mul.wide.u32 %rd4, %r6, 16;\n"
    "	add.u64 %rd4, %rd4, %rd3;\n"
    "	ld.global.v2.u64 {%rd5, %rd6}, [%rd4+8512];\n"
    "	shr.u64 %rd7, %rd6, 48;\n"
    "	cvt.u32.u64 %r7, %rd7;\n"
    "	setp.ne.u32 %p2, %r7, %r3;\n"
    "	@%p2 bra NEXT;\n"
    /* r8 SM slot (ids from 255 on share the last), rd8 duration in ns, rd9 end */
    "	shr.u64 %rd7, %rd6, 32;\n"
    "	cvt.u32.u64 %r8, %rd7;\n"
    "	and.b32 %r8, %r8, 65535;\n"
    "	min.u32 %r8, %r8, 255;\n"
    "	cvt.u32.u64 %r9, %rd6;\n"
    "	and.b32 %r10, %r9, 2147483647;\n"
    "	cvt.u64.u32 %rd8, %r10;\n"
    "	setp.ne.u32 %p3, %r10, %r9;\n"
    "	@%p3 shl.b64 %rd8, %rd8, 10;\n"
    "	add.u64 %rd9, %rd5, %rd8;\n"
    "	not.b64 %rd10, %rd5;\n"
    "	mul.wide.u32 %rd11, %r8, 32;\n"
    "	add.u64 %rd11, %rd11, %rd13;\n"
    "	atom.shared.max.u64 %rd12, [%rd11+256], %rd10;\n"
    "	atom.shared.max.u64 %rd12, [%rd11+264], %rd9;\n"
    "	atom.shared.add.u64 %rd12, [%rd11+272], %rd8;\n"
    "	atom.shared.add.u32 %r11, [%rd11+280], 1;\n"
    "	min.u64 %rd12, %rd8, 4294967295;\n"
    "	cvt.u32.u64 %r12, %rd12;\n"
    "	atom.shared.max.u32 %r11, [%rd11+284], %r12;\n"
    /* bucket 2e + the bit below the leading one; e = 0 shifts by 2^32-1, which gives 0 */
    "	or.b32 %r13, %r12, 1;\n"
    "	clz.b32 %r13, %r13;\n"
    "	sub.u32 %r13, 31, %r13;\n"
    "	sub.u32 %r14, %r13, 1;\n"
    "	shr.b32 %r14, %r12, %r14;\n"
    "	and.b32 %r14, %r14, 1;\n"
    "	shl.b32 %r13, %r13, 1;\n"
    "	add.u32 %r13, %r13, %r14;\n"
    "	mul.wide.u32 %rd12, %r13, 4;\n"
    "	add.u64 %rd12, %rd12, %rd13;\n"
    "	atom.shared.add.u32 %r11, [%rd12], 1;\n"
    "NEXT:\n"
    "	add.u32 %r6, %r6, %r5;\n"
    "	bra SPAN;\n"
    "SPANS_DONE:\n"
    "	bar.sync 0;\n"
    /* out: the histogram and the first sm_slots SM slots, 64 + 8 sm_slots words */
    "	ld.param.u32 %r15, [sm_slots];\n"
    "	min.u32 %r15, %r15, 256;\n"
    "	shl.b32 %r15, %r15, 3;\n"
    "	add.u32 %r15, %r15, 64;\n"
    "	mov.u32 %r6, %r4;\n"
    "COPY:\n"
    "	setp.ge.u32 %p1, %r6, %r15;\n"
    "	@%p1 bra DONE;\n"
    "	mul.wide.u32 %rd4, %r6, 4;\n"
    "	add.u64 %rd5, %rd4, %rd13;\n"
    "	ld.shared.u32 %r7, [%rd5];\n"
    "	add.u64 %rd6, %rd4, %rd3;\n"
    "	st.global.u32 [%rd6+64], %r7;\n"
    "	add.u32 %r6, %r6, %r5;\n"
    "	bra COPY;\n"
    "DONE:\n"
    "	ret;\n"
    "}\n";
