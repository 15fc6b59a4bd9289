# uvm tests and GPU bench: the capture/snoop/report helper and a descriptor-holding stand-in process.

# uvm_tool: raw UVM queue capture, live uvm snoop, CSV of a uvm trace (bench/gpu_uvm.sh)
FIXTURES += $(BUILD)/fixtures/uvm_tool
$(BUILD)/fixtures/uvm_tool: tests/tools/uvm_tool.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests -o $@ $< $(LIB_OBJS) $(SAN_LDFLAGS) $(LDLIBS)

# uvm_fd_holder: a process that opens a named file and holds it (fake UVM descriptor for binding tests)
FIXTURES += $(BUILD)/fixtures/uvm_fd_holder
$(BUILD)/fixtures/uvm_fd_holder: tests/tools/uvm_fd_holder.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(SAN_LDFLAGS)
