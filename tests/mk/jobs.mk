# jobs: the synthetic trace generator (tests, bench/jobs_scale.sh), and the tests' trace helpers
FIXTURES += $(BUILD)/fixtures/gen_jobs_trace
$(filter $(BUILD)/tests/test_jobs_% $(BUILD)/tests/test_drm_jobs,$(TEST_BINS)): tests/jobs_trace.h tests/report_check.h

$(BUILD)/fixtures/gen_jobs_trace: tests/fixtures/gen_jobs_trace.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)
