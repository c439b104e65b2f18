"""Run a command and print its own peak RSS in KiB on the last line of stderr.

`ru_maxrss` of a child started by a big process is not the child's own: vfork()/posix_spawn run
the child in the parent's memory until it execs, and the kernel carries that memory's high-water
mark across exec. The bench's process holds kubesim (1,000 pods' objects), so measured directly
the child "peaks" at the bench's size. This launcher is small, so its child's mark is the child's.
"""

from __future__ import annotations

import os
import sys


def main() -> int:
    argv = sys.argv[1:]
    pid = os.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    os.write(2, f"\npeak-rss-kib {usage.ru_maxrss}\n".encode())
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main())
