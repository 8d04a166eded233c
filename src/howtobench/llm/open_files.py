"""Room among the process's open files for the connections a client may open at once.

Why: every call in flight holds a connection, and a connection is an open file. Auto concurrency may reach
`max_concurrency` calls per base URL (1,024 by default: vLLM's own batch on a large GPU), and many machines start a
process with a soft limit of 1,024 open files (`ulimit -n`): past it every new connection fails with "Too many open
files". As vLLM and Ray do at start, the soft limit is raised toward the hard one (which a process may do without
privileges); where even the hard limit leaves no room, the cap is lowered to what fits, and that is said once.
"""

from __future__ import annotations

import logging

try:
    import resource
except ImportError:  # Windows: no such limit to manage
    resource = None  # type: ignore[assignment]

RESERVE = 256  # files beside the connections: the call log, outputs, the data, a server's own sockets
log = logging.getLogger(__name__)
_wanted_so_far = 0  # connections of every auto endpoint opened in this process (a panel has several)


def connections_that_fit(wanted: int) -> int:
    """The connections, at most `wanted`, that fit under this process's open-file limit; its soft limit is raised
    first (toward the hard one) so that this endpoint's and the earlier ones' fit beside RESERVE other files."""
    global _wanted_so_far
    if resource is None:
        return wanted
    _wanted_so_far += wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = _wanted_so_far + RESERVE
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError) as exc:  # a container may refuse even that: the cap then fits the soft limit
            log.debug("could not raise the open-file limit to %d: %s", target, exc)
    if soft == resource.RLIM_INFINITY or soft - RESERVE >= wanted:
        return wanted
    fits = max(1, soft - RESERVE)
    log.warning("warning: at most %d calls at once here, not %d: the open-file limit is %d (raise it with "
                "`ulimit -n`, or cap auto concurrency with --concurrency auto:N)", fits, wanted, soft)
    return fits
