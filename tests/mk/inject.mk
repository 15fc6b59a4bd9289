# The inject library and the gpu source: fake driver and CUPTI, a driver program, unit tests.

# The inject library's tests: a fake driver and a fake CUPTI that let the whole
# pipeline (interposition, rewriting, redirected launches, probe buffers, CUPTI
# correlation, calibration) run without a GPU, and a driver program using them.
INJECT_FIX := $(BUILD)/fixtures/inject

$(INJECT_FIX)/libcuda.so.1: tests/inject/fake_cuda.c src/inject/probe_buffer.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ $< $(SAN_LDFLAGS) -lpthread -ldl

$(INJECT_FIX)/cupti/libcupti.so.13: tests/inject/fake_cupti.c src/inject/cupti_decls.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -Wl,-soname,libcupti.so.13 -o $@ $< $(SAN_LDFLAGS) -lpthread

$(INJECT_FIX)/app: tests/inject/app.c tests/inject/app_common.h $(INJECT_FIX)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(INJECT_FIX)/libcuda.so.1 $(SAN_LDFLAGS) -ldl

# A graph captured in global mode while the library's threads start their work.
$(INJECT_FIX)/app_capture: tests/inject/app_capture.c tests/inject/app_common.h $(INJECT_FIX)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(INJECT_FIX)/libcuda.so.1 $(SAN_LDFLAGS)

# Several threads launching, copying and setting memory, through exports and cuGetProcAddress.
$(INJECT_FIX)/app_threads: tests/inject/app_threads.c tests/inject/app_common.h $(INJECT_FIX)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(INJECT_FIX)/libcuda.so.1 $(SAN_LDFLAGS) -lpthread

# Reads a trace: every device record's call bracket holds exactly one cuda call.
$(INJECT_FIX)/check_brackets: tests/inject/check_brackets.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# CUPTI clients: a program with a profiler inside, another tool's injection library.
INJECT_CUPTI_RPATH := -Wl,-rpath,$(abspath $(INJECT_FIX)/cupti)

$(INJECT_FIX)/app_profiler: tests/inject/app_profiler.c tests/inject/cupti_client.h tests/inject/app_common.h $(INJECT_FIX)/libcuda.so.1 $(INJECT_FIX)/cupti/libcupti.so.13
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(INJECT_FIX)/libcuda.so.1 $(INJECT_FIX)/cupti/libcupti.so.13 $(INJECT_CUPTI_RPATH) $(SAN_LDFLAGS) -ldl

$(INJECT_FIX)/libfaketool.so: tests/inject/fake_tool.c tests/inject/cupti_client.h $(INJECT_FIX)/cupti/libcupti.so.13
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -shared -o $@ $< $(INJECT_FIX)/cupti/libcupti.so.13 $(INJECT_CUPTI_RPATH) $(SAN_LDFLAGS)

FIXTURES += $(INJECT_FIX)/libcuda.so.1 $(INJECT_FIX)/cupti/libcupti.so.13 $(INJECT_FIX)/app \
	    $(INJECT_FIX)/app_threads $(INJECT_FIX)/check_brackets $(INJECT_FIX)/app_profiler \
	    $(INJECT_FIX)/libfaketool.so $(INJECT_FIX)/app_capture

# Unit tests of the inject library's pure parts (ring, clock math, launch summaries, cache,
# the instrumentations' kernel tables and twin arguments).
INJECT_PURE_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,src/inject/clock_math.c src/inject/launch_summary.c \
	src/inject/probe_cache.c src/inject/instr_kernel.c src/inject/copy_shape.c \
	$(wildcard src/inject/ptx_*.c))

$(BUILD)/tests/test_inject_parts: tests/test_inject_parts.c $(LIB_OBJS) $(INJECT_PURE_OBJS) tests/test_util.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(INJECT_PURE_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# The CUPTI offsets inject/cupti_decls.h re-declares, checked against the toolkit's headers
# where they are installed (the e2e test runs it when it was built).
CUPTI_HEADERS := $(wildcard /usr/local/cuda/include/cupti_activity.h)
ifneq ($(CUPTI_HEADERS),)
$(INJECT_FIX)/cupti_layout: tests/inject/cupti_layout.c src/inject/cupti_decls.h src/inject/copy_shape.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -I/usr/local/cuda/include -o $@ $< $(SAN_LDFLAGS)

FIXTURES += $(INJECT_FIX)/cupti_layout
endif

# GPU eBPF without a GPU: vec_add's driver program, and the fake driver's device, which runs
# the reference interpreter over the programs where an instrumented kernel is launched.
$(INJECT_FIX)/app_bpf: tests/inject/app_bpf.c tests/inject/app_common.h $(INJECT_FIX)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(INJECT_FIX)/libcuda.so.1 $(SAN_LDFLAGS)

# Kernels that use their module's variables, whose results the fake driver computes.
$(INJECT_FIX)/app_vars: tests/inject/app_vars.c tests/inject/app_common.h $(INJECT_FIX)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(INJECT_FIX)/libcuda.so.1 $(SAN_LDFLAGS)

FIXTURES += $(INJECT_FIX)/app_vars

FAKE_BPF_DEVICE_SRCS := tests/inject/fake_bpf_device.c tests/gpubpf/bpf_interp.c tests/gpubpf/bpf_sim.c \
	$(wildcard src/gpubpf/*.c src/trace/*.c src/common/*.c src/inject/ptx_*.c)
$(INJECT_FIX)/libfakegpubpf.so: $(patsubst %.c,$(BUILD)/pic/%.o,$(FAKE_BPF_DEVICE_SRCS))
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-z,defs -o $@ $^ $(SAN_LDFLAGS) -lbpf -lelf -lz -lzstd -lpthread -ldl -lm

FIXTURES += $(INJECT_FIX)/app_bpf $(INJECT_FIX)/libfakegpubpf.so

