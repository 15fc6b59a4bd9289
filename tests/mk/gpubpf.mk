# GPU eBPF tests: clang-built test programs and samples, the reference interpreter, the test binaries.

# The attach rewriter (src/gpubpf, in LIB_OBJS) uses the injected library's PTX parser. Its
# objects go into an archive at the end of LDLIBS: links that also name the parser's own
# objects (the ptx tests) take those, every other link takes them from the archive.
GPUBPF_PTX_LIB := $(BUILD)/gpubpf/libptxparse.a
GPUBPF_PTX_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/inject/ptx_*.c))
LDLIBS += $(GPUBPF_PTX_LIB)
$(LIB_OBJS): | $(GPUBPF_PTX_LIB)
$(GRTRACE): $(GPUBPF_PTX_LIB)

$(GPUBPF_PTX_LIB): $(GPUBPF_PTX_OBJS)
	$(call msg,AR,$@)
	$(Q)mkdir -p $(@D)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

GPUBPF_OUT := $(BUILD)/gpubpf
GPUBPF_BPF_FLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I$(BUILD)/gen -Isrc -Isamples/gpu-bpf

# Programs the tests load (tests/gpubpf/progs) and the samples (samples/gpu-bpf), as the user builds them.
GPUBPF_PROG_OBJS := $(patsubst tests/gpubpf/progs/%.bpf.c,$(GPUBPF_OUT)/progs/%.bpf.o,$(wildcard tests/gpubpf/progs/*.bpf.c))
GPUBPF_SAMPLE_OBJS := $(patsubst samples/gpu-bpf/%.bpf.c,$(GPUBPF_OUT)/samples/%.bpf.o,$(wildcard samples/gpu-bpf/*.bpf.c))

$(GPUBPF_OUT)/progs/%.bpf.o: tests/gpubpf/progs/%.bpf.c $(BUILD)/gen/vmlinux.h $(wildcard tests/gpubpf/progs/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(GPUBPF_BPF_FLAGS) -Itests/gpubpf/progs -c $< -o $@

$(GPUBPF_OUT)/samples/%.bpf.o: samples/gpu-bpf/%.bpf.c $(BUILD)/gen/vmlinux.h $(wildcard samples/gpu-bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(GPUBPF_BPF_FLAGS) -c $< -o $@

FIXTURES += $(GPUBPF_PROG_OBJS) $(GPUBPF_SAMPLE_OBJS)

# The reference interpreter and the tests' shared helpers, linked into the gpubpf tests.
GPUBPF_TEST_OBJS := $(BUILD)/obj/tests/gpubpf/bpf_interp.o $(BUILD)/obj/tests/gpubpf/bpf_sim.o
GPUBPF_TEST_HEADERS := $(wildcard tests/gpubpf/*.h) tests/test_util.h

$(BUILD)/obj/tests/gpubpf/%.o: tests/gpubpf/%.c $(wildcard tests/gpubpf/*.h)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -c $< -o $@

$(filter $(BUILD)/tests/test_gpubpf_%,$(TEST_BINS)): $(BUILD)/tests/%: tests/%.c $(LIB_OBJS) $(GPUBPF_TEST_OBJS) $(GPUBPF_TEST_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(GPUBPF_TEST_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# Instruction set v3 (fetching atomics, 32-bit jumps) for the programs that test it.
$(GPUBPF_OUT)/progs/atomics.bpf.o $(GPUBPF_OUT)/progs/alu_cover.bpf.o: GPUBPF_BPF_FLAGS += -mcpu=v3

# The PTX corpus (tests/ptx/*.cu) compiled by nvcc for sm_75 and sm_90, for the attach tests;
# nothing when the toolkit is absent (the tests then say they skipped).
GPUBPF_NVCC := $(shell command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
ifneq ($(GPUBPF_NVCC),)
GPUBPF_CORPUS_PTX := $(foreach a,75 90,$(patsubst tests/ptx/%.cu,$(GPUBPF_OUT)/ptx/%.sm_$(a).ptx,$(wildcard tests/ptx/*.cu)))
$(GPUBPF_OUT)/ptx/%.sm_75.ptx: tests/ptx/%.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GPUBPF_NVCC) -ptx -arch=sm_75 -o $@ $<
$(GPUBPF_OUT)/ptx/%.sm_90.ptx: tests/ptx/%.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GPUBPF_NVCC) -ptx -arch=sm_90 -o $@ $<
# the samples' test program, for instrumenting it with each sample
GPUBPF_CORPUS_PTX += $(GPUBPF_OUT)/samples/vec_add.sm_90.ptx $(GPUBPF_OUT)/samples/vec_add.sm_75.ptx
$(GPUBPF_OUT)/samples/vec_add.sm_%.ptx: samples/gpu-bpf/vec_add.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(GPUBPF_NVCC) -ptx -arch=sm_$* -o $@ $<
FIXTURES += $(GPUBPF_CORPUS_PTX)
endif

# gpubpf_sim: runs objects over a simulated launch and writes the trace a GPU run must match
FIXTURES += $(BUILD)/fixtures/gpubpf_sim
$(BUILD)/fixtures/gpubpf_sim: tests/gpubpf/gpubpf_sim.c $(LIB_OBJS) $(GPUBPF_TEST_OBJS) $(GPUBPF_TEST_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(GPUBPF_TEST_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# The overhead benchmark's programs (bench/gpu_bpf.sh runs them on the GPU machine: built here).
GPUBPF_BENCH_OBJS := $(patsubst bench/gpubpf/%.bpf.c,$(GPUBPF_OUT)/bench/%.bpf.o,$(wildcard bench/gpubpf/*.bpf.c))
$(GPUBPF_OUT)/bench/%.bpf.o: bench/gpubpf/%.bpf.c $(BUILD)/gen/vmlinux.h $(wildcard samples/gpu-bpf/*.h)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(GPUBPF_BPF_FLAGS) -c $< -o $@
FIXTURES += $(GPUBPF_BENCH_OBJS)
