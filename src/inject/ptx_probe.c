/* The PTX the probes add: register declarations, the entry probe, the shared exit path. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "ptx_probe.h"

/*
 * Templates write '~' where the name prefix goes ("%~r0" -> "%grt_p_r0");
 * '~' never appears in the probe code otherwise.
 */
static void emit(struct strbuf *b, const struct probe_style *s, const char *tmpl)
{
	const char *p;

	while ((p = strchr(tmpl, '~'))) {
		strbuf_add(b, tmpl, (size_t)(p - tmpl));
		strbuf_puts(b, s->prefix);
		tmpl = p + 1;
	}
	strbuf_puts(b, tmpl);
}

/*
 * Register use: d0 parameter, then buffer (global); d1 span index; d2
 * scratch; d3 span address; d4 entry time (thread mode: live through the
 * kernel; block mode: loaded from shared memory at exit); d5 exit time, then
 * the span's second word; d6 the launch tag; r0-r11 32-bit scratch; q0-q2
 * predicates. Block mode adds one 8-byte shared variable: the entry time.
 */
void probe_emit_decls(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\n\t.reg .b64 %~d<7>;"
	     "\n\t.reg .b32 %~r<12>;"
	     "\n\t.reg .pred %~q<3>;");
	if (s->mode == GRT_PROBE_BLOCK)
		emit(b, s, "\n\t.shared .align 8 .b8 ~blk[8];");
}

void probe_emit_param(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s, "\n\t.param .u64 ~buf");
}

void probe_emit_exit_branch(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s, "bra $~exit");
}

/* The block's linear index into d1. */
static void emit_block_index(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\tmov.u32 %~r4, %ctaid.x;\n"
	     "\tmov.u32 %~r5, %ctaid.y;\n"
	     "\tmov.u32 %~r6, %ctaid.z;\n"
	     "\tmov.u32 %~r7, %nctaid.x;\n"
	     "\tmov.u32 %~r8, %nctaid.y;\n"
	     "\tmul.wide.u32 %~d1, %~r6, %~r8;\n"
	     "\tcvt.u64.u32 %~d2, %~r5;\n"
	     "\tadd.u64 %~d1, %~d1, %~d2;\n"
	     "\tcvt.u64.u32 %~d2, %~r7;\n"
	     "\tmul.lo.u64 %~d1, %~d1, %~d2;\n"
	     "\tcvt.u64.u32 %~d2, %~r4;\n"
	     "\tadd.u64 %~d1, %~d1, %~d2;\n");
}

/* The threads per block into r10. */
static void emit_block_threads(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\tmov.u32 %~r10, %ntid.x;\n"
	     "\tmov.u32 %~r11, %ntid.y;\n"
	     "\tmul.lo.u32 %~r10, %~r10, %~r11;\n"
	     "\tmov.u32 %~r11, %ntid.z;\n"
	     "\tmul.lo.u32 %~r10, %~r10, %~r11;\n");
}

/* The parameter into d0; a NULL buffer (launch not collected) skips the probe. */
static void emit_load_param(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\tld.param.u64 %~d0, [~buf];\n"
	     "\tsetp.eq.u64 %~q1, %~d0, 0;\n"
	     "\t@%~q1 bra $~exit_done;\n");
}

/* Splits the parameter d0 into the launch tag (d6, still in the top bits) and the buffer (d0). */
static void emit_decode_param(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\tand.b64 %~d6, %~d0, 0xFFFF000000000000;\n"
	     "\tand.b64 %~d0, %~d0, 0x0000FFFFFFFFFFFF;\n"
	     "\tcvta.to.global.u64 %~d0, %~d0;\n");
}

/*
 * Stores span d1 = {d4 entry, d5 exit - entry | smid << 32 | tag} at byte
 * `off` of the buffer with one 16-byte store. Durations of 2^31 ns or more
 * are kept in 1024-ns units (probe_buffer.h).
 */
static void emit_store_span(struct strbuf *b, const struct probe_style *s, unsigned off)
{
	char store[96];

	emit(b, s,
	     "\tmad.lo.u64 %~d3, %~d1, 16, %~d0;\n"
	     "\tsub.u64 %~d5, %~d5, %~d4;\n"
	     "\tsetp.ge.u64 %~q2, %~d5, 0x80000000;\n"
	     "\t@%~q2 shr.u64 %~d5, %~d5, 10;\n"
	     "\t@%~q2 min.u64 %~d5, %~d5, 0x7FFFFFFF;\n"
	     "\t@%~q2 or.b64 %~d5, %~d5, 0x80000000;\n"
	     "\tmov.u32 %~r3, %smid;\n"
	     "\tand.b32 %~r3, %~r3, 0xFFFF;\n"
	     "\tcvt.u64.u32 %~d2, %~r3;\n"
	     "\tshl.b64 %~d2, %~d2, 32;\n"
	     "\tor.b64 %~d5, %~d5, %~d2;\n"
	     "\tor.b64 %~d5, %~d5, %~d6;\n");
	snprintf(store, sizeof(store), "\tst.global.v2.u64 [%%~d3+%u], {%%~d4, %%~d5};\n", off);
	emit(b, s, store);
}

/* q0: whether this is thread (0,0,0) of its block. */
static void emit_first_thread(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\tmov.u32 %~r0, %tid.x;\n"
	     "\tmov.u32 %~r1, %tid.y;\n"
	     "\tor.b32 %~r0, %~r0, %~r1;\n"
	     "\tmov.u32 %~r1, %tid.z;\n"
	     "\tor.b32 %~r0, %~r0, %~r1;\n"
	     "\tsetp.eq.u32 %~q0, %~r0, 0;\n");
}

/*
 * Block mode: thread (0,0,0) notes the entry time in shared memory, for
 * itself at the exit; nothing waits here, so the kernel's first loads go out
 * as soon as they would without the probe.
 */
static void emit_block_entry(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s, "\t// grtrace block probe: entry\n");
	emit_first_thread(b, s);
	emit(b, s,
	     "\t@%~q0 mov.u64 %~d2, %globaltimer;\n"
	     "\t@%~q0 st.shared.u64 [~blk], %~d2;\n");
}

void probe_emit_entry(struct strbuf *b, const struct probe_style *s)
{
	strbuf_puts(b, "\n");
	if (s->mode == GRT_PROBE_THREAD)
		emit(b, s,
		     "\t// grtrace thread probe: entry\n"
		     "\tmov.u64 %~d4, %globaltimer;\n");
	else
		emit_block_entry(b, s);
	strbuf_puts(b, "\t");
}

/*
 * Block mode: one barrier at the exit, which every thread of the block
 * reaches (every ret and exit of the kernel branches here; kernels whose
 * device functions exit are not instrumented), then thread (0,0,0) stores the
 * span from its own entry time, and that is all: the totals are the
 * summarizer's work, after the launch (ptx_summarize.c). It used to be a
 * barrier at the entry and a shared counter of exits, the warp that completed
 * it storing the span: the vector add's loop took 17% longer on an H100, of
 * which the exit's atomics were two thirds and the entry barrier the rest
 * (bench/RESULTS.md). Warps that get here early wait instead of leaving: in
 * a kernel whose warps finish far apart they hold their slots longer (the
 * block's shared memory is held until its last warp anyway).
 */
static void emit_block_exit(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\t// grtrace block probe: exit\n"
	     "\tbar.sync 0;\n");
	emit_first_thread(b, s);
	emit(b, s,
	     "\t@!%~q0 bra $~exit_done;\n"
	     "\tmov.u64 %~d5, %globaltimer;\n"
	     "\tld.shared.u64 %~d4, [~blk];\n");
	emit_load_param(b, s);
	emit_decode_param(b, s);
	emit_block_index(b, s);
	emit_store_span(b, s, (unsigned)GRT_PROBE_AGG_END);
}

/* Thread mode: each thread stores its span at block_linear * block_threads + thread_linear. */
static void emit_thread_exit(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\t// grtrace thread probe: exit\n"
	     "\tmov.u64 %~d5, %globaltimer;\n");
	emit_load_param(b, s);
	emit_block_index(b, s);
	emit_block_threads(b, s);
	emit(b, s,
	     "\tmov.u32 %~r0, %tid.y;\n"
	     "\tmov.u32 %~r1, %tid.z;\n"
	     "\tmov.u32 %~r2, %ntid.y;\n"
	     "\tmad.lo.u32 %~r0, %~r1, %~r2, %~r0;\n"
	     "\tmov.u32 %~r1, %ntid.x;\n"
	     "\tmov.u32 %~r3, %tid.x;\n"
	     "\tmad.lo.u32 %~r9, %~r0, %~r1, %~r3;\n"
	     "\tcvt.u64.u32 %~d2, %~r10;\n"
	     "\tmul.lo.u64 %~d1, %~d1, %~d2;\n"
	     "\tcvt.u64.u32 %~d2, %~r9;\n"
	     "\tadd.u64 %~d1, %~d1, %~d2;\n");
	emit_decode_param(b, s);
	emit_store_span(b, s, GRT_PROBE_HEAD_SIZE);
}

void probe_emit_exit(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s, "\n$~exit:\n");
	if (s->mode == GRT_PROBE_THREAD)
		emit_thread_exit(b, s);
	else
		emit_block_exit(b, s);
	emit(b, s,
	     "$~exit_done:\n"
	     "\tret;\n");
}
