#!/bin/bash
# Writes the man pages from the program's own help: grtrace.1 from `grtrace --help`, and
# grtrace-CMD.1 from `grtrace CMD --help` for every command it lists, so the pages and
# --help can never disagree. usage: gen_man.sh GRTRACE OUTDIR VERSION
set -eu
grtrace=$1
out=$2
version=$3
mkdir -p "$out"

# troff-safe text: a backslash doubled, a leading dot or quote guarded
esc() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

page() { # NAME SECTION-TITLE SUMMARY HELP-FILE
	local name=$1 summary=$2 help=$3 upper
	upper=$(printf '%s' "$name" | tr a-z A-Z)
	{
		printf '.TH %s 1 "" "grtrace %s" "grtrace manual"\n' "$upper" "$version"
		printf '.SH NAME\n%s \\- %s\n' "$name" "$(printf '%s' "$summary" | esc)"
		printf '.SH SYNOPSIS\n.nf\n'
		# the usage line and its continuation lines (indented, starting with "[")
		awk 'NR == 1 { sub(/^usage: /, ""); print; next } /^ +\[/ && !done { sub(/^ +/, "        "); print; next } { exit }' "$help" | esc
		printf '.fi\n.SH OPTIONS\n.nf\n'
		awk 'NR == 1 { next } /^ +\[/ && !started { next } { started = 1; print }' "$help" | esc
		printf '.fi\n'
		if [ "$name" != grtrace ]; then
			printf '.SH SEE ALSO\n.BR grtrace (1)\n'
		fi
		printf '.SH EXIT STATUS\n0 success, 1 runtime failure, 2 usage error.\n'
	} >"$out/$name.1"
}

"$grtrace" --help >"$out/grtrace.help"
page grtrace "blktrace for GPUs: record, parse, report and export GPU activity" "$out/grtrace.help"
# the command lines of the top-level help: "  NAME     summary"
sed -n 's/^  \([a-z]*\) \+\(.*\)$/\1\t\2/p' "$out/grtrace.help" | while IFS=$'\t' read -r cmd summary; do
	"$grtrace" "$cmd" --help >"$out/grtrace-$cmd.help"
	page "grtrace-$cmd" "$summary" "$out/grtrace-$cmd.help"
done
rm -f "$out"/*.help
