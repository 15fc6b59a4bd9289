# CLI tests: the option-parser fuzzer (built on demand by tests/fuzz/run_fuzz_cli_args.sh).

# The command files are built with libFuzzer's instrumentation; the rest of the
# program comes from the build's own objects (the parsers only look things up there).
FUZZ_CLI_SRCS := $(filter-out src/cli/main.c,$(wildcard src/cli/*.c))
FUZZ_CLI_OBJS := $(filter-out $(BUILD)/obj/src/cli/%,$(LIB_OBJS))

$(BUILD)/fuzz/fuzz_cli_args: tests/fuzz/fuzz_cli_args.c $(FUZZ_CLI_SRCS) $(FUZZ_CLI_OBJS) \
		$(wildcard src/cli/*.h)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -I$(BUILD)/gen -o $@ $< $(FUZZ_CLI_SRCS) $(FUZZ_CLI_OBJS) $(LDLIBS)

$(BUILD)/fuzz/fuzz_cli_args: $(BUILD)/gen/version.h

fuzz: $(BUILD)/fuzz/fuzz_cli_args
