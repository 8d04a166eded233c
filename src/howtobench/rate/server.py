"""Run the rating app until Ctrl-C or SIGTERM; say where it listens and who can reach it.

Binds 127.0.0.1 by default: only people on this machine can rate. Any other address is announced with a
warning, since sign-in has no password. Port 0 picks a free port; the printed URL names the real one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from howtobench.listen import listening
from howtobench.rate.app import build_app
from howtobench.rate.study import Study

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str) -> str | None:
    """What to tell the user when the app is reachable from other machines (None on loopback)."""
    if is_loopback(host):
        return None
    return (f"warning: listening on {host}, not 127.0.0.1: anyone who can reach this machine can open the app and "
            "sign in under any rater's name (there are no passwords)")


async def serve(study: Study, host: str, port: int, say: Callable[[str], None]) -> None:
    """Serve until cancelled or signalled; every rating is committed as it arrives, so stopping loses nothing."""
    async with listening(build_app(study), host, port) as (url, stop):
        say(f"rating app for study {study.folder}: {url}/")
        say("stop it with Ctrl-C; every rating is saved the moment it is made")
        await stop.wait()
