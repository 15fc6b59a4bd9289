# PTX rewriter and fat binary tests, and the rewrite benchmark.

# ptx: the PTX rewriter and fat binary tests link the inject library's parsing
# objects directly (the .so itself interposes libcuda, which a test must not).
INJECT_PARSE_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(wildcard src/inject/fatbin*.c src/inject/ptx_*.c))

$(BUILD)/tests/test_ptx_rewrite $(BUILD)/tests/test_ptx_module_vars $(BUILD)/tests/test_fatbin: $(BUILD)/tests/%: tests/%.c $(LIB_OBJS) $(INJECT_PARSE_OBJS) tests/test_util.h tests/cuda_tools.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(INJECT_PARSE_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# Times extraction + rewriting of a module (bench/ptx_rewrite_bench.c).
# (the tests above get the kernel-name filter from LIB_OBJS; the benchmark links it alone)
$(BUILD)/fixtures/ptx_rewrite_bench: bench/ptx_rewrite_bench.c $(INJECT_PARSE_OBJS) \
		$(BUILD)/obj/src/common/kernel_regex.o
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(INJECT_PARSE_OBJS) $(BUILD)/obj/src/common/kernel_regex.o \
		$(SAN_LDFLAGS) $(LDLIBS)

FIXTURES += $(BUILD)/fixtures/ptx_rewrite_bench
