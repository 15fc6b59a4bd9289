// Corpus: a kernel that already uses the probe's register and label names in inline assembly.
extern "C" __global__ void uses_probe_names(int *out)
{
	int v;

	asm volatile("{\n\t"
		     ".reg .b32 %grt_p_r0;\n\t"
		     ".reg .pred %grt_p_q0;\n\t"
		     "mov.u32 %grt_p_r0, 41;\n\t"
		     "setp.eq.u32 %grt_p_q0, %grt_p_r0, 0;\n\t"
		     "@%grt_p_q0 bra $grt_p_exit;\n\t"
		     "add.u32 %grt_p_r0, %grt_p_r0, 1;\n"
		     "$grt_p_exit:\n\t"
		     "mov.u32 %0, %grt_p_r0;\n\t"
		     "}"
		     : "=r"(v));
	out[threadIdx.x] = v;
}
