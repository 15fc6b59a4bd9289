# Shared by tests/e2e/lib/cuda.bash and bench/ scripts (sourced): waiting until a tracer has
# attached its probes, seen from outside through the BPF links in its fdinfo.

# wait_bpf_links PID PATTERN MORE_THAN TRIES: until process PID holds more than MORE_THAN fds
# whose fdinfo has a line matching PATTERN, and that number has not changed for 0.5 s (links
# are created one group at a time); gives up after TRIES tenths of a second.
wait_bpf_links() {
	local n last=0 same=0
	for _ in $(seq "$4"); do
		n=$(grep -l "$2" /proc/"$1"/fdinfo/* 2>/dev/null | wc -l)
		if [ "$n" -gt "$3" ] && [ "$n" = "$last" ]; then
			same=$((same + 1))
			[ $same -ge 5 ] && return 0
		else
			same=0
		fi
		last=$n
		sleep 0.1
	done
	return 1
}

# bpf_prog_times PID: "prog_id prog_type run_time_ns run_cnt" per BPF program fd of process PID
# (the run time and count stay 0 unless kernel.bpf_stats_enabled is 1 or a process holds the
# statistics on)
bpf_prog_times() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '/^prog_type:/ {p = $2} /^prog_id:/ {id = $2} /^run_time_ns:/ {t = $2}
		     /^run_cnt:/ {c = $2} END {if (p != "") print id, p, t, c}' "$f" 2>/dev/null
	done
}
