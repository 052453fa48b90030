"""Where submitted code runs: the jail (chroot, namespaces, uids, seccomp), the
sandbox server inside it, and the judge's side of the pipe to it."""
