# shellcheck shell=sh
# The exec probe: run as `sh -c "$(cat probe.sh)" rollout-verify` in every inspected container,
# its arguments on stdin (see below). POSIX sh only: busybox, dash and bash images all run it. Arguments are data, never
# code: only shell identifiers ever reach `eval`, paths are passed as argv. The section markers
# start with `=`, which no env name (`-` and `.` are allowed) and no absolute path can.
# It prints, one line each: `env 1|0 NAME`, `val INNER-HMAC|- NAME`, `name NAME`, `real POSITION PATH`, `file SHA256|-|! POSITION`,
# `notool TOOL` (then nothing more), and `end` last. Comment lines and indentation are stripped before it is sent.
# (the input reader, probe_input.sh, runs before this: it leaves the arguments in "$@")
# The exec's own environment, one entry per line (a newline inside a value becomes \001, so a
# value cannot fake another entry): /proc/$$/environ is the shell's initial environment, which
# nothing the shell does to PWD, IFS, SHLVL, `_`... changes. A missing tool is said, never taken
# for a missing key.
__rv_src=
__rv_source() {
  [ -n "$__rv_src" ] && return 0
  if [ -r /proc/$$/environ ]; then
    command -v tr >/dev/null 2>&1 || { printf 'notool tr\n'; exit 0; }
    __rv_src='proc'
  else
    command -v env >/dev/null 2>&1 || { printf 'notool env\n'; exit 0; }
    __rv_src='env'
  fi
}
__rv_environ() {
  if [ "$__rv_src" = proc ]; then tr '\000\n' '\n\001' < /proc/$$/environ; else env; fi
}
# names the shell sets or changes itself, and names that are not shell identifiers
__rv_managed() {
  case "$1" in
    *[!A-Za-z0-9_]*|[0-9]*|IFS|OPTIND|OPTARG|OPTERR|PPID|PS1|PS2|PS3|PS4|PWD|OLDPWD|PATH|LINENO|RANDOM|SRANDOM|SECONDS|SHLVL|SHELL|SHELLOPTS|TERM|HOSTNAME|HOSTTYPE|MACHTYPE|OSTYPE|UID|EUID|GROUPS|DIRSTACK|PIPESTATUS|FUNCNAME|EPOCHSECONDS|EPOCHREALTIME|MAIL|MAILCHECK|HISTFILE|HISTSIZE|HISTFILESIZE|HISTCMD|COLUMNS|LINES|BASH*|ENV|_|__rv_*) return 0;;
  esac
  return 1
}
for __rv_a in "$@"; do
  case "$__rv_a" in
    =rv-env) __rv_m='env'; continue;; =rv-file) __rv_m='file'; continue;;
    =rv-val) __rv_m='val'; continue;; =rv-ipad) __rv_m='ipad'; continue;; =rv-names) __rv_names=1; continue;;
  esac
  if [ "$__rv_m" = ipad ]; then
    __rv_ipad=$__rv_a
  elif [ "$__rv_m" = env ]; then
    if __rv_managed "$__rv_a"; then
      __rv_source
      if __rv_environ |
        { while IFS= read -r __rv_l; do case "$__rv_l" in "$__rv_a="*) exit 0;; esac; done; exit 1; }
      then printf 'env 1 %s\n' "$__rv_a"; else printf 'env 0 %s\n' "$__rv_a"; fi
    elif eval "[ -n \"\${$__rv_a+x}\" ]"; then printf 'env 1 %s\n' "$__rv_a"
    else printf 'env 0 %s\n' "$__rv_a"; fi
  elif [ "$__rv_m" = val ]; then
    case "$__rv_a" in *[!A-Za-z0-9_]*|[0-9]*|'') printf 'val - %s\n' "$__rv_a"; continue;; esac
    command -v sha256sum >/dev/null 2>&1 || { printf 'notool sha256sum\n'; exit 0; }
    if __rv_managed "$__rv_a"; then
      # the value as the exec set it, from the environment's entry (\001 back to newlines)
      __rv_source
      __rv_v=$(__rv_environ |
        { while IFS= read -r __rv_l; do case "$__rv_l" in "$__rv_a="*) printf '%sx' "${__rv_l#*=}"; exit 0;; esac; done; exit 1; }) || {
        printf 'val - %s\n' "$__rv_a"; continue; }
      # shellcheck disable=SC2059
      if [ "$__rv_src" = proc ]; then
        __rv_h=$({ printf "$__rv_ipad"; printf '%s' "${__rv_v%x}" | tr '\001' '\n'; } | sha256sum)
      else
        __rv_h=$({ printf "$__rv_ipad"; printf '%s' "${__rv_v%x}"; } | sha256sum)
      fi
      __rv_v=
      printf 'val %s %s\n' "${__rv_h%% *}" "$__rv_a"
    elif eval "[ -n \"\${$__rv_a+x}\" ]"; then
      eval "__rv_v=\${$__rv_a}"
      # the pad is octal escapes (\066...) that printf itself must turn into bytes
      # shellcheck disable=SC2059
      __rv_h=$({ printf "$__rv_ipad"; printf '%s' "$__rv_v"; } | sha256sum)
      __rv_v=
      printf 'val %s %s\n' "${__rv_h%% *}" "$__rv_a"
    else
      printf 'val - %s\n' "$__rv_a"
    fi
  else
    # files are reported by position: a path may hold a newline
    __rv_i=$((__rv_i + 1))
    if [ ! -f "$__rv_a" ]; then
      printf 'file - %s\n' "$__rv_i"
    elif [ ! -r "$__rv_a" ]; then
      printf 'file ! %s\n' "$__rv_i"
    else
      command -v sha256sum >/dev/null 2>&1 || { printf 'notool sha256sum\n'; exit 0; }
      # where the path leads once every link is followed (`/run` -> `/var/run`, an app's link into
      # a Secret volume), as `real POSITION PATH`: the verifier shows a digest only for a file that
      # provably lies in a ConfigMap volume. No readlink, or a resolved path holding a newline:
      # no `real` line, and no digest will be shown. The file hashed is the one resolved.
      __rv_r=
      if command -v readlink >/dev/null 2>&1; then
        __rv_r=$(readlink -f "$__rv_a" 2>/dev/null && printf x) || __rv_r=
      fi
      case "$__rv_r" in
        /*"
x") __rv_r=${__rv_r%??};;
        *) __rv_r=;;
      esac
      case "$__rv_r" in *"
"*) __rv_r=;; esac
      if [ -n "$__rv_r" ]; then
        printf 'real %s %s\n' "$__rv_i" "$__rv_r"
        __rv_h=$(sha256sum < "$__rv_r") || { printf 'file ! %s\n' "$__rv_i"; continue; }
      else
        __rv_h=$(sha256sum < "$__rv_a") || { printf 'file ! %s\n' "$__rv_i"; continue; }
      fi
      printf 'file %s %s\n' "${__rv_h%% *}" "$__rv_i"
    fi
  fi
done
# `=rv-names` (zero-config): every name the environment holds, `name NAME` each, never a value. Only
# where one entry is one line (/proc's form: a newline inside a value became \001), so that no
# text of a value can pass for a name; without /proc or tr, none (a courtesy, never a failure)
if [ -n "$__rv_names" ] && [ -r /proc/$$/environ ] && command -v tr >/dev/null 2>&1; then
  __rv_src='proc'
  __rv_environ | while IFS= read -r __rv_l; do
    case "$__rv_l" in [A-Za-z_]*=*) __rv_n=${__rv_l%%=*};; *) continue;; esac
    case "$__rv_n" in *[!A-Za-z0-9_]*) ;; *) printf 'name %s\n' "$__rv_n";; esac
  done
fi
printf 'end\n'
