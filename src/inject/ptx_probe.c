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
 * Register use: d0 buffer (global), d1 block linear index, d2 scratch,
 * d3 record address, d4 thread entry time (thread mode, live through the
 * kernel), d5 exit time, d6 thread record index; r0-r11 32-bit scratch,
 * q0-q2 predicates.
 */
void probe_emit_decls(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\n\t.reg .b64 %~d<7>;"
	     "\n\t.reg .b32 %~r<12>;"
	     "\n\t.reg .pred %~q<3>;");
}

void probe_emit_param(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s, "\n\t.param .u64 ~buf");
}

void probe_emit_exit_branch(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s, "bra $~exit");
}

/*
 * Loads the buffer (a NULL buffer skips the probe: branch to `skip`) and
 * computes the block's linear index into d1 and loads the capacity into d2.
 */
static void emit_block_index(struct strbuf *b, const struct probe_style *s, const char *skip)
{
	emit(b, s,
	     "\tld.param.u64 %~d0, [~buf];\n"
	     "\tsetp.eq.u64 %~q1, %~d0, 0;\n"
	     "\t@%~q1 bra $~");
	strbuf_puts(b, skip);
	emit(b, s,
	     ";\n"
	     "\tcvta.to.global.u64 %~d0, %~d0;\n"
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
	     "\tadd.u64 %~d1, %~d1, %~d2;\n"
	     "\tld.global.u64 %~d2, [%~d0+8];\n");
}

/* Block mode: thread (0,0,0) stamps the block's record. */
static void emit_block_entry(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\t// grtrace block probe: entry\n"
	     "\tmov.u32 %~r0, %tid.x;\n"
	     "\tmov.u32 %~r1, %tid.y;\n"
	     "\tor.b32 %~r0, %~r0, %~r1;\n"
	     "\tmov.u32 %~r1, %tid.z;\n"
	     "\tor.b32 %~r0, %~r0, %~r1;\n"
	     "\tsetp.ne.u32 %~q0, %~r0, 0;\n"
	     "\t@%~q0 bra $~entry_done;\n");
	emit_block_index(b, s, "entry_done");
	emit(b, s,
	     "\tsetp.ge.u64 %~q2, %~d1, %~d2;\n"
	     "\t@%~q2 bra $~entry_lost;\n"
	     "\tmad.lo.u64 %~d3, %~d1, 40, %~d0;\n"
	     "\tadd.u64 %~d3, %~d3, 64;\n"
	     "\tmov.u64 %~d2, %globaltimer;\n"
	     "\tmov.u32 %~r3, %smid;\n"
	     "\tst.global.u64 [%~d3], %~d2;\n"
	     "\tst.global.u32 [%~d3+16], %~r4;\n"
	     "\tst.global.u32 [%~d3+20], %~r5;\n"
	     "\tst.global.u32 [%~d3+24], %~r6;\n"
	     "\tst.global.u32 [%~d3+28], %~r3;\n"
	     "\tbra $~entry_done;\n"
	     "$~entry_lost:\n"
	     "\tred.global.add.u64 [%~d0+16], 1;\n"
	     "$~entry_done:\n");
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
 * Block mode: every thread counts its exit in the record; the thread whose
 * count completes the block stamps the end. With warp aggregation the lowest
 * lane of each converged group adds the group's size, one atomic per group.
 */
static void emit_block_exit(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s, "\t// grtrace block probe: exit\n");
	if (s->warp_aggregate)
		emit(b, s,
		     "\tactivemask.b32 %~r0;\n"
		     "\tmov.u32 %~r1, %lanemask_lt;\n"
		     "\tand.b32 %~r1, %~r1, %~r0;\n"
		     "\tsetp.ne.u32 %~q0, %~r1, 0;\n"
		     "\t@%~q0 bra $~exit_done;\n"
		     "\tpopc.b32 %~r2, %~r0;\n");
	else
		emit(b, s, "\tmov.u32 %~r2, 1;\n");
	emit_block_index(b, s, "exit_done");
	emit(b, s,
	     "\tsetp.ge.u64 %~q2, %~d1, %~d2;\n"
	     "\t@%~q2 bra $~exit_done;\n"
	     "\tmad.lo.u64 %~d3, %~d1, 40, %~d0;\n"
	     "\tadd.u64 %~d3, %~d3, 64;\n"
	     "\tatom.global.add.u32 %~r9, [%~d3+32], %~r2;\n"
	     "\tadd.u32 %~r9, %~r9, %~r2;\n"
	     "\tmov.u32 %~r10, %ntid.x;\n"
	     "\tmov.u32 %~r11, %ntid.y;\n"
	     "\tmul.lo.u32 %~r10, %~r10, %~r11;\n"
	     "\tmov.u32 %~r11, %ntid.z;\n"
	     "\tmul.lo.u32 %~r10, %~r10, %~r11;\n"
	     "\tsetp.ne.u32 %~q0, %~r9, %~r10;\n"
	     "\t@%~q0 bra $~exit_done;\n"
	     "\tmov.u64 %~d5, %globaltimer;\n"
	     "\tst.global.u64 [%~d3+8], %~d5;\n"
	     "\tred.global.add.u64 [%~d0+24], 1;\n");
}

/* Thread mode: each thread stores {entry, exit, block, thread} at its own index. */
static void emit_thread_exit(struct strbuf *b, const struct probe_style *s)
{
	emit(b, s,
	     "\t// grtrace thread probe: exit\n"
	     "\tmov.u64 %~d5, %globaltimer;\n");
	emit_block_index(b, s, "exit_done");
	emit(b, s,
	     "\tmov.u32 %~r0, %tid.y;\n"
	     "\tmov.u32 %~r1, %tid.z;\n"
	     "\tmov.u32 %~r2, %ntid.y;\n"
	     "\tmad.lo.u32 %~r0, %~r1, %~r2, %~r0;\n"
	     "\tmov.u32 %~r1, %ntid.x;\n"
	     "\tmov.u32 %~r3, %tid.x;\n"
	     "\tmad.lo.u32 %~r9, %~r0, %~r1, %~r3;\n"
	     "\tmul.lo.u32 %~r10, %~r1, %~r2;\n"
	     "\tmov.u32 %~r11, %ntid.z;\n"
	     "\tmul.lo.u32 %~r10, %~r10, %~r11;\n"
	     "\tcvt.u64.u32 %~d3, %~r10;\n"
	     "\tmul.lo.u64 %~d6, %~d1, %~d3;\n"
	     "\tcvt.u64.u32 %~d3, %~r9;\n"
	     "\tadd.u64 %~d6, %~d6, %~d3;\n"
	     "\tsetp.ge.u64 %~q2, %~d6, %~d2;\n"
	     "\t@%~q2 bra $~exit_lost;\n"
	     "\tmad.lo.u64 %~d3, %~d6, 24, %~d0;\n"
	     "\tadd.u64 %~d3, %~d3, 64;\n"
	     "\tcvt.u32.u64 %~r3, %~d1;\n"
	     "\tst.global.u64 [%~d3], %~d4;\n"
	     "\tst.global.u64 [%~d3+8], %~d5;\n"
	     "\tst.global.u32 [%~d3+16], %~r3;\n"
	     "\tst.global.u32 [%~d3+20], %~r9;\n"
	     "\tbra $~exit_done;\n"
	     "$~exit_lost:\n"
	     "\tred.global.add.u64 [%~d0+16], 1;\n");
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
