# kernel-source tests: a workload with known syscalls, ioctls and sleeps; a stand-in NVML library.

KERNEL_FIXTURE_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE
FIXTURES += $(BUILD)/fixtures/kernel_workload $(BUILD)/fixtures/libnvidia-ml.so.1 \
	$(BUILD)/fixtures/old_nvml/libnvidia-ml.so.1 \
	$(BUILD)/fixtures/libcuda_selfdesc_ro.so $(BUILD)/fixtures/libcuda_selfdesc_rw.so

$(BUILD)/fixtures/kernel_workload: tests/fixtures/kernel_workload.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(KERNEL_FIXTURE_CFLAGS) -o $@ $<

$(BUILD)/fixtures/libnvidia-ml.so.1: tests/fixtures/fake_nvml.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(KERNEL_FIXTURE_CFLAGS) -shared -fPIC -o $@ $<

# a driver from before NVML's topology functions
$(BUILD)/fixtures/old_nvml/libnvidia-ml.so.1: tests/fixtures/fake_nvml.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(KERNEL_FIXTURE_CFLAGS) -DFAKE_NVML_OLD_DRIVER -shared -fPIC -o $@ $<

# the kernel-source tests include this header
$(filter $(BUILD)/tests/test_syscall_source $(BUILD)/tests/test_sched_source $(BUILD)/tests/test_fence_xid_bpf $(BUILD)/tests/test_pcie_source,$(TEST_BINS)): tests/kernel_test_session.h

# libcuda's self-description in another read-only section, and in writable data
$(BUILD)/fixtures/libcuda_selfdesc_ro.so: tests/fixtures/libcuda_selfdesc.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(KERNEL_FIXTURE_CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/fixtures/libcuda_selfdesc_rw.so: tests/fixtures/libcuda_selfdesc.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(KERNEL_FIXTURE_CFLAGS) -DSELFDESC_WRITABLE -shared -fPIC -o $@ $<
