# report tests: a tiny ELF for symbolization and the scenario trace writer.

# report: a tiny ELF whose functions the symbolization test names, and the scenario trace writer
FIXTURES += $(BUILD)/fixtures/symfixture $(BUILD)/fixtures/symfixture_escapes $(BUILD)/fixtures/report_traces

$(BUILD)/fixtures/symfixture: tests/fixtures/symfixture.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O0 -g -fno-inline -o $@ $<

# the same program with a function named with a terminal escape sequence (ESC [2J clears a screen)
$(BUILD)/fixtures/symfixture_escapes: $(BUILD)/fixtures/symfixture
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --redefine-sym "grt_fixture_inner=grt_fixture_$$(printf '\033')[2Jinner" $< $@

$(BUILD)/fixtures/report_traces: tests/fixtures/report_traces.c tests/report_scenarios.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# the report tests include these headers; the test rule does not track headers under tests/
$(filter $(BUILD)/tests/test_report_%,$(TEST_BINS)): tests/report_scenarios.h tests/report_check.h tests/jobs_trace.h

# every allocation of grtrace's code goes through the test's wrappers, which fail the one it picks
$(BUILD)/tests/test_report_oom: tests/test_report_oom.c $(LIB_OBJS) tests/test_util.h tests/report_check.h \
		tests/report_scenarios.h tests/jobs_trace.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS) \
		-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
