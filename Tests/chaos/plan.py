"""A trial's plan, drawn from the run's seed and the trial's number alone: the store, the
workers and the calls each makes, and the faults, each tied to a moment of a worker's call
(its Nth call starting, then a delay). The same seed and trial give the same plan; what the
operating system's scheduler does with it cannot be seeded."""

from __future__ import annotations

import random
from dataclasses import dataclass

# A worker's calls, as weights of the mix: sign-ins and restores racing compare-and-deletes
# of tokens that may be old by then, and a few sign-outs. Some calls come in the pairs apps
# make: a restore right after a sign-in (another process of the app starting), which sees a
# lost session before anything else may explain it; an invalidation right after a restore
# (the user signs out of the session the app restored), while other processes sign in.
OPERATIONS = {"sign_in": 8, "restore": 5, "invalidate": 3, "sign_out": 1}
FOLLOWERS = {"sign_in": ("restore", 0.7), "restore": ("invalidate", 0.5)}
WATCHER_RESTORES = 250
EMAILS = ("ada@example.com", "grace@example.com", "edsger@example.com")
STORES = ("keyring", "file")


@dataclass(frozen=True)
class WorkerPlan:
    number: int
    operations: tuple[str, ...]
    # Whose sign-ins: the worker's own user, so that end_user_ids tell workers apart.
    email: str


@dataclass(frozen=True)
class Fault:
    """`target` is "worker" (SIGKILLed, then a new process of the app starts in its place),
    "keyring" (its daemon) or "emulator"; `action` is "kill" (then restarted after
    `recovery` seconds) or "hold" (SIGSTOP, then SIGCONT after `recovery` seconds). It
    strikes `delay` seconds after worker `worker` starts its call number `call`."""

    target: str
    action: str
    worker: int
    call: int
    delay: float
    recovery: float


@dataclass(frozen=True)
class TrialPlan:
    seed: int
    trial: int
    store: str
    workers: tuple[WorkerPlan, ...]
    # The processes that start in place of killed ones, in the order of the kills.
    replacements: tuple[WorkerPlan, ...]
    faults: tuple[Fault, ...]

    def describe(self) -> str:
        kinds = ", ".join(f"{fault.target} {fault.action}" for fault in self.faults)
        return f"{self.store} store, {len(self.workers)} workers, faults: {kinds}"


def trial_plan(seed: int, trial: int) -> TrialPlan:
    """The plan of trial `trial` of the run of `seed`; trials alternate the two stores."""
    rng = random.Random(f"portal-auth chaos {seed} {trial}")
    store = STORES[trial % len(STORES)]
    count = rng.randint(6, 8)
    # The first worker only restores, again and again, as app processes starting do: a lost
    # session shows before anything else may explain it.
    watcher = WorkerPlan(0, ("restore",) * WATCHER_RESTORES, EMAILS[0])
    workers = (watcher, *(_worker(rng, number, rng.randint(30, 45)) for number in range(1, count)))
    faults: list[Fault] = []
    for victim in rng.sample(range(1, count), rng.randint(2, 4)):
        faults.append(_fault(rng, "worker", "kill", workers[victim], prefer="sign_in", recovery=0.0))
    services = ["emulator"] + (["keyring", "keyring"] if store == "keyring" else [])
    for target in services:
        if target == "keyring" or rng.random() < 0.6:
            action = rng.choice(("kill", "hold"))
            recovery = rng.uniform(0.05, 0.8) if action == "kill" else rng.uniform(0.1, 1.5)
            faults.append(_fault(rng, target, action, rng.choice(workers), prefer=None, recovery=recovery))
    replacements = tuple(
        _worker(rng, count + index, rng.randint(6, 12), restore_first=True)
        for index in range(sum(fault.target == "worker" for fault in faults))
    )
    return TrialPlan(seed, trial, store, workers, replacements, tuple(faults))


def _worker(rng: random.Random, number: int, length: int, restore_first: bool = False) -> WorkerPlan:
    kinds, weights = zip(*OPERATIONS.items())
    operations: list[str] = []
    while len(operations) < length:
        operations += rng.choices(kinds, weights)
        follower, chance = FOLLOWERS.get(operations[-1], ("", 0.0))
        if rng.random() < chance:
            operations.append(follower)
    if restore_first:   # an app started again restores first, as apps do
        operations[0] = "restore"
    return WorkerPlan(number, tuple(operations), EMAILS[number % len(EMAILS)])


def _fault(rng: random.Random, target: str, action: str, worker: WorkerPlan, prefer: str | None,
           recovery: float) -> Fault:
    """A fault at one of `worker`'s calls, one of its `prefer` calls when it has some."""
    calls = [index for index, kind in enumerate(worker.operations) if prefer in (None, kind)]
    call = rng.choice(calls or range(len(worker.operations)))
    return Fault(target, action, worker.number, call, rng.uniform(0.0, 0.04), round(recovery, 3))
