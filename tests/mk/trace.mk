# trace format tests: the .grt fixture generator and the trace reader fuzzer.

# --- .grt trace fixtures and the trace reader fuzzer ---
TRACE_TEST_HEADERS := tests/trace_gen.h tests/trace_files.h tests/known_trace.h

FIXTURES += $(BUILD)/fixtures/gen_trace

$(BUILD)/fixtures/gen_trace: tests/tools/gen_trace.c $(TRACE_TEST_HEADERS) $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# The test programs include these headers too; the generic test rule does not know that.
$(filter $(BUILD)/tests/test_trace_% $(BUILD)/tests/test_event_printer,$(TEST_BINS)): \
	$(TRACE_TEST_HEADERS)

# libFuzzer build of the reader and printers, with its own clang sanitizer flags; built on
# demand by tests/fuzz/run_fuzz_trace_reader.sh (and `make fuzz`), not by `make all`.
FUZZ_TRACE_SRCS := $(filter-out src/common/elf_file.c,$(wildcard src/common/*.c)) $(wildcard src/trace/*.c) src/export/event_printer.c \
	src/export/event_csv.c
FUZZ_CFLAGS := -std=gnu11 $(WARN) -g -O1 -Isrc -Itests -D_GNU_SOURCE -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

$(BUILD)/fuzz/fuzz_trace_reader: tests/fuzz/fuzz_trace_reader.c $(FUZZ_TRACE_SRCS) \
		$(wildcard src/common/*.h src/trace/*.h src/export/*.h) $(TRACE_TEST_HEADERS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_TRACE_SRCS) -lm

fuzz: $(BUILD)/fuzz/fuzz_trace_reader
