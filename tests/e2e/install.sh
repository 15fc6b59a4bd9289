#!/bin/bash
# make install with PREFIX and DESTDIR: the program, the inject library, a man page per command
# (made from --help, so they agree), bash and zsh completion that complete from --help.
set -u
build=${1:-build}
. tests/e2e/lib/cases.bash

san=
[[ $build == */san ]] && san=SAN=1
root=$tmp/root
make --no-print-directory -s install BUILD="$build" $san DESTDIR="$root" PREFIX=/opt/gt >"$tmp/out" 2>&1
check "make install: exit 0 ($(tail -c 300 "$tmp/out"))" test $? -eq 0
check "the program under PREFIX/bin" test -x "$root/opt/gt/bin/grtrace"
check "the inject library where the gpu source looks (PREFIX/lib/grtrace)" \
	test -f "$root/opt/gt/lib/grtrace/libgrtrace-inject.so"
check "the installed program finds its inject library" bash -c \
	"'$root/opt/gt/bin/grtrace' info | grep -qE '^  gpu +yes'"
for cmd in record parse report export snoop serve top info; do
	check "man page of $cmd" test -s "$root/opt/gt/share/man/man1/grtrace-$cmd.1"
	# every option --help names is in the page
	missing=$("$build/grtrace" $cmd --help | grep -oE -- '--[a-z][a-z-]+' | sort -u | while read -r opt; do
		grep -qF -- "${opt//-/\\-}" "$root/opt/gt/share/man/man1/grtrace-$cmd.1" ||
			grep -qF -- "$opt" "$root/opt/gt/share/man/man1/grtrace-$cmd.1" || echo "$opt"
	done)
	check "man page of $cmd has every option of --help${missing:+ (missing $missing)}" test -z "$missing"
done
check "man renders the record page" bash -c \
	"MANWIDTH=100 man -l '$root/opt/gt/share/man/man1/grtrace-record.1' 2>/dev/null | grep -q 'launch CMD, held until every probe is attached'"
check "bash completion installed" test -s "$root/opt/gt/share/bash-completion/completions/grtrace"
check "zsh completion sources the bash one" grep -qx \
	"source /opt/gt/share/bash-completion/completions/grtrace" "$root/opt/gt/share/zsh/site-functions/_grtrace"
complete_words() { # the completions of a command line, the cursor after its last word
	PATH=$root/opt/gt/bin:$PATH bash -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		_grtrace; printf "%s\n" "${COMPREPLY[@]}"' _ "$root/opt/gt/share/bash-completion/completions/grtrace" "$@"
}
words=$(complete_words grtrace re | tr '\n' ' ')
check "bash completes 're' to record and report ($words)" test "$words" = "record report "
words=$(complete_words grtrace record --launch- | tr '\n' ' ')
check "bash completes record's options from --help ($words)" test "$words" = "--launch-returns --launch-stacks "
words=$(complete_words grtrace report x.grt --format '' | tr '\n' ' ')
check "bash completes --format values" test "$words" = "text json csv perfetto "
exit $failed
