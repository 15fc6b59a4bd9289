# Helper programs the tests need; each helper appends its outputs to FIXTURES.

# report: a tiny ELF whose functions the symbolization test names, and the scenario trace writer
FIXTURES += $(BUILD)/fixtures/symfixture $(BUILD)/fixtures/report_traces

$(BUILD)/fixtures/symfixture: tests/fixtures/symfixture.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O0 -g -fno-inline -o $@ $<

$(BUILD)/fixtures/report_traces: tests/fixtures/report_traces.c tests/report_scenarios.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# the report tests include these headers; the test rule does not track headers under tests/
$(filter $(BUILD)/tests/test_report_%,$(TEST_BINS)): tests/report_scenarios.h tests/report_check.h

# jobs: the synthetic trace generator (tests, bench/jobs_scale.sh), and the tests' trace helpers
FIXTURES += $(BUILD)/fixtures/gen_jobs_trace
$(filter $(BUILD)/tests/test_jobs_%,$(TEST_BINS)): tests/jobs_trace.h

$(BUILD)/fixtures/gen_jobs_trace: tests/fixtures/gen_jobs_trace.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)
