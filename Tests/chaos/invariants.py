"""What must hold of a chaos trial's calls, whatever was killed or held, and when. The
calls of every worker share one clock (CLOCK_MONOTONIC, the same in every process), and a
call's effect on the store happens somewhere between its start and its end; a call whose
process was killed may take effect at any time after its start (its request may still be
on the bus). Each check is sound: it names a broken invariant only when no order of the
calls' effects within those bounds explains what was seen."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

LOST = "a persisted session is never lost but by a sign-out or its own invalidation"
RESURRECTED = "restore never returns a session signed out or invalidated before it"
HEALTHY = "no call fails on a healthy store"
# What the trial itself sees, apart from the calls' order.
HANG = "no call hangs, and no process"
CRASH = "no process of the app crashes"
STALE = "a crash followed by a reopen leaves no temporary file in the file store"


@dataclass(frozen=True)
class Call:
    """One library call of one worker. `end` is None when its process was killed during it
    (`outcome` "killed"); `token` is the fingerprint of the session it returned or acted on."""

    worker: int
    op: int
    kind: str
    start: float
    end: float | None
    outcome: str
    token: str | None = None
    error: str | None = None
    reason: str | None = None
    storage: bool = False

    @property
    def effect_until(self) -> float:
        return math.inf if self.end is None else self.end

    def describe(self, origin: float) -> str:
        end = "killed" if self.end is None else f"{self.end - origin:.3f}"
        what = self.outcome if self.error is None else f"{self.error}" + (f" {self.reason}" if self.reason else "")
        token = f" token {self.token}" if self.token else ""
        return f"worker {self.worker} call {self.op} {self.kind} [{self.start - origin:.3f} .. {end}] {what}{token}"


@dataclass(frozen=True)
class Violation:
    invariant: str
    detail: str
    # The calls that ran around it, for the report.
    context: tuple[Call, ...] = ()


def check(calls: list[Call], unhealthy: list[tuple[float, float]], daemon_kills: list[float]) -> list[Violation]:
    """Every violation of the trial's calls. `unhealthy` lists the intervals during which the
    store's service was killed or held (until it served again); `daemon_kills`, when its
    daemon was SIGKILLed: a daemon may lose a change it acknowledged but had not saved, so
    a session lost or back across a kill is no fault of the library's."""
    return [*lost_sessions(calls, daemon_kills), *resurrected_sessions(calls, daemon_kills),
            *failures_when_healthy(calls, unhealthy)]


def lost_sessions(calls: list[Call], daemon_kills: list[float]) -> Iterator[Violation]:
    """A sign-in reported its session persisted; a later restore found something else, and
    no order of the calls that ran in between explains it (`_History.explains`). For each
    session, the first restore to find nothing and the first to find another session are
    judged: a later one's window holds theirs, so it explains at least as much."""
    history = _History(calls)
    for signed_in in (call for call in calls if call.kind == "sign_in" and call.outcome == "ok"):
        assert signed_in.end is not None
        later = [call for call in history.restores if call.start > signed_in.end and call.token != signed_in.token]
        firsts = {restore.token is None: restore for restore in sorted(later, key=lambda call: -call.effect_until)}
        for restore in sorted(firsts.values(), key=lambda call: call.start):
            during = history.during(signed_in, restore)
            if history.explains(signed_in, restore, during) or _killed_within(daemon_kills, signed_in.start,
                                                                               restore.effect_until):
                continue
            found = f"session {restore.token}" if restore.token else "nothing"
            yield Violation(
                LOST,
                f"worker {signed_in.worker}'s sign-in (call {signed_in.op}) persisted session {signed_in.token}; "
                f"worker {restore.worker}'s restore (call {restore.op}), which started after it, found {found}",
                tuple(sorted((signed_in, *during, restore), key=lambda call: call.start)),
            )
            break


class _History:
    """The calls, indexed for `lost_sessions`. Between a sign-in that persisted its session
    (or the last restore that found it) and a later restore that found something else, the
    entry can only have moved from that session to what the restore found through sessions
    written in that window (another sign-in's), and away from one through a sign-out, an
    invalidation of the session then stored, or a restore in a process that had tried to
    invalidate it (a restore retries a failed invalidation)."""

    def __init__(self, calls: list[Call]) -> None:
        self.calls = calls
        self.restores = [call for call in calls if call.kind == "restore" and call.outcome == "ok"]
        self.writers = {call.token: call for call in calls if call.kind == "sign_in" and call.outcome == "ok"}
        self.invalidating = [call for call in calls if call.kind == "invalidate"]

    def during(self, signed_in: Call, restore: Call) -> tuple[Call, ...]:
        # Nothing stores a session twice: a restore that found it read before it went, so
        # what ended before that restore started did not remove it.
        last_seen = max((call.start for call in self.restores
                         if call.token == signed_in.token and call.start < restore.effect_until), default=signed_in.start)
        return tuple(call for call in _during(self.calls, max(signed_in.start, last_seen), restore.effect_until)
                     if call is not signed_in and call is not restore)

    def explains(self, signed_in: Call, restore: Call, during: tuple[Call, ...]) -> bool:
        # A sign-in killed, or failing on the store, in the window may have stored a session
        # nobody was told of (one that failed on its request stored nothing).
        unknown_writer = any(call.kind == "sign_in" and (call.outcome == "killed" or call.storage) for call in during)

        def written(token: str | None) -> bool:
            """Whether `token`'s session may have been stored during the window."""
            if token == signed_in.token:
                return True
            writer = self.writers.get(token)
            return any(writer is call for call in during) if writer is not None else unknown_writer

        if restore.token is not None:
            return written(restore.token)
        for call in during:
            if call.kind == "sign_out" or (call.kind == "invalidate" and written(call.token)):
                return True
            if call.kind == "restore" and any(
                tried.worker == call.worker and tried.start < call.start and written(tried.token)
                for tried in self.invalidating
            ):
                return True
        return False


def resurrected_sessions(calls: list[Call], daemon_kills: list[float]) -> Iterator[Violation]:
    """A restore returned a session whose invalidation had succeeded before it started, or
    that a sign-out had deleted (the session was stored before the sign-out started, and
    nothing stores a session twice)."""
    for restore in (call for call in calls if call.kind == "restore" and call.outcome == "ok" and call.token):
        stored_by = min(
            (call.effect_until for call in calls if call.token == restore.token and call.outcome == "ok"
             and call.kind in ("sign_in", "restore")),
            default=math.inf,
        )
        for ended in calls:
            if ended.outcome != "ok" or ended.effect_until >= restore.start:
                continue
            invalidated = ended.kind == "invalidate" and ended.token == restore.token
            signed_out = ended.kind == "sign_out" and ended.start > stored_by
            if (invalidated or signed_out) and not _killed_within(daemon_kills, ended.start, restore.effect_until):
                what = "invalidation" if invalidated else "sign-out"
                yield Violation(
                    RESURRECTED,
                    f"worker {restore.worker}'s restore (call {restore.op}) returned session {restore.token} after "
                    f"worker {ended.worker}'s {what} (call {ended.op}) had ended",
                    tuple(_during(calls, ended.start, restore.effect_until)),
                )
                break


def failures_when_healthy(calls: list[Call], unhealthy: list[tuple[float, float]]) -> Iterator[Violation]:
    """A call failed on the store while its service served throughout: a restore,
    invalidation or sign-out failing at all, or a sign-in failing on the store."""
    for call in calls:
        if call.outcome != "error" or (call.kind == "sign_in" and not call.storage):
            continue
        assert call.end is not None
        if any(start < call.end and call.start < end for start, end in unhealthy):
            continue
        yield Violation(
            HEALTHY,
            f"worker {call.worker}'s {call.kind} (call {call.op}) failed with {call.error} "
            f"{call.reason or ''} while the store's service ran untouched".rstrip(),
            tuple(_during(calls, call.start, call.end)),
        )


def _killed_within(daemon_kills: list[float], start: float, end: float) -> bool:
    return any(start < kill < end for kill in daemon_kills)


def _during(calls: Iterable[Call], start: float, end: float) -> Iterator[Call]:
    """The calls that ran at some time between `start` and `end`."""
    return (call for call in calls if call.start < end and call.effect_until > start)
