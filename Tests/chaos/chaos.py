"""The fault-injection stage: seeded trials of several processes of an app signing in,
restoring, invalidating and signing out on one environment and one store (the keyring and
the file store in turn), while processes are SIGKILLed at moments of their calls and the
keyring daemon and the emulator are killed or held (docs/testing.md, "Faults").

    python3 Tests/chaos/chaos.py [--seed N] [--trials N] [--trial I]
    python3 Tests/chaos/chaos.py --seed N --trial I [--repeat N]
    (or CHAOS_SEED, CHAOS_TRIALS, CHAOS_TRIAL, CHAOS_REPEAT in the environment: make test-chaos,
    make chaos)

Each trial runs in an environment of its own: a network namespace (`unshare --net`, so
that the emulator starts again on its port), a private D-Bus session and gnome-keyring
(scripts/private-keyring.sh), a folder for the file store. The seed (random unless given)
is printed first; a failure prints it again with the command that runs the failing trial
alone (a few times: a race is not hit on every run), and keeps the trial's logs in
.build/chaos. Ends with "chaos: N passed, M failed".
The binding and the emulator must be importable by this Python (an install, or PYTHONPATH).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from plan import trial_plan
from trial import TRIAL_SECONDS

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
KEPT = ROOT / ".build" / "chaos"


def in_namespace(command: list[str]) -> list[str]:
    """`command` in a network namespace of its own, its loopback up (a user namespace maps
    root when not run as root)."""
    unshare = ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "--map-root-user", "--net"]
    return [*unshare, "--", "sh", "-c", 'ip link set lo up && exec "$@"', "chaos-trial", *command]


def run_trial(seed: int, trial: int, folder: Path) -> tuple[bool, dict[str, Any] | None, float]:
    """Runs one trial in its environment: whether it passed, its result, its seconds."""
    started = time.monotonic()
    command = in_namespace([str(ROOT / "scripts" / "private-keyring.sh"), "run", sys.executable,
                            str(HERE / "trial.py"), str(seed), str(trial), str(folder)])
    with (folder / "trial.log").open("wb") as log:
        try:
            status = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    timeout=TRIAL_SECONDS + 60).returncode
        except subprocess.TimeoutExpired:
            status = None
    result_file = folder / "result.json"
    result = json.loads(result_file.read_text()) if result_file.exists() else None
    return status == 0 and result is not None, result, time.monotonic() - started


def broken(result: dict[str, Any] | None) -> list[str]:
    """The invariants a trial broke, each once: the calls' and the trial's own."""
    if result is None:
        return ["the trial ends with a result"]
    return list(dict.fromkeys(violation["invariant"] for violation in result["violations"]))


def report(result: dict[str, Any] | None, folder: Path) -> None:
    """What broke: each invariant once with its first instance and the calls around it."""
    if result is None:
        log = (folder / "trial.log").read_text(errors="replace")
        print(f"  the trial ended with no result; its output:\n{log[-4000:]}")
        return
    for invariant in dict.fromkeys(violation["invariant"] for violation in result["violations"]):
        instances = [violation for violation in result["violations"] if violation["invariant"] == invariant]
        print(f"  BROKEN: {invariant} ({len(instances)} time(s)); the first:\n    {instances[0]['detail']}")
        if instances[0]["context"]:
            print("    the calls around it (seconds since the trial began):")
        for line in instances[0]["context"][:16]:
            print(f"      {line}")
    print("  what the trial did: " + "; ".join(result["events"]))


def _environment(name: str) -> int | None:
    """A number from the environment (make's CHAOS_SEED=...), None when unset or empty."""
    value = os.environ.get(name, "")
    return int(value) if value else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=_environment("CHAOS_SEED"),
                        help="the run's seed (default: $CHAOS_SEED, else a random one, printed)")
    parser.add_argument("--trials", type=int, default=_environment("CHAOS_TRIALS") or 10,
                        help="how many trials (default: $CHAOS_TRIALS, else 10)")
    parser.add_argument("--trial", type=int, default=_environment("CHAOS_TRIAL"),
                        help="run only this trial of the seed's run, a failure's reproduction (default: $CHAOS_TRIAL)")
    parser.add_argument("--repeat", type=int, default=_environment("CHAOS_REPEAT") or 1,
                        help="with --trial: how many times to run it (default: $CHAOS_REPEAT, else 1)")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    trials = [args.trial] * max(1, args.repeat) if args.trial is not None else list(range(args.trials))
    print(f"chaos: seed {seed}, {len(trials)} trial(s)", flush=True)
    failed: list[int] = []
    tally: dict[str, int] = {}   # how many trials broke each invariant
    with tempfile.TemporaryDirectory(prefix="portal-auth-chaos-") as work:
        for run, trial in enumerate(trials):
            name = f"trial-{trial}" if args.trial is None or len(trials) == 1 else f"trial-{trial}-run-{run}"
            folder = Path(work) / name
            folder.mkdir()
            passed, result, seconds = run_trial(seed, trial, folder)
            plan = trial_plan(seed, trial)
            counts = "" if result is None else f"{result['calls']} calls ({result['killed_calls']} killed mid-call), "
            print(f"trial {trial}: {plan.describe()}: {counts}{seconds:.1f} s: {'ok' if passed else 'FAILED'}", flush=True)
            if passed:
                continue
            failed.append(trial)
            kept = KEPT / f"seed-{seed}" / name
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(folder, kept)
            for invariant in broken(result):
                tally[invariant] = tally.get(invariant, 0) + 1
            report(result, folder)
            print(f"  its logs (each worker's calls, JSON lines): {kept}")
            print(f"  reproduce: make chaos CHAOS_SEED={seed} CHAOS_TRIAL={trial} CHAOS_REPEAT=5   (seed {seed})",
                  flush=True)
    for invariant, count in tally.items():
        print(f"chaos: {count} of {len(trials)} trial(s) broke: {invariant}")
    if failed:
        print(f"chaos: seed {seed}: trial(s) {', '.join(map(str, failed))} failed. The seed makes each trial's plan "
              f"again; a race is hit again only as often as it was hit at all (the scheduler is not seeded), so run "
              f"the trial a few times: make chaos CHAOS_SEED={seed} CHAOS_TRIAL=<trial> CHAOS_REPEAT=5")
    print(f"chaos: {len(trials) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
