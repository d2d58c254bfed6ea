"""This process's open-files limit, raised towards what it serves (macOS
starts at 256, some Linux shells at 1024): each connection is a file, and a
broker out of files takes no board at all (Mosquitto at 1,024 held 1,017
sockets of one host's flood and then let no client in: docs/operations.md,
"Run a hall securely").  A child process inherits it."""

from __future__ import annotations

BROKER_FILES = 65536          # what a broker's process asks for (a flood must hold that many sockets)


def room_for(want: int) -> int | None:
    """Raise the soft open-files limit towards want (never above the hard
    limit, never down); the soft limit now (None: no such limit here,
    Windows)."""
    try:
        import resource
    except ImportError:                   # not on Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):     # macOS refuses more than kern.maxfilesperproc
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(target, 10240), hard))
            except (ValueError, OSError):
                pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
