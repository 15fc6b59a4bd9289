# cuda tests: the fake libcuda.so.1 and the workloads that call it, under $(BUILD)/fixtures/.

CUDA_FIXTURE_DIR := $(BUILD)/fixtures
CUDA_FIXTURE_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-fno-omit-frame-pointer -D_GNU_SOURCE

# --- the fake CUDA driver and the workloads that call it ---
FAKE_LIBCUDA := $(CUDA_FIXTURE_DIR)/fake/libcuda.so.1
# the same library at a second path: a different file, as when a process dlopen()s another copy
FAKE_LIBCUDA_COPY := $(CUDA_FIXTURE_DIR)/fake2/libcuda.so.1
CUDA_WORKLOADS := $(patsubst tests/workloads/%.c,$(CUDA_FIXTURE_DIR)/workloads/%,$(wildcard tests/workloads/cuda_*.c))

# -O0: every entry point stays a separate function (no folding of identical
# bodies) and starts with push %rbp, as real prologues do; uprobes emulate that
# push, while a first instruction like a RIP-relative load must be single-stepped,
# which costs ~15 us in a VM and would make every benchmark about the fake.
$(FAKE_LIBCUDA): tests/fake_libcuda/fake_libcuda.c tests/fake_libcuda/fake_cuda.h tests/mk/cuda.mk
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FIXTURE_CFLAGS) -O0 -fPIC -shared -fvisibility=hidden \
		-Wl,-soname,libcuda.so.1 -o $@ $< -lpthread

$(FAKE_LIBCUDA_COPY): $(FAKE_LIBCUDA)
	$(call msg,CP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cp $< $@

# Linked against the fake by file name, found through an rpath to its directory;
# cuda_late_dlopen does not link it at all.
$(CUDA_FIXTURE_DIR)/workloads/cuda_late_dlopen: tests/workloads/cuda_late_dlopen.c tests/workloads/workload.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FIXTURE_CFLAGS) -Itests/fake_libcuda -o $@ $< -ldl

$(CUDA_FIXTURE_DIR)/workloads/cuda_%: tests/workloads/cuda_%.c tests/workloads/workload.h $(FAKE_LIBCUDA)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FIXTURE_CFLAGS) -Itests/fake_libcuda -o $@ $< \
		-L$(CUDA_FIXTURE_DIR)/fake -l:libcuda.so.1 -Wl,-rpath,$(abspath $(CUDA_FIXTURE_DIR)/fake) -lpthread

FIXTURES += $(FAKE_LIBCUDA) $(FAKE_LIBCUDA_COPY) $(CUDA_WORKLOADS)
