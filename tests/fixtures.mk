# Helper programs the tests run; every output lives under $(BUILD)/fixtures/.

FIXTURE_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE

# kernel sources: a workload with known syscalls, ioctls and sleeps; a fake NVML
FIXTURES += $(BUILD)/fixtures/kernel_workload $(BUILD)/fixtures/libnvidia-ml.so.1

$(BUILD)/fixtures/kernel_workload: tests/fixtures/kernel_workload.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -o $@ $<

$(BUILD)/fixtures/libnvidia-ml.so.1: tests/fixtures/fake_nvml.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(FIXTURE_CFLAGS) -shared -fPIC -o $@ $<
