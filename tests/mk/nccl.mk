# nccl tests: the fake libnccl.so.2 (on the fake libcuda) and the multi-rank workload, under $(BUILD)/fixtures/.

FAKE_LIBNCCL := $(CUDA_FIXTURE_DIR)/fake_nccl/libnccl.so.2

# -O0 as the fake libcuda: every entry point a separate function with a plain prologue
$(FAKE_LIBNCCL): tests/fake_libnccl/fake_libnccl.c tests/fake_libnccl/fake_nccl.h $(FAKE_LIBCUDA) tests/mk/nccl.mk
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FIXTURE_CFLAGS) -O0 -fPIC -shared -fvisibility=hidden \
		-Itests/fake_libcuda -Wl,-soname,libnccl.so.2 -o $@ $< \
		-L$(CUDA_FIXTURE_DIR)/fake -l:libcuda.so.1 -Wl,-rpath,$(abspath $(CUDA_FIXTURE_DIR)/fake) -lrt

$(CUDA_FIXTURE_DIR)/workloads/nccl_%: tests/workloads/nccl_%.c tests/workloads/nccl_workload.h tests/workloads/workload.h $(FAKE_LIBNCCL)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FIXTURE_CFLAGS) -Itests/fake_libcuda -Itests/fake_libnccl -o $@ $< \
		-L$(CUDA_FIXTURE_DIR)/fake_nccl -l:libnccl.so.2 -L$(CUDA_FIXTURE_DIR)/fake -l:libcuda.so.1 \
		-Wl,-rpath,$(abspath $(CUDA_FIXTURE_DIR)/fake_nccl):$(abspath $(CUDA_FIXTURE_DIR)/fake)

FIXTURES += $(FAKE_LIBNCCL) $(CUDA_FIXTURE_DIR)/workloads/nccl_ranks $(CUDA_FIXTURE_DIR)/workloads/nccl_groups
