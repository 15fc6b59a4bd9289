# bash completion for grtrace. Commands and options come from the program's own --help
# (the same text the man pages are made from), so a new option completes without an edit here.

_grtrace_commands() {
	grtrace --help 2>/dev/null | sed -n 's/^  \([a-z]*\) .*/\1/p'
}

# every --long and -x option the command's help names
_grtrace_options() {
	grtrace "$1" --help 2>/dev/null | grep -oE '(^|[ ,[|])--?[a-zA-Z][a-zA-Z0-9-]*' | sed 's/^[ ,[|]//' | sort -u
}

_grtrace() {
	local cur prev cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$(_grtrace_commands) help --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	# after "--" comes the traced command and its own arguments
	for ((i = 2; i < COMP_CWORD; i++)); do
		if [ "${COMP_WORDS[i]}" = "--" ]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	case "$prev" in
	--format)
		COMPREPLY=($(compgen -W "text json csv perfetto" -- "$cur"))
		return
		;;
	-s | --sources)
		COMPREPLY=($(compgen -W "cuda syscall sched fence xid pcie uvm gpu none" -- "${cur##*,}"))
		return
		;;
	-p | --pid)
		COMPREPLY=($(compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$cur"))
		return
		;;
	-o | --output | --libcuda)
		COMPREPLY=($(compgen -f -- "$cur"))
		return
		;;
	esac
	if [ "$cmd" = snoop ] && [ "$COMP_CWORD" -eq 2 ]; then
		COMPREPLY=($(compgen -W "$(grtrace snoop --help 2>/dev/null | sed -n 's/^ \{18\}\([a-z]*\) .*/\1/p')" -- "$cur"))
		return
	fi
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_grtrace_options "$cmd")" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _grtrace grtrace
