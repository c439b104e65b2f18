# shellcheck shell=sh
# The debug probe: run as `sh -c "$(cat debug_probe.sh)" rollout-verify` in rollout-verify's
# ephemeral debug container, which shares the PID namespace of the container it inspects
# (`targetContainerName`): PID 1 there is that container's first process. It reads the target's
# environment from /proc/1/environ and its files through /proc/1/root, exactly what the
# application sees, and answers in the exec probe's lines (see probe.sh): `env 1|0 NAME`,
# `val INNER-HMAC|- NAME`, `name NAME`, `real POSITION PATH`, `file SHA256|-|! POSITION`, `notool TOOL`,
# `notarget WHY` (then nothing more) and `end` last. Arguments arrive on stdin as for probe.sh.
# Values never leave the pod: only key names, inner HMACs under the run's pad, and digests.
# (the input reader, probe_input.sh, runs before this: it leaves the arguments in "$@")
for __rv_t in tr sha256sum readlink; do
  command -v "$__rv_t" >/dev/null 2>&1 || { printf 'notool %s\n' "$__rv_t"; exit 0; }
done
# PID 1 must be another container's process (its own mount namespace): without a shared PID
# namespace it would be this container's own, and reading it would verify the debug image
__rv_self=$(readlink /proc/$$/ns/mnt 2>/dev/null) || __rv_self=
__rv_them=$(readlink /proc/1/ns/mnt 2>/dev/null) || { printf 'notarget denied\n'; exit 0; }
if [ -z "$__rv_self" ] || [ "$__rv_them" = "$__rv_self" ]; then printf 'notarget shared\n'; exit 0; fi
[ -r /proc/1/environ ] || { printf 'notarget denied\n'; exit 0; }
__rv_R=/proc/1/root
__rv_nl='
'
# the target's environment, one entry per line (a newline inside a value becomes \001)
__rv_environ() { tr '\000\n' '\n\001' < /proc/1/environ; }
# Where PATH leads inside the target's root, every link followed as the target would follow it:
# an absolute link target starts again at the target's root (/proc/1/root/... would otherwise
# follow it into this container's root). At most 40 links, as the kernel.
__rv_resolve() {
  __rv_p=$1; __rv_n=0
  while :; do
    __rv_out=; __rv_rest=${__rv_p#/}; __rv_again=
    while [ -n "$__rv_rest" ]; do
      __rv_c=${__rv_rest%%/*}
      case "$__rv_rest" in */*) __rv_rest=${__rv_rest#*/};; *) __rv_rest=;; esac
      case "$__rv_c" in ''|.) continue;; ..) __rv_out=${__rv_out%/*}; continue;; esac
      if [ -L "$__rv_R$__rv_out/$__rv_c" ]; then
        __rv_n=$((__rv_n + 1)); [ "$__rv_n" -le 40 ] || return 1
        __rv_to=$(readlink "$__rv_R$__rv_out/$__rv_c" && printf x) || return 1
        __rv_to=${__rv_to%x}; __rv_to=${__rv_to%"$__rv_nl"}
        case "$__rv_to" in /*) __rv_p=$__rv_to/$__rv_rest;; *) __rv_p=$__rv_out/$__rv_to/$__rv_rest;; esac
        __rv_again=1; break
      fi
      __rv_out=$__rv_out/$__rv_c
    done
    [ -n "$__rv_again" ] || break
  done
  printf '%s' "${__rv_out:-/}"
}
for __rv_a in "$@"; do
  case "$__rv_a" in
    =rv-env) __rv_m='env'; continue;; =rv-file) __rv_m='file'; continue;;
    =rv-val) __rv_m='val'; continue;; =rv-ipad) __rv_m='ipad'; continue;; =rv-names) __rv_names=1; continue;;
  esac
  if [ "$__rv_m" = ipad ]; then
    __rv_ipad=$__rv_a
  elif [ "$__rv_m" = env ]; then
    if __rv_environ |
      { while IFS= read -r __rv_l; do case "$__rv_l" in "$__rv_a="*) exit 0;; esac; done; exit 1; }
    then printf 'env 1 %s\n' "$__rv_a"; else printf 'env 0 %s\n' "$__rv_a"; fi
  elif [ "$__rv_m" = val ]; then
    case "$__rv_a" in *=*|'') printf 'val - %s\n' "$__rv_a"; continue;; esac
    __rv_v=$(__rv_environ |
      { while IFS= read -r __rv_l; do case "$__rv_l" in "$__rv_a="*) printf '%sx' "${__rv_l#*=}"; exit 0;; esac; done; exit 1; }) || {
      printf 'val - %s\n' "$__rv_a"; continue; }
    # shellcheck disable=SC2059
    __rv_h=$({ printf "$__rv_ipad"; printf '%s' "${__rv_v%x}" | tr '\001' '\n'; } | sha256sum)
    __rv_v=
    printf 'val %s %s\n' "${__rv_h%% *}" "$__rv_a"
  else
    __rv_i=$((__rv_i + 1))
    __rv_r=$(__rv_resolve "$__rv_a") || { printf 'file - %s\n' "$__rv_i"; continue; }
    if [ ! -f "$__rv_R$__rv_r" ]; then
      printf 'file - %s\n' "$__rv_i"
    elif [ ! -r "$__rv_R$__rv_r" ]; then
      printf 'file ! %s\n' "$__rv_i"
    else
      case "$__rv_r" in *"$__rv_nl"*) ;; *) printf 'real %s %s\n' "$__rv_i" "$__rv_r";; esac
      __rv_h=$(sha256sum < "$__rv_R$__rv_r") || { printf 'file ! %s\n' "$__rv_i"; continue; }
      printf 'file %s %s\n' "${__rv_h%% *}" "$__rv_i"
    fi
  fi
done
# `=rv-names` (zero-config): every name the environment holds, `name NAME` each, never a value. Only
# where one entry is one line (/proc's form: a newline inside a value became \001), so that no
# text of a value can pass for a name
if [ -n "$__rv_names" ]; then
  __rv_environ | while IFS= read -r __rv_l; do
    case "$__rv_l" in [A-Za-z_]*=*) __rv_n=${__rv_l%%=*};; *) continue;; esac
    case "$__rv_n" in *[!A-Za-z0-9_]*) ;; *) printf 'name %s\n' "$__rv_n";; esac
  done
fi
printf 'end\n'
