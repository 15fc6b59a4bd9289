/* BPF side of the CUDA driver ABI: argument registers, launch and copy descriptors, their decoding.
 * Shared by every BPF program that probes libcuda entry points (cuda.bpf.c, serve's aggregation).
 */
#ifndef GRT_CUDA_ABI_BPF_H
#define GRT_CUDA_ABI_BPF_H

/* CUmemorytype */
#define CU_MEMORYTYPE_HOST 1
#define CU_MEMORYTYPE_DEVICE 2
#define CU_MEMORYTYPE_ARRAY 3
#define CU_MEMORYTYPE_UNIFIED 4

/* CUlaunchConfig as cuda.h lays it out (x86-64): seven u32, then hStream at 32. */
struct cu_launch_config {
	__u32 grid[3];
	__u32 block[3];
	__u32 shared_mem;
	__u32 pad;
	__u64 stream;
};

/* One side (source or destination) of CUDA_MEMCPY2D (the _v2 layout). */
struct cu_copy2d_side {
	__u64 x_bytes;
	__u64 y;
	__u32 memory_type;
	__u32 pad;
	__u64 host;
	__u64 device;
	__u64 array;
	__u64 pitch;
};

struct cu_memcpy2d {
	struct cu_copy2d_side src;
	struct cu_copy2d_side dst;
	__u64 width_bytes;
	__u64 height;
};

/* One side of CUDA_MEMCPY3D (the _v2 layout). */
struct cu_copy3d_side {
	__u64 x_bytes;
	__u64 y;
	__u64 z;
	__u64 lod;
	__u32 memory_type;
	__u32 pad;
	__u64 host;
	__u64 device;
	__u64 array;
	__u64 reserved;
	__u64 pitch;
	__u64 height;
};

struct cu_memcpy3d {
	struct cu_copy3d_side src;
	struct cu_copy3d_side dst;
	__u64 width_bytes;
	__u64 height;
	__u64 depth;
};

_Static_assert(sizeof(struct cu_launch_config) == 40, "CUlaunchConfig layout");
_Static_assert(sizeof(struct cu_memcpy2d) == 128, "CUDA_MEMCPY2D layout");
_Static_assert(sizeof(struct cu_memcpy3d) == 200, "CUDA_MEMCPY3D layout");

#define ARG1(ctx) PT_REGS_PARM1(ctx)
#define ARG2(ctx) PT_REGS_PARM2(ctx)
#define ARG3(ctx) PT_REGS_PARM3(ctx)
#define ARG4(ctx) PT_REGS_PARM4(ctx)
#define ARG5(ctx) PT_REGS_PARM5(ctx)
/* this libbpf has no PT_REGS_PARM6; x86-64 passes the sixth argument in r9 */
#define ARG6(ctx) ((ctx)->r9)

/* x86-64: arguments after the sixth sit above the return address, 8 bytes each. */
static __always_inline void *stack_args(struct pt_regs *ctx)
{
	return (void *)(PT_REGS_SP(ctx) + 8);
}

/*
 * The stack pointer a call entered with, as its entry probe sees it and as
 * its return probe does (x86-64: the return address popped, 8 bytes up).
 */
static __always_inline __u64 entry_sp(struct pt_regs *ctx)
{
	return PT_REGS_SP(ctx);
}

static __always_inline __u64 entry_sp_at_return(struct pt_regs *ctx)
{
	return PT_REGS_SP(ctx) - 8;
}

/* cuLaunchKernel(f, gx, gy, gz, bx, by, | bz, shmem, stream, params, extra) */
struct launch_stack_args {
	__u64 block_z;
	__u64 shared_mem;
	__u64 stream;
	__u64 params;
};

static __always_inline __u64 read_user_u64(__u64 addr)
{
	__u64 v = 0;

	if (addr)
		bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* Where a 2D/3D copy side starts: the pointer its memory type selects, plus its offset. */
static __always_inline __u64 copy_side_start(__u32 type, __u64 host, __u64 device, __u64 array,
					     __u64 offset)
{
	if (type == CU_MEMORYTYPE_HOST)
		return host + offset;
	if (type == CU_MEMORYTYPE_ARRAY)
		return array;
	return device + offset;
}

static __always_inline __u64 copy3d_offset(const struct cu_copy3d_side *s)
{
	return (s->z * s->height + s->y) * s->pitch + s->x_bytes;
}

#endif
