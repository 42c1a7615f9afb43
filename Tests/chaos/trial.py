"""One chaos trial, inside its own environment (scripts/private-keyring.sh run, in a network
namespace of its own): the emulator, the workers of the plan on one environment and one
store, the faults struck at the moments the plan names, then a restore in a new process
once everything serves again, and the invariants checked over every call. Writes each
worker's calls (JSON lines) and stderr, and `result.json`, into FOLDER; exits 1 when an
invariant broke.

    python3 trial.py SEED TRIAL FOLDER
"""

from __future__ import annotations

import heapq
import itertools
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import invariants
from plan import Fault, TrialPlan, WorkerPlan, trial_plan
from services import ENVIRONMENT, Emulator, Keyring
from watch import FolderWatch

APPLICATION = "io.portalhq.auth.Chaos"
# A worker silent for longer than this hangs (in a call, or starting or exiting): far beyond a
# request's timeout plus the longest hold.
HANG_SECONDS = 20.0
# A trial taking longer than this hangs as a whole.
TRIAL_SECONDS = 180.0
# How often the loop looks at the clock when nothing else wakes it.
TICK_SECONDS = 0.01
FINAL = 999   # the number of the process that restores at the end
CRASHING = 900   # the numbers of the file store's processes crashed as they write
CRASH_ATTEMPTS = 5


class Process:
    """A running worker: its process, its calls as they come, and how it ended."""

    def __init__(self, plan: WorkerPlan, popen: subprocess.Popen[bytes], log: Any) -> None:
        self.plan = plan
        self.popen = popen
        self.log = log
        self.pending = b""
        self.started: dict[int, dict[str, Any]] = {}
        self.ended: list[dict[str, Any]] = []
        self.killed_by_trial = False
        self.heard = time.monotonic()   # when it last wrote a line


class Trial:
    def __init__(self, plan: TrialPlan, folder: Path) -> None:
        self.plan = plan
        self.folder = folder
        self.store = folder / "store" / "portal-auth"
        self.store.mkdir(mode=0o700, parents=True)   # the library's mode: watched from the start
        self.origin = time.monotonic()
        self.emulator = Emulator(folder)
        self.keyring = Keyring() if plan.store == "keyring" else None
        self.selector = selectors.DefaultSelector()
        self.processes: list[Process] = []
        self.replacements = list(plan.replacements)
        self.timers: list[tuple[float, int, Callable[[], None]]] = []
        self.order = itertools.count()
        self.triggers = {(fault.worker, fault.call): fault for fault in plan.faults}
        # What the trial did, for the report: (time, what).
        self.events: list[tuple[float, str]] = []
        self.unhealthy: list[tuple[float, float]] = []
        self.daemon_kills: list[float] = []
        self.recovering: list[tuple[str, float]] = []   # (service, since)
        # Hangs, crashes, stale files: what the trial sees apart from the calls' order.
        self.problems: list[invariants.Violation] = []

    # --- workers ---------------------------------------------------------------------------

    def spawn(self, plan: WorkerPlan) -> Process:
        spec = {"number": plan.number, "operations": plan.operations, "email": plan.email, "store": self.plan.store,
                "folder": str(self.store), "api": self.emulator.url, "environment": ENVIRONMENT,
                "application": APPLICATION}
        stderr = (self.folder / f"worker-{plan.number}.stderr").open("wb")
        popen = subprocess.Popen([sys.executable, str(Path(__file__).with_name("worker.py")), json.dumps(spec)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
        stderr.close()
        process = Process(plan, popen, (self.folder / f"worker-{plan.number}.jsonl").open("w"))
        assert popen.stdout is not None
        os.set_blocking(popen.stdout.fileno(), False)
        self.selector.register(popen.stdout, selectors.EVENT_READ, lambda: self.read(process))
        self.processes.append(process)
        return process

    def read(self, process: Process) -> None:
        assert process.popen.stdout is not None
        chunk = process.popen.stdout.read()
        if chunk:
            *lines, process.pending = (process.pending + chunk).split(b"\n")
            for line in lines:
                self.record(process, json.loads(line))
            return
        self.selector.unregister(process.popen.stdout)
        process.popen.stdout.close()
        status = process.popen.wait()
        for record in process.started.values():   # its calls in flight when it died
            process.ended.append({**record, "phase": "end", "outcome": "killed", "start": record["t"], "t": None})
            process.log.write(json.dumps(process.ended[-1]) + "\n")
        process.started.clear()
        process.log.close()
        if status != 0 and not process.killed_by_trial:
            self.problems.append(invariants.Violation(
                invariants.CRASH, f"worker {process.plan.number} exited with status {status} "
                f"(its stderr: {self.folder}/worker-{process.plan.number}.stderr)"))

    def record(self, process: Process, record: dict[str, Any]) -> None:
        process.heard = time.monotonic()
        process.log.write(json.dumps(record) + "\n")
        if record["phase"] == "start":
            process.started[record["op"]] = record
        elif record["phase"] == "end":
            process.started.pop(record["op"], None)
            process.ended.append(record)
        fault = self.triggers.pop((process.plan.number, record["op"]), None) if record["phase"] != "end" else None
        if fault is not None:
            self.after(fault.delay, lambda: self.strike(fault, process))

    # --- faults ----------------------------------------------------------------------------

    def after(self, seconds: float, action: Callable[[], None]) -> None:
        heapq.heappush(self.timers, (time.monotonic() + seconds, next(self.order), action))

    def note(self, what: str) -> None:
        self.events.append((time.monotonic(), what))

    def strike(self, fault: Fault, process: Process) -> None:
        if fault.target == "worker":
            if process.popen.poll() is None:
                process.killed_by_trial = True
                process.popen.kill()
                self.note(f"worker {process.plan.number} SIGKILLed")
                if self.replacements:   # the app started again
                    self.spawn(self.replacements.pop(0))
            return
        service = self.emulator if fault.target == "emulator" else self.keyring
        assert service is not None
        if any(name == fault.target for name, _ in self.recovering):
            self.note(f"{fault.target} {fault.action} left out: it is down already")
            return
        since = time.monotonic()
        if fault.action == "kill":
            if not service.kill():
                return
            self.note(f"{fault.target} SIGKILLed")
            if service is self.keyring:
                self.daemon_kills.append(since)
            self.recovering.append((fault.target, since))
            self.after(fault.recovery, lambda: self.recover(service.restart, f"{fault.target} starting again"))
        else:
            if not service.hold():
                return
            self.note(f"{fault.target} SIGSTOPped")
            self.recovering.append((fault.target, since))
            self.after(fault.recovery, lambda: self.recover(service.release, f"{fault.target} SIGCONTed"))

    def recover(self, action: Callable[[], None], what: str) -> None:
        action()
        self.note(what)

    def check_recovered(self) -> None:
        for name, since in list(self.recovering):
            service = self.emulator if name == "emulator" else self.keyring
            assert service is not None
            if not service.held and service.recovered():
                self.recovering.remove((name, since))
                self.note(f"{name} serves again")
                if name == "keyring":
                    self.unhealthy.append((since, time.monotonic()))

    def check_hangs(self) -> None:
        now = time.monotonic()
        for process in self.processes:
            if now - process.heard <= HANG_SECONDS or process.killed_by_trial or process.popen.poll() is not None:
                continue
            doing = ", ".join(f"its {record['kind']} (call {record['op']})" for record in process.started.values())
            self.problems.append(invariants.Violation(
                invariants.HANG, f"worker {process.plan.number} said nothing for {HANG_SECONDS:.0f} s, "
                f"in {doing or 'no call (starting or exiting)'} (its threads' stacks: "
                f"{self.folder}/worker-{process.plan.number}.stderr)"))
            process.killed_by_trial = True
            process.popen.send_signal(signal.SIGUSR1)
            self.after(1.0, process.popen.kill)

    # --- the trial -------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        for plan in self.plan.workers:
            self.spawn(plan)
        self.pump(lambda: bool(self.selector.get_map() or self.timers or self.recovering))
        if self.plan.store == "file":
            self.crash_mid_write()
        # A new process of the app restores once every service serves again.
        self.spawn(WorkerPlan(FINAL, ("restore",), "final@example.com"))
        self.pump(lambda: bool(self.selector.get_map()))
        self.check_store_folder()
        for process in self.processes:
            if process.popen.poll() is None:   # only after a hang
                process.popen.kill()
        calls = [call for process in self.processes for call in calls_of(process)]
        violations = [*invariants.check(calls, self.unhealthy, self.daemon_kills), *self.problems]
        self.emulator.close()
        return self.result(calls, violations)

    def pump(self, busy: Callable[[], bool]) -> None:
        """Reads the workers, strikes the faults and restarts the services when due, and
        watches for hangs, while `busy()`."""
        deadline = self.origin + TRIAL_SECONDS
        while busy():
            if time.monotonic() > deadline:
                self.problems.append(invariants.Violation(invariants.HANG, f"the trial did not end in {TRIAL_SECONDS:.0f} s"))
                for process in self.processes:
                    process.popen.kill()
                return
            wait = TICK_SECONDS if not self.timers else max(0.0, min(TICK_SECONDS, self.timers[0][0] - time.monotonic()))
            for key, _ in self.selector.select(wait):
                key.data()
            while self.timers and self.timers[0][0] <= time.monotonic():
                heapq.heappop(self.timers)[2]()
            self.check_recovered()
            self.check_hangs()

    def crash_mid_write(self) -> None:
        """The file store's crash: a new process signs in and is SIGKILLed the moment it has
        written its session to a temporary file in the folder (before the file is flushed
        and renamed over the entry), up to CRASH_ATTEMPTS sign-ins until one is caught."""
        watch = FolderWatch(str(self.store))
        try:
            for attempt in range(CRASH_ATTEMPTS):
                writer = self.spawn(WorkerPlan(CRASHING + attempt, ("sign_in",), "crash@example.com"))

                def written() -> None:
                    if any(name.endswith(".tmp") for name in watch.written()) and writer.popen.poll() is None:
                        writer.killed_by_trial = True
                        writer.popen.kill()
                        self.note(f"worker {writer.plan.number} SIGKILLed as it wrote its session")

                self.selector.register(watch, selectors.EVENT_READ, written)
                self.pump(lambda: writer.popen.stdout is not None and not writer.popen.stdout.closed)
                self.selector.unregister(watch)
                if writer.killed_by_trial:
                    return
            self.note(f"no sign-in of {CRASH_ATTEMPTS} was caught writing a temporary file")
        finally:
            watch.close()

    def check_store_folder(self) -> None:
        """After a crash and a reopen, no temporary file is left."""
        if self.plan.store != "file" or not self.store.exists():
            return
        for path in sorted(self.store.iterdir()):
            if path.name.endswith(".tmp"):
                self.problems.append(invariants.Violation(
                    invariants.STALE, f"{path.name} ({path.stat().st_size} bytes) is left in the file store's folder "
                    f"after every worker ended and a new process restored"))

    def result(self, calls: list[invariants.Call], violations: list[invariants.Violation]) -> dict[str, Any]:
        origin = self.origin
        return {
            "plan": self.plan.describe(),
            "calls": len(calls),
            "killed_calls": sum(call.outcome == "killed" for call in calls),
            "events": [f"{when - origin:.3f} {what}" for when, what in self.events],
            "violations": [{"invariant": v.invariant, "detail": v.detail,
                            "context": [call.describe(origin) for call in v.context]} for v in violations],
        }


def calls_of(process: Process) -> list[invariants.Call]:
    return [
        invariants.Call(
            worker=process.plan.number, op=record["op"], kind=record["kind"], start=record["start"], end=record["t"],
            outcome=record["outcome"], token=record.get("token"), error=record.get("error"),
            reason=record.get("reason"), storage=record.get("storage", False),
        )
        for record in process.ended
    ]


def main() -> int:
    seed, trial, folder = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    plan = trial_plan(seed, trial)
    result = Trial(plan, folder).run()
    (folder / "result.json").write_text(json.dumps(result, indent=1))
    return 1 if result["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
