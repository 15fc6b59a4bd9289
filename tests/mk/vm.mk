# vm tests (tests/vm): the programs the guests run, built here and copied into their initramfs.

VM_PROGS := $(patsubst tests/vm/progs/%.c,$(BUILD)/fixtures/vm/%,$(wildcard tests/vm/progs/*.c))
FIXTURES += $(VM_PROGS)

$(BUILD)/fixtures/vm/%: tests/vm/progs/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -o $@ $<

.PHONY: vmtest
vmtest: all
	$(Q)./tools/install-deps.sh vm
	$(Q)./tests/vm/vmtest.sh $(BUILD)
