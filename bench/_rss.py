"""Peak RSS of the running process, for benchmark children (no icefloe import: PyIceberg's
environment runs it too)."""

from __future__ import annotations

import resource


def peak_rss_mb() -> float:
    """This process's peak RSS in MiB. On Linux, VmHWM: ``ru_maxrss`` survives exec, so a child
    started from a large parent would report the parent's peak."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
