# shellcheck shell=sh
# The probes' input reader, sent in front of probe.sh and of debug_probe.sh (protocol._wire joins
# them; shellcheck checks each joined script, as sent).
__rv_m=
__rv_ipad=
__rv_i=0
# The arguments arrive on stdin, not in the exec's URL (whose length would grow with every key,
# and which audit logs keep): one per line, `l` + the text, or `o` + octal escapes for one that
# holds a newline; `e` ends them. No `e`: the input was cut short, and nothing is checked.
__rv_in=
set --
while IFS= read -r __rv_l; do
  case "$__rv_l" in
    e) __rv_in=1; break;;
    l*) set -- "$@" "${__rv_l#l}";;
    o*)
      __rv_l=${__rv_l#o}
      case "$__rv_l" in *[!\\0-7]*) exit 0;; esac
      # only octal escapes, which printf turns into the argument's bytes
      # shellcheck disable=SC2059
      __rv_l=$(printf "${__rv_l}x"); set -- "$@" "${__rv_l%x}";;
    *) exit 0;;
  esac
done
[ -n "$__rv_in" ] || exit 0
