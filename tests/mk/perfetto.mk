# Perfetto export tests: small traces with known timelines, written by a fixture program.
FIXTURES += $(BUILD)/fixtures/perfetto_traces

$(BUILD)/fixtures/perfetto_traces: tests/fixtures/perfetto_traces.c tests/jobs_trace.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)
