/* The interposed driver entry points and the three ways calls reach them. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "inject/call_bracket.h"
#include "inject/call_record.h"
#include "inject/copy_timing.h"
#include "inject/cupti.h"
#include "inject/cupti_handover.h"
#include "inject/inject.h"
#include "inject/interpose.h"
#include "inject/launch_redirect.h"
#include "inject/module_jit.h"
#include "inject/recorded_calls.h"
#include "inject/twin.h"
#include "sources/cuda_api.h"
#include "trace/records_cuda.h"
#include "inject/work_calls.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * Three ways an application reaches a driver function, all covered:
 *  - linked against libcuda: our exported symbol of the same name wins
 *    (LD_PRELOAD puts us first in the global scope);
 *  - dlopen(libcuda) + dlsym(handle, name): a handle lookup never sees
 *    LD_PRELOAD, so dlsym itself is interposed and swaps the real address
 *    for our wrapper;
 *  - cuGetProcAddress (how the CUDA runtime finds every entry point): the
 *    wrapper asks the driver, then swaps the address it got.
 * The swap works on addresses, not names: the driver answers "cuLaunchKernel"
 * with cuLaunchKernel_ptsz for per-thread default stream callers, and
 * "cuCtxSynchronize" with cuCtxSynchronize_v2 for CUDA 13 callers, so the
 * export whose address came back decides which wrapper (of the same ABI)
 * replaces it. Addresses we do not wrap pass through untouched.
 */

struct interposed {
	const char *name;
	void *wrapper;
	void *real;
	uint16_t api; /* enum grt_cuda_api when the cuda source records it, else 0 */
};

enum interposed_id {
	IP_cuInit,
	IP_cuGetProcAddress,
	IP_cuGetProcAddress_v2,
	IP_cuModuleLoad,
	IP_cuModuleLoadData,
	IP_cuModuleLoadDataEx,
	IP_cuModuleLoadFatBinary,
	IP_cuModuleUnload,
	IP_cuModuleGetFunction,
	IP_cuLibraryLoadData,
	IP_cuLibraryLoadFromFile,
	IP_cuLibraryUnload,
	IP_cuLibraryGetKernel,
	IP_cuLibraryGetModule,
	IP_cuKernelGetFunction,
	IP_cuLaunchKernel,
	IP_cuLaunchKernel_ptsz,
	IP_cuLaunchKernelEx,
	IP_cuLaunchKernelEx_ptsz,
	IP_cuCtxSynchronize,
	IP_cuCtxSynchronize_v2,
	IP_cuStreamSynchronize,
	IP_cuStreamSynchronize_ptsz,
	IP_cuEventSynchronize,
	IP_cuFuncSetAttribute,
	IP_cuKernelSetAttribute,
	IP_cuStreamBeginCapture,
	IP_cuStreamBeginCapture_v2,
	IP_cuStreamBeginCapture_ptsz,
	IP_cuStreamBeginCapture_v2_ptsz,
	IP_cuStreamBeginCaptureToGraph,
	IP_cuStreamBeginCaptureToGraph_ptsz,
	IP_cuStreamEndCapture,
	IP_cuStreamEndCapture_ptsz,
	IP_cuLaunchCooperativeKernel,
	IP_cuLaunchCooperativeKernel_ptsz,
#define WORK_ID(name, nargs) IP_##name,
	INJECT_WORK_CALLS(WORK_ID)
	INJECT_RECORDED_CALLS(WORK_ID)
#undef WORK_ID
	IP_COUNT,
};

/* Filled once by interpose_resolve() from libcuda itself; read-only afterwards. */
static struct interposed table[IP_COUNT];

/* Copies and memsets among them, by name (copy_shape.h): filled by interpose_resolve(). */
static struct work_shape {
	bool is_copy;
	struct copy_shape shape;
} work_shapes[IP_COUNT];

#define WORK_NARGS(name, nargs) [IP_##name] = nargs,
static const uint8_t work_nargs[IP_COUNT] = {INJECT_WORK_CALLS(WORK_NARGS)};
#undef WORK_NARGS

typedef void *(*dlsym_fn)(void *, const char *);
/* libc's dlsym; the assembly entry below jumps to it for RTLD_NEXT lookups */
__attribute__((used)) void *grt_real_dlsym;

/*
 * dlsym is called by sanitizer runtimes before they are set up, so the code
 * on its path must not be instrumented by them.
 */
#define DLSYM_PATH __attribute__((no_sanitize("address", "undefined")))

__attribute__((used)) DLSYM_PATH void *grt_resolve_real_dlsym(void)
{
	void *p = grt_real_dlsym;

	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	grt_real_dlsym = p;
	return p;
}

DLSYM_PATH void *inject_real_dlsym(void *handle, const char *name)
{
	dlsym_fn fn = (dlsym_fn)grt_resolve_real_dlsym();

	return fn ? fn(handle, name) : NULL;
}

#define REAL(id, type) ((type)table[IP_##id].real)
#define CALL_REAL(id, type, ...)                                                                   \
	(table[IP_##id].real ? REAL(id, type)(__VA_ARGS__) : CUDA_ERROR_NOT_INITIALIZED)

void interpose_resolve(void *libcuda)
{
	for (int i = 0; i < IP_COUNT; i++)
		if (work_nargs[i])
			work_shapes[i].is_copy =
			    copy_shape_of(table[i].name, work_nargs[i], &work_shapes[i].shape);
	for (int i = 0; i < IP_COUNT; i++) {
		table[i].real = inject_real_dlsym(libcuda, table[i].name);
		for (uint16_t api = 1; api < GRT_CUDA_API_COUNT && !table[i].api; api++)
			if (!strcmp(cuda_api_symbol(api), table[i].name))
				table[i].api = api;
	}
}

/*
 * The cuda source's in-process recording around a forwarded call: REC_BEGIN
 * with the call's arguments in order, REC_END with its result. Both cost a
 * load and a branch when the process does not record.
 */
#define REC_ARG(v) ((uint64_t)(uintptr_t)(v))
#define REC_BEGIN_WITH(enter, id, frame, ...)                                                      \
	const uint64_t rec_args_[] = {__VA_ARGS__};                                                \
	void *rec_ = enter(table[id].api, rec_args_, frame, table[id].real)
#define REC_BEGIN_AT(id, frame, ...) REC_BEGIN_WITH(call_record_enter, id, frame, __VA_ARGS__)
#define REC_BEGIN(id, ...) REC_BEGIN_AT(IP_##id, __builtin_frame_address(0), __VA_ARGS__)
#define REC_END_AT(r, now)                                                                         \
	do {                                                                                       \
		if (rec_)                                                                          \
			call_record_exit(rec_, r, now);                                            \
	} while (0)
#define REC_END(r) REC_END_AT(r, 0)
/* The wrapper's bracket (call_bracket.h) opened at the record's entry time, no second clock read. */
#define REC_BRACKET_BEGIN() inject_call_begin_at(call_record_entry_ns(rec_))

/* The wrapper replacing a real driver address, or the address itself. */
static void *swap_for_wrapper(void *p, const void *caller)
{
	struct inject_state *st = inject();

	if (!p || inject_in_tool || cupti_owns(st, caller))
		return p;
	for (int i = 0; i < IP_COUNT; i++)
		if (table[i].real == p)
			return table[i].wrapper;
	return p;
}

void *interpose_real_for(const char *name)
{
	for (int i = 0; i < IP_COUNT; i++)
		if (!strcmp(table[i].name, name))
			return table[i].real;
	return NULL;
}

/*
 * dlsym(handle, name) for handles other than RTLD_NEXT; reached by a jump,
 * so __builtin_return_address(0) is the application's call site.
 */
__attribute__((used)) DLSYM_PATH void *grt_dlsym_lookup(void *handle, const char *name)
{
	void *p = inject_real_dlsym(handle, name);

	/* a CUPTI client that looks CUPTI up itself still hands grtrace's CUPTI over first */
	if (p && name && !strncmp(name, "cupti", 5))
		return cupti_handover_swap(name, p, __builtin_return_address(0));
	/* only a loaded libcuda can have handed out a driver address */
	if (!p || !name || name[0] != 'c' || name[1] != 'u' || inject_driver_if_loaded())
		return p;
	return swap_for_wrapper(p, __builtin_return_address(0));
}

#if defined(__x86_64__)
/*
 * dlsym's caller matters to glibc for RTLD_NEXT ("the object after the
 * caller"), so that case jumps straight to libc's dlsym with the caller's
 * return address still on the stack. Everything else goes to
 * grt_dlsym_lookup, also by a jump.
 */
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	"	cmpq $-1, %rdi\n"
	"	jne grt_dlsym_lookup\n"
	"	movq grt_real_dlsym(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"
	"	call grt_resolve_real_dlsym\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	jmp *%rax\n"
	".size dlsym, .-dlsym\n");
#endif

#define ENTER(id)                                                                                  \
	do {                                                                                       \
		if (inject_driver_ready())                                                         \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
		if (inject()->debug && !inject_in_tool)                                            \
			inject_debug("%s", table[IP_##id].name);                                   \
	} while (0)

EXPORT CUresult cuInit(unsigned int flags)
{
	CUresult r;

	ENTER(cuInit);
	r = CALL_REAL(cuInit, CUresult(*)(unsigned int), flags);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		inject_start();
	return r;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
	const void *caller = __builtin_return_address(0);
	CUresult r;

	ENTER(cuGetProcAddress);
	r = CALL_REAL(cuGetProcAddress, CUresult(*)(const char *, void **, int, uint64_t), symbol,
		      pfn, version, flags);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = swap_for_wrapper(*pfn, caller);
	return r;
}

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags,
				    CUdriverProcAddressQueryResult *status)
{
	const void *caller = __builtin_return_address(0);
	CUresult r;

	ENTER(cuGetProcAddress_v2);
	r = CALL_REAL(
	    cuGetProcAddress_v2,
	    CUresult(*)(const char *, void **, int, uint64_t, CUdriverProcAddressQueryResult *),
	    symbol, pfn, version, flags, status);
	if (r == CUDA_SUCCESS && pfn)
		*pfn = swap_for_wrapper(*pfn, caller);
	return r;
}

/* After a successful load: set up probes for it and, with a context now, calibrate. */
static void after_module_load(CUmodule mod, const void *image, const char *path)
{
	if (inject_in_tool)
		return;
	inject_start_with_context();
	module_jit_loaded(mod, false, image, path);
}

EXPORT CUresult cuModuleLoad(CUmodule *mod, const char *fname)
{
	CUresult r;

	ENTER(cuModuleLoad);
	REC_BEGIN(cuModuleLoad, REC_ARG(mod), REC_ARG(fname));
	r = CALL_REAL(cuModuleLoad, CUresult(*)(CUmodule *, const char *), mod, fname);
	REC_END(r);
	if (r == CUDA_SUCCESS)
		after_module_load(*mod, NULL, fname);
	return r;
}

EXPORT CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	CUresult r;

	ENTER(cuModuleLoadData);
	REC_BEGIN(cuModuleLoadData, REC_ARG(mod), REC_ARG(image));
	r = CALL_REAL(cuModuleLoadData, CUresult(*)(CUmodule *, const void *), mod, image);
	REC_END(r);
	if (r == CUDA_SUCCESS)
		after_module_load(*mod, image, NULL);
	return r;
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n,
				   CUjit_option *options, void **values)
{
	CUresult r;

	ENTER(cuModuleLoadDataEx);
	REC_BEGIN(cuModuleLoadDataEx, REC_ARG(mod), REC_ARG(image), n, REC_ARG(options),
		  REC_ARG(values));
	r = CALL_REAL(cuModuleLoadDataEx,
		      CUresult(*)(CUmodule *, const void *, unsigned int, CUjit_option *, void **),
		      mod, image, n, options, values);
	REC_END(r);
	if (r == CUDA_SUCCESS)
		after_module_load(*mod, image, NULL);
	return r;
}

EXPORT CUresult cuModuleLoadFatBinary(CUmodule *mod, const void *fatbin)
{
	CUresult r;

	ENTER(cuModuleLoadFatBinary);
	REC_BEGIN(cuModuleLoadFatBinary, REC_ARG(mod), REC_ARG(fatbin));
	r = CALL_REAL(cuModuleLoadFatBinary, CUresult(*)(CUmodule *, const void *), mod, fatbin);
	REC_END(r);
	if (r == CUDA_SUCCESS)
		after_module_load(*mod, fatbin, NULL);
	return r;
}

EXPORT CUresult cuModuleUnload(CUmodule mod)
{
	CUresult r;

	ENTER(cuModuleUnload);
	REC_BEGIN(cuModuleUnload, REC_ARG(mod));
	if (!inject_in_tool)
		module_jit_unloaded((uint64_t)(uintptr_t)mod);
	r = CALL_REAL(cuModuleUnload, CUresult(*)(CUmodule), mod);
	REC_END(r);
	return r;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule mod, const char *name)
{
	CUresult r;

	ENTER(cuModuleGetFunction);
	REC_BEGIN(cuModuleGetFunction, REC_ARG(f), REC_ARG(mod), REC_ARG(name));
	r = CALL_REAL(cuModuleGetFunction, CUresult(*)(CUfunction *, CUmodule, const char *), f,
		      mod, name);
	REC_END(r);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		twin_function_seen((uint64_t)(uintptr_t)mod, (uint64_t)(uintptr_t)*f, name);
	return r;
}

typedef CUresult (*library_load_data_fn)(CUlibrary *, const void *, CUjit_option *, void **,
					 unsigned int, CUlibraryOption *, void **, unsigned int);
typedef CUresult (*library_load_file_fn)(CUlibrary *, const char *, CUjit_option *, void **,
					 unsigned int, CUlibraryOption *, void **, unsigned int);

EXPORT CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jit_options,
				  void **jit_values, unsigned int njit,
				  CUlibraryOption *lib_options, void **lib_values,
				  unsigned int nlib)
{
	CUresult r;

	ENTER(cuLibraryLoadData);
	REC_BEGIN(cuLibraryLoadData, REC_ARG(lib), REC_ARG(code));
	r = CALL_REAL(cuLibraryLoadData, library_load_data_fn, lib, code, jit_options, jit_values,
		      njit, lib_options, lib_values, nlib);
	REC_END(r);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		module_jit_loaded((CUmodule)*lib, true, code, NULL);
	return r;
}

EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *path, CUjit_option *jit_options,
				      void **jit_values, unsigned int njit,
				      CUlibraryOption *lib_options, void **lib_values,
				      unsigned int nlib)
{
	CUresult r;

	ENTER(cuLibraryLoadFromFile);
	REC_BEGIN(cuLibraryLoadFromFile, REC_ARG(lib), REC_ARG(path));
	r = CALL_REAL(cuLibraryLoadFromFile, library_load_file_fn, lib, path, jit_options,
		      jit_values, njit, lib_options, lib_values, nlib);
	REC_END(r);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		module_jit_loaded((CUmodule)*lib, true, NULL, path);
	return r;
}

EXPORT CUresult cuLibraryUnload(CUlibrary lib)
{
	CUresult r;

	ENTER(cuLibraryUnload);
	REC_BEGIN(cuLibraryUnload, REC_ARG(lib));
	if (!inject_in_tool)
		module_jit_unloaded((uint64_t)(uintptr_t)lib);
	r = CALL_REAL(cuLibraryUnload, CUresult(*)(CUlibrary), lib);
	REC_END(r);
	return r;
}

EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary lib, const char *name)
{
	CUresult r;

	ENTER(cuLibraryGetKernel);
	REC_BEGIN(cuLibraryGetKernel, REC_ARG(k), REC_ARG(lib), REC_ARG(name));
	r = CALL_REAL(cuLibraryGetKernel, CUresult(*)(CUkernel *, CUlibrary, const char *), k, lib,
		      name);
	REC_END(r);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		twin_function_seen((uint64_t)(uintptr_t)lib, (uint64_t)(uintptr_t)*k, name);
	return r;
}

EXPORT CUresult cuLibraryGetModule(CUmodule *mod, CUlibrary lib)
{
	CUresult r;

	ENTER(cuLibraryGetModule);
	r = CALL_REAL(cuLibraryGetModule, CUresult(*)(CUmodule *, CUlibrary), mod, lib);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		module_jit_library_module(lib, *mod);
	return r;
}

EXPORT CUresult cuKernelGetFunction(CUfunction *f, CUkernel k)
{
	CUresult r;

	ENTER(cuKernelGetFunction);
	REC_BEGIN(cuKernelGetFunction, REC_ARG(f), REC_ARG(k));
	r = CALL_REAL(cuKernelGetFunction, CUresult(*)(CUfunction *, CUkernel), f, k);
	REC_END(r);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		twin_kernel_function(k, *f);
	return r;
}

/* A launch through the wrapper that was not redirected: its time in the driver. */
static void count_launch(uint64_t enter_ns, uint64_t return_ns)
{
	struct inject_stats *s = &inject()->stats;

	stat_add(&s->launches, 1);
	stat_add(&s->launch_real_ns, return_ns - enter_ns);
}

typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
			      unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*launch_cooperative_fn)(CUfunction, unsigned int, unsigned int, unsigned int,
					  unsigned int, unsigned int, unsigned int, unsigned int,
					  CUstream, void **);

/*
 * A kernel launch the gpu source sees: redirected to its instrumented twin
 * when it has one (launch_redirect.c stamps the bracket there), else
 * forwarded, bracketed. rec is the call's open record, if recorded.
 */
static __attribute__((noinline)) CUresult launch_for_gpu(enum interposed_id id, bool ptsz,
							 void *rec_, CUfunction f,
							 unsigned int gx, unsigned int gy,
							 unsigned int gz, unsigned int bx,
							 unsigned int by, unsigned int bz,
							 unsigned int shmem, CUstream s,
							 void **params, void **extra)
{
	CUlaunchConfig cfg = {gx, gy, gz, bx, by, bz, shmem, s, NULL, 0};
	struct redirect_miss miss;
	uint64_t entry_ns, return_ns;
	CUresult r;

	entry_ns = redirect_entry_if_timed();
	inject_start_with_context();
	inject_call.recorded_entry_ns = call_record_entry_ns(rec_);
	if (redirect_launch(f, &cfg, params, extra, false, ptsz, entry_ns, &r, &miss)) {
		stat_add(&inject()->stats.launches, 1);
		inject_call.recorded_entry_ns = 0;
		REC_END(r);
		return r;
	}
	if (f && miss.why) /* no function, no kernel: the launch fails */
		cupti_need_kernels(inject(), miss.kernel, miss.why);
	REC_BRACKET_BEGIN();
	entry_ns = inject_call.enter_ns;
	r = ((launch_fn)table[id].real)(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	return_ns = inject_call_end();
	count_launch(entry_ns, return_ns);
	REC_END_AT(r, return_ns);
	return r;
}

/*
 * A kernel launch. Inlined into its two entry points: a launch that is only
 * recorded (or not even that) passes its arguments once and touches nothing
 * of the gpu source. The library's own launches pass straight through.
 */
static inline __attribute__((always_inline)) CUresult
launch(enum interposed_id id, bool ptsz, void *frame, CUfunction f, unsigned int gx,
       unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by, unsigned int bz,
       unsigned int shmem, CUstream s, void **params, void **extra)
{
	launch_fn real = (launch_fn)table[id].real;
	CUresult r;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (inject_in_tool || (!call_record_on && !inject_gpu_recording()))
		return real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	REC_BEGIN_WITH(call_record_launch, id, frame, REC_ARG(f), gx, gy, gz, bx, by, bz, shmem,
		       REC_ARG(s), REC_ARG(params));
	if (inject_gpu_recording())
		return launch_for_gpu(id, ptsz, rec_, f, gx, gy, gz, bx, by, bz, shmem, s, params,
				      extra);
	r = real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
	REC_END(r);
	return r;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			       unsigned int bx, unsigned int by, unsigned int bz,
			       unsigned int shmem, CUstream s, void **params, void **extra)
{
	ENTER(cuLaunchKernel);
	return launch(IP_cuLaunchKernel, false, __builtin_frame_address(0), f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				    unsigned int bx, unsigned int by, unsigned int bz,
				    unsigned int shmem, CUstream s, void **params, void **extra)
{
	ENTER(cuLaunchKernel_ptsz);
	return launch(IP_cuLaunchKernel_ptsz, true, __builtin_frame_address(0), f, gx, gy, gz, bx, by, bz, shmem, s, params,
		      extra);
}

static CUresult launch_ex(enum interposed_id id, bool ptsz, void *frame, const CUlaunchConfig *cfg,
			  CUfunction f, void **params, void **extra)
{
	struct redirect_miss miss;
	uint64_t entry_ns, return_ns;
	CUresult r;

	if (!table[id].real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (inject_in_tool)
		return ((launch_ex_fn)table[id].real)(cfg, f, params, extra);
	REC_BEGIN_AT(id, frame, REC_ARG(cfg), REC_ARG(f), REC_ARG(params));
	if (!cfg || !inject_gpu_recording()) {
		r = ((launch_ex_fn)table[id].real)(cfg, f, params, extra);
		REC_END(r);
		return r;
	}
	entry_ns = redirect_entry_if_timed();
	inject_start_with_context();
	inject_call.recorded_entry_ns = call_record_entry_ns(rec_);
	if (redirect_launch(f, cfg, params, extra, true, ptsz, entry_ns, &r, &miss)) {
		stat_add(&inject()->stats.launches, 1);
		inject_call.recorded_entry_ns = 0;
		REC_END(r);
		return r;
	}
	if (f && miss.why) /* no function, no kernel: the launch fails */
		cupti_need_kernels(inject(), miss.kernel, miss.why);
	REC_BRACKET_BEGIN();
	entry_ns = inject_call.enter_ns;
	r = ((launch_ex_fn)table[id].real)(cfg, f, params, extra);
	return_ns = inject_call_end();
	count_launch(entry_ns, return_ns);
	REC_END_AT(r, return_ns);
	return r;
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
				 void **extra)
{
	ENTER(cuLaunchKernelEx);
	return launch_ex(IP_cuLaunchKernelEx, false, __builtin_frame_address(0), cfg, f, params, extra);
}

EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **params,
				      void **extra)
{
	ENTER(cuLaunchKernelEx_ptsz);
	return launch_ex(IP_cuLaunchKernelEx_ptsz, true, __builtin_frame_address(0), cfg, f, params, extra);
}

/* Cooperative launches run unchanged (docs/gpu.md, Limits): only bracketed. */
static CUresult launch_cooperative(enum interposed_id id, void *frame, CUfunction f,
				   unsigned int gx, unsigned int gy, unsigned int gz,
				   unsigned int bx, unsigned int by, unsigned int bz,
				   unsigned int shmem, CUstream s, void **params)
{
	launch_cooperative_fn real = (launch_cooperative_fn)table[id].real;
	uint64_t enter_ns, return_ns;
	CUresult r;

	if (!real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (inject_in_tool)
		return real(f, gx, gy, gz, bx, by, bz, shmem, s, params);
	REC_BEGIN_AT(id, frame, REC_ARG(f), gx, gy, gz, bx, by, bz, shmem, REC_ARG(s),
		     REC_ARG(params));
	inject_start_with_context();
	if (inject_gpu_recording())
		cupti_need_kernels(inject(), twin_name(f), "a cooperative launch (run unchanged)");
	REC_BRACKET_BEGIN();
	enter_ns = inject_call.enter_ns;
	r = real(f, gx, gy, gz, bx, by, bz, shmem, s, params);
	return_ns = inject_call_end();
	count_launch(enter_ns, return_ns);
	REC_END_AT(r, return_ns);
	return r;
}

EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
					  unsigned int gz, unsigned int bx, unsigned int by,
					  unsigned int bz, unsigned int shmem, CUstream s,
					  void **params)
{
	ENTER(cuLaunchCooperativeKernel);
	return launch_cooperative(IP_cuLaunchCooperativeKernel, __builtin_frame_address(0), f, gx, gy, gz, bx, by, bz, shmem, s,
				  params);
}

EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
					       unsigned int gz, unsigned int bx, unsigned int by,
					       unsigned int bz, unsigned int shmem, CUstream s,
					       void **params)
{
	ENTER(cuLaunchCooperativeKernel_ptsz);
	return launch_cooperative(IP_cuLaunchCooperativeKernel_ptsz, __builtin_frame_address(0), f, gx, gy, gz, bx, by, bz,
				  shmem, s, params);
}

/* Copies, memsets, graph launches: forwarded, bracketed (work_calls.h). */
#define WORK_PARAMS_1 uint64_t a0
#define WORK_PARAMS_2 WORK_PARAMS_1, uint64_t a1
#define WORK_PARAMS_3 WORK_PARAMS_2, uint64_t a2
#define WORK_PARAMS_4 WORK_PARAMS_3, uint64_t a3
#define WORK_PARAMS_5 WORK_PARAMS_4, uint64_t a4
#define WORK_PARAMS_6 WORK_PARAMS_5, uint64_t a5
#define WORK_PARAMS_7 WORK_PARAMS_6, uint64_t a6
#define WORK_PARAMS_8 WORK_PARAMS_7, uint64_t a7
#define WORK_PARAMS_9 WORK_PARAMS_8, uint64_t a8
#define WORK_ARGS_1 a0
#define WORK_ARGS_2 WORK_ARGS_1, a1
#define WORK_ARGS_3 WORK_ARGS_2, a2
#define WORK_ARGS_4 WORK_ARGS_3, a3
#define WORK_ARGS_5 WORK_ARGS_4, a4
#define WORK_ARGS_6 WORK_ARGS_5, a5
#define WORK_ARGS_7 WORK_ARGS_6, a6
#define WORK_ARGS_8 WORK_ARGS_7, a7
#define WORK_ARGS_9 WORK_ARGS_8, a8
#define WORK_TYPES_1 uint64_t
#define WORK_TYPES_2 WORK_TYPES_1, uint64_t
#define WORK_TYPES_3 WORK_TYPES_2, uint64_t
#define WORK_TYPES_4 WORK_TYPES_3, uint64_t
#define WORK_TYPES_5 WORK_TYPES_4, uint64_t
#define WORK_TYPES_6 WORK_TYPES_5, uint64_t
#define WORK_TYPES_7 WORK_TYPES_6, uint64_t
#define WORK_TYPES_8 WORK_TYPES_7, uint64_t
#define WORK_TYPES_9 WORK_TYPES_8, uint64_t

/* The start of a forwarding wrapper: the real function, read after ENTER (the first call resolves it). */
#define FORWARD_PROLOGUE(name, nargs)                                                              \
	CUresult (*real)(WORK_TYPES_##nargs);                                                      \
	CUresult r;                                                                                \
                                                                                                   \
	ENTER(name);                                                                               \
	real = table[IP_##name].real;                                                              \
	if (!real)                                                                                 \
		return CUDA_ERROR_NOT_INITIALIZED;


/*
 * A copy's events (copy_timing.h) are recorded outside the call's record,
 * so that the call's API time stays the application's.
 */
#define WORK_WRAPPER(name, nargs)                                                                  \
	EXPORT CUresult name(WORK_PARAMS_##nargs)                                                  \
	{                                                                                          \
		FORWARD_PROLOGUE(name, nargs)                                                      \
		struct copy_mark mark_;                                                            \
		uint64_t enter_, end_;                                                             \
		bool timed_, cupti_saw_ = false;                                                   \
                                                                                                   \
		if (inject_in_tool)                                                                \
			return real(WORK_ARGS_##nargs);                                            \
		timed_ = work_shapes[IP_##name].is_copy && inject_gpu_recording() &&               \
			 copy_timing_begin(inject(), &work_shapes[IP_##name].shape,                 \
					   (const uint64_t[]){WORK_ARGS_##nargs}, &mark_);          \
		{                                                                                  \
			REC_BEGIN(name, WORK_ARGS_##nargs);                                        \
			if (!inject_gpu_recording()) {                                             \
				r = real(WORK_ARGS_##nargs);                                       \
				REC_END(r);                                                        \
				return r;                                                          \
			}                                                                          \
			if (IP_##name == IP_cuGraphLaunch || IP_##name == IP_cuGraphLaunch_ptsz || \
			    IP_##name == IP_cuLaunchCooperativeKernelMultiDevice)                  \
				cupti_need_kernels(inject(), NULL,                                 \
						   "a graph or multi-device launch (its "          \
						   "kernels run unchanged)");                      \
			REC_BRACKET_BEGIN();                                                       \
			enter_ = inject_call.enter_ns;                                             \
			r = real(WORK_ARGS_##nargs);                                               \
			cupti_saw_ = inject_call.return_ns != NULL;                                \
			end_ = inject_call_end();                                                  \
			REC_END_AT(r, end_);                                                       \
		}                                                                                  \
		if (timed_)                                                                        \
			copy_timing_end(inject(), &mark_, r, enter_, end_, cupti_saw_);            \
		return r;                                                                          \
	}

INJECT_WORK_CALLS(WORK_WRAPPER)

/* Calls only the cuda source's in-process recording wants (recorded_calls.h). */
#define RECORDED_WRAPPER(name, nargs)                                                              \
	EXPORT CUresult name(WORK_PARAMS_##nargs)                                                  \
	{                                                                                          \
		FORWARD_PROLOGUE(name, nargs)                                                      \
		REC_BEGIN(name, WORK_ARGS_##nargs);                                                \
		r = real(WORK_ARGS_##nargs);                                                       \
		REC_END(r);                                                                        \
		return r;                                                                          \
	}

INJECT_RECORDED_CALLS(RECORDED_WRAPPER)

/* The application waited: what it waited for is complete, so results can be collected. */
static void after_sync(CUresult r, CUstream s, bool all, bool ptsz, uint64_t token)
{
	bool ok = r == CUDA_SUCCESS && !inject_in_tool;

	if (ok)
		redirect_synchronized(s, all, ptsz, token);
	redirect_sync_end(); /* then the collection, which finds them complete */
	if (ok)
		cupti_flush(inject());
}

/*
 * A synchronizing call: what it waited for (stream s, or every stream with
 * all) is complete when it returns, and collection follows.
 */
#define SYNC_WRAPPER(id, params, args, stream, all, ptsz, ...)                                     \
	EXPORT CUresult id params                                                                  \
	{                                                                                          \
		uint64_t token;                                                                    \
		CUresult r;                                                                        \
                                                                                                   \
		ENTER(id);                                                                         \
		REC_BEGIN(id, __VA_ARGS__);                                                        \
		token = redirect_sync_begin();                                                     \
		r = CALL_REAL args;                                                                \
		REC_END(r);                                                                        \
		after_sync(r, stream, all, ptsz, token);                                           \
		return r;                                                                          \
	}

SYNC_WRAPPER(cuCtxSynchronize, (void), (cuCtxSynchronize, CUresult(*)(void)), NULL, true, false, 0)
SYNC_WRAPPER(cuCtxSynchronize_v2, (CUcontext ctx),
	     (cuCtxSynchronize_v2, CUresult(*)(CUcontext), ctx), NULL, true, false, REC_ARG(ctx))
SYNC_WRAPPER(cuStreamSynchronize, (CUstream s), (cuStreamSynchronize, CUresult(*)(CUstream), s), s,
	     false, false, REC_ARG(s))
SYNC_WRAPPER(cuStreamSynchronize_ptsz, (CUstream s),
	     (cuStreamSynchronize_ptsz, CUresult(*)(CUstream), s), s, false, true, REC_ARG(s))

EXPORT CUresult cuEventSynchronize(CUevent e)
{
	CUresult r;

	ENTER(cuEventSynchronize);
	REC_BEGIN(cuEventSynchronize, REC_ARG(e));
	r = CALL_REAL(cuEventSynchronize, CUresult(*)(CUevent), e);
	REC_END(r);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		cupti_flush(inject());
	return r;
}

EXPORT CUresult cuFuncSetAttribute(CUfunction f, int attr, int value)
{
	CUresult r;

	ENTER(cuFuncSetAttribute);
	r = CALL_REAL(cuFuncSetAttribute, CUresult(*)(CUfunction, int, int), f, attr, value);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		twin_attribute(f, attr, value);
	return r;
}

EXPORT CUresult cuKernelSetAttribute(int attr, int value, CUkernel k, CUdevice dev)
{
	CUresult r;

	ENTER(cuKernelSetAttribute);
	r = CALL_REAL(cuKernelSetAttribute, CUresult(*)(int, int, CUkernel, CUdevice), attr, value,
		      k, dev);
	if (r == CUDA_SUCCESS && !inject_in_tool)
		twin_attribute((CUfunction)k, attr, value);
	return r;
}

/*
 * While a stream captures into a graph, launches are not redirected (the
 * graph would keep our buffer pointer) and nothing is collected (a capture in
 * global mode forbids other threads' synchronous calls).
 */
static CUresult begin_capture(CUresult r)
{
	if (r == CUDA_SUCCESS && !inject_in_tool)
		redirect_capture(+1);
	return r;
}

EXPORT CUresult cuStreamBeginCapture(CUstream s)
{
	ENTER(cuStreamBeginCapture);
	return begin_capture(CALL_REAL(cuStreamBeginCapture, CUresult(*)(CUstream), s));
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, int mode)
{
	ENTER(cuStreamBeginCapture_v2);
	return begin_capture(
	    CALL_REAL(cuStreamBeginCapture_v2, CUresult(*)(CUstream, int), s, mode));
}

EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
	ENTER(cuStreamBeginCapture_ptsz);
	return begin_capture(CALL_REAL(cuStreamBeginCapture_ptsz, CUresult(*)(CUstream), s));
}

EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, int mode)
{
	ENTER(cuStreamBeginCapture_v2_ptsz);
	return begin_capture(
	    CALL_REAL(cuStreamBeginCapture_v2_ptsz, CUresult(*)(CUstream, int), s, mode));
}

typedef CUresult (*capture_to_graph_fn)(CUstream, void *, const void *, const void *, size_t, int);

EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, void *graph, const void *deps,
					    const void *edges, size_t ndeps, int mode)
{
	ENTER(cuStreamBeginCaptureToGraph);
	return begin_capture(CALL_REAL(cuStreamBeginCaptureToGraph, capture_to_graph_fn, s, graph,
				       deps, edges, ndeps, mode));
}

EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, void *graph, const void *deps,
						 const void *edges, size_t ndeps, int mode)
{
	ENTER(cuStreamBeginCaptureToGraph_ptsz);
	return begin_capture(CALL_REAL(cuStreamBeginCaptureToGraph_ptsz, capture_to_graph_fn, s,
				       graph, deps, edges, ndeps, mode));
}

/* The capture ends whether or not the graph came out valid. */
static CUresult end_capture(CUresult r)
{
	if (r != CUDA_ERROR_INVALID_VALUE && !inject_in_tool)
		redirect_capture(-1);
	return r;
}

EXPORT CUresult cuStreamEndCapture(CUstream s, void **graph)
{
	ENTER(cuStreamEndCapture);
	return end_capture(CALL_REAL(cuStreamEndCapture, CUresult(*)(CUstream, void **), s, graph));
}

EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, void **graph)
{
	ENTER(cuStreamEndCapture_ptsz);
	return end_capture(
	    CALL_REAL(cuStreamEndCapture_ptsz, CUresult(*)(CUstream, void **), s, graph));
}

CUresult interpose_launch_real(bool ex, bool ptsz, CUfunction f, const CUlaunchConfig *cfg,
			       void **params, void **extra)
{
	enum interposed_id id = ex ? (ptsz ? IP_cuLaunchKernelEx_ptsz : IP_cuLaunchKernelEx)
				   : (ptsz ? IP_cuLaunchKernel_ptsz : IP_cuLaunchKernel);

	if (!table[id].real)
		return CUDA_ERROR_NOT_INITIALIZED;
	if (ex)
		return ((launch_ex_fn)table[id].real)(cfg, f, params, extra);
	return ((launch_fn)table[id].real)(f, cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ,
					   cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ,
					   cfg->sharedMemBytes, cfg->hStream, params, extra);
}

static struct interposed table[IP_COUNT] = {
#define ENTRY(fn) [IP_##fn] = {#fn, (void *)fn, NULL}
    ENTRY(cuInit),
    ENTRY(cuGetProcAddress),
    ENTRY(cuGetProcAddress_v2),
    ENTRY(cuModuleLoad),
    ENTRY(cuModuleLoadData),
    ENTRY(cuModuleLoadDataEx),
    ENTRY(cuModuleLoadFatBinary),
    ENTRY(cuModuleUnload),
    ENTRY(cuModuleGetFunction),
    ENTRY(cuLibraryLoadData),
    ENTRY(cuLibraryLoadFromFile),
    ENTRY(cuLibraryUnload),
    ENTRY(cuLibraryGetKernel),
    ENTRY(cuLibraryGetModule),
    ENTRY(cuKernelGetFunction),
    ENTRY(cuLaunchKernel),
    ENTRY(cuLaunchKernel_ptsz),
    ENTRY(cuLaunchKernelEx),
    ENTRY(cuLaunchKernelEx_ptsz),
    ENTRY(cuCtxSynchronize),
    ENTRY(cuCtxSynchronize_v2),
    ENTRY(cuStreamSynchronize),
    ENTRY(cuStreamSynchronize_ptsz),
    ENTRY(cuEventSynchronize),
    ENTRY(cuFuncSetAttribute),
    ENTRY(cuKernelSetAttribute),
    ENTRY(cuStreamBeginCapture),
    ENTRY(cuStreamBeginCapture_v2),
    ENTRY(cuStreamBeginCapture_ptsz),
    ENTRY(cuStreamBeginCapture_v2_ptsz),
    ENTRY(cuStreamBeginCaptureToGraph),
    ENTRY(cuStreamBeginCaptureToGraph_ptsz),
    ENTRY(cuStreamEndCapture),
    ENTRY(cuStreamEndCapture_ptsz),
    ENTRY(cuLaunchCooperativeKernel),
    ENTRY(cuLaunchCooperativeKernel_ptsz),
#define WORK_ENTRY(name, nargs) ENTRY(name),
    INJECT_WORK_CALLS(WORK_ENTRY)
    INJECT_RECORDED_CALLS(WORK_ENTRY)
#undef WORK_ENTRY
#undef ENTRY
};
