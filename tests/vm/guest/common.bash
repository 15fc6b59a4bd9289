# Sourced by the guest suites: the e2e case helpers (ok/FAIL lines, $tmp, $failed) and
# record_ok, which shows grtrace's messages on '#' lines when a recording fails.
. tests/e2e/lib/cases.bash

# record_ok NAME ERRFILE STATUS: a case for a recording's exit status
record_ok() {
	if [ "$3" = 0 ]; then
		ok "$1"
	else
		fail "$1 (status $3)"
		sed 's/^/#   /' "$2"
	fi
}
