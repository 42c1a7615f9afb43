"""Turns the contenders' result lines into the tables (printed) and bench/RESULTS.md: the
machine's description, every figure, ratios against the C floor and the Python peer, the
completion models side by side, the calls on one CPU, the GNOME contenders on a GMainLoop, the
issues' targets as met or missed, and the analysis of bench/analysis.md.

    python3 bench/report.py RESULTS.tsv LIBRARY OUT.md
    python3 bench/report.py --import RESULTS.tsv     the import figure beside the peer's, one line"""

import os
import platform
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

CONTENDERS = ("c-library", "c-queue", "py-blocking", "py-async", "py-peer", "c-floor")
METRICS = (
    ("load_ms", "load: dlopen/import to first client (ms, median of 15 processes)"),
    ("load_rss_mb", "load: RSS growth (MB)"),
    ("methods_median_ms", "get_methods, median (ms)"),
    ("methods_p99_ms", "get_methods, p99 (ms)"),
    ("grant_median_ms", "grant exchange, median (ms)"),
    ("grant_p99_ms", "grant exchange, p99 (ms)"),
    ("methods_instructions", "get_methods, instructions per call (callgrind, the whole process)"),
    ("grant_instructions", "grant exchange, instructions per call (callgrind, the whole process)"),
    ("no_request_median_ms", "a call that sends nothing (a foreign URL), median (ms)"),
    ("concurrent_wall_ms", "1,000 concurrent get_methods, wall (ms)"),
    ("concurrent_threads", "threads created for them"),
    ("persist_median_ms", "exchange + keyring persist, median (ms)"),
    ("restore_median_ms", "keyring restore, median (ms)"),
    ("hostile_redirect_max_ms", "200,000-char redirect URL, max of 20 (ms)"),
    ("hostile_jwt_max_ms", "200,000-char userJwt, max of 20 (ms)"),
    ("hostile_otpauth_max_ms", "200,000-char otpauth link, max of 20 (ms)"),
    ("soak_rss_warm_mb", "soak of 100,000 calls: RSS after the first 10,000 (MB)"),
    ("soak_rss_end_mb", "soak: RSS at the end (MB)"),
    ("soak_call_ms", "soak: mean per call (ms)"),
)

# The browser's wait for the loopback listener under another user's connect flood (issue 46,
# bench/flood_bench.py): the contender "listener".
FLOOD_METRICS = (
    ("flood_browser_wait_median_ms", "browser's wait during the flood, median"),
    ("flood_browser_wait_max_ms", "browser's wait during the flood, max"),
)

# The completion models side by side (issue 18): (label, the old model's contender, the
# new one's), in the rows of `models`.
MODELS = (
    ("C", "c-library", "c-queue"),
    ("Python blocking", "py-blocking-thread", "py-blocking"),
    ("Python asyncio", "py-async-thread", "py-async"),
)
# The GNOME contenders on a GMainLoop (issue 20), one row each (bench/gnome.c runs them), and
# the peer the others are compared with.
GNOME_CONTENDERS = (
    ("gnome-library", "libportalauth, its completion queue watched by g_unix_fd_add"),
    ("gnome-glib", "portal-auth-glib: PortalAuthClient's _async/_finish calls"),
    ("gnome-peer", "libsoup 3 + json-glib + libsecret"),
)
GNOME_PEER = "gnome-peer"
GNOME_METRICS = (
    ("methods_median_ms", "get_methods, median (ms)"),
    ("methods_p99_ms", "get_methods, p99 (ms)"),
    ("persist_median_ms", "grant exchange + keyring persist, median (ms)"),
    ("persist_p99_ms", "grant exchange + keyring persist, p99 (ms)"),
    ("restore_median_ms", "keyring restore, median (ms)"),
    ("restore_p99_ms", "keyring restore, p99 (ms)"),
    ("rss_end_mb", "RSS at the end (MB)"),
    ("persist_calls", "Secret Service calls per exchange + persist"),
    ("restore_calls", "Secret Service calls per restore"),
)

# The calls mode again on one CPU (run.sh's one-cpu mode: figures named one_cpu_*), and the
# contenders it has.
ONE_CPU = "one_cpu_"
ONE_CPU_CONTENDERS = ("c-library", "c-queue", "c-floor", "c-queue-in-python", "py-blocking", "py-async", "py-peer")

# Python's contenders and the C one of the same model, for the per-call overhead. The queue's
# is c-queue-in-python: the same calls from C in the Python contenders' own process and
# chunks, under the same machine load (c-queue's own process is shown beside it). The old
# model's has no such contender: c-library, from its own process.
SAME_MODEL_C = {
    "py-blocking-thread": "c-library", "py-async-thread": "c-library",
    "py-blocking": "c-queue-in-python", "py-async": "c-queue-in-python",
}


# Each figure's values in the order the rounds made them: the k-th of two contenders came
# from the same round.
Rounds = dict[tuple[str, str], list[float]]


def read_rounds(path: str) -> Rounds:
    samples: Rounds = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        contender, metric, value = line.split("\t")
        samples[(contender, metric)].append(float(value))
    return samples


def medians(rounds: Rounds) -> dict[tuple[str, str], float]:
    return {key: statistics.median(values) for key, values in rounds.items()}


def paired(rounds: Rounds, a: str, b: str, metric: str, combine: Callable[[float, float], float]) -> float | None:
    """The median, over the rounds, of combine(a's figure, b's figure) within each round. The
    contenders of a round run one after another, most of them interleaved in one process,
    under the machine's state of that moment, which on this VM swings by 2-3x from one round
    to the next (bench/analysis.md): a comparison holds within a round, not between the
    medians of different rounds. None when either lacks the figure, or their rounds differ
    in number, or no round gives a value."""
    xs, ys = rounds.get((a, metric)), rounds.get((b, metric))
    if not xs or not ys or len(xs) != len(ys):
        return None
    values = [value for value in (combine(x, y) for x, y in zip(xs, ys)) if value == value]  # NaN: no figure
    return statistics.median(values) if values else None


def times(rounds: Rounds, a: str, b: str, metric: str) -> float | None:
    """a's figure over b's, round by round (the peer ÷ a contender, a contender ÷ the floor);
    a round where b's is 0 has no ratio."""
    return paired(rounds, a, b, metric, lambda x, y: x / y if y else float("nan"))


def times_checked(rounds: Rounds, a: str, b: str, metric: str) -> float:
    """times(), NaN where it has no value: a target's comparison with NaN fails."""
    x = times(rounds, a, b, metric)
    return float("nan") if x is None else x


def overhead(rounds: Rounds, contender: str, metric: str, c_contender: str | None = None) -> float | None:
    """A Python contender's median over the C one's of the same model (or `c_contender`'s), in
    µs, round by round."""
    c = c_contender or SAME_MODEL_C[contender]
    return paired(rounds, contender, c, f"{metric}_median_ms", lambda python, c_ms: (python - c_ms) * 1e3)


def fmt(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def ratio(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"


def command(*args: str) -> str:
    try:
        done = subprocess.run(args, capture_output=True, text=True, check=True)
        return (done.stdout or done.stderr).strip()  # nginx -v answers on stderr
    except (OSError, subprocess.CalledProcessError):
        return "?"


def debug_information(library: str) -> str:
    """The separate debug information `make install` lays beside the library (lib/.debug)."""
    installed = os.path.realpath(library)
    return os.path.join(os.path.dirname(installed), ".debug", os.path.basename(installed) + ".debug")


def machine(library: str) -> list[str]:
    cpu = next((line.split(":", 1)[1].strip() for line in command("lscpu").splitlines() if line.startswith("Model name")), "?")
    memory = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")), "0")
    debian = Path("/etc/debian_version").read_text().strip() if Path("/etc/debian_version").exists() else "?"
    return [
        f"- CPU: {cpu}, {os.cpu_count()} logical CPUs (shared with other work)",
        f"- memory: {int(memory) / 1024 / 1024:.1f} GiB",
        f"- system: {platform.system()} {platform.release()} {platform.machine()}, Debian {debian}",
        f"- {command('swift', '--version').splitlines()[0] if command('swift', '--version') != '?' else 'swift ?'}",
        f"- {command('nginx', '-v')} (Debian's), one worker, keep-alive; Python {platform.python_version()}",
        f"- {os.path.basename(library)}: {os.path.getsize(library) / 1e6:.1f} MB as installed, stripped (release, static Swift"
        f" runtime); its debug information apart, {os.path.getsize(debug_information(library)) / 1e6:.1f} MB",
    ]


def targets(r: dict[tuple[str, str], float], rounds: Rounds) -> list[tuple[str, str, bool]]:
    def get(contender: str, metric: str) -> float:
        return r.get((contender, metric), float("nan"))

    checks = []
    for contender, what in (("c-library", "dlopen"), ("py-library", "import")):
        ms, mb = get(contender, "load_ms"), get(contender, "load_rss_mb")
        checks.append((f"load ({what}) under 5 ms and 8 MB", f"{ms:.1f} ms, {mb:.1f} MB", ms < 5 and mb < 8))
    for prefix, where in conditions(rounds):
        for metric in ("methods", "grant"):
            x = times_checked(rounds, "c-library", "c-floor", f"{prefix}{metric}_median_ms")
            checks.append((f"{where}{metric}: C call within 1.2× of the C floor", f"{x:.2f}×", x <= 1.2))
            for contender in ("py-blocking", "py-async"):
                y = times_checked(rounds, "py-peer", contender, f"{prefix}{metric}_median_ms")
                checks.append((f"{where}{metric}: {contender} at least 3× faster than the Python peer", f"{y:.2f}×", y >= 3))
    for contender in ("c-library", "py-async"):
        n = get(contender, "concurrent_threads")
        checks.append((f"1,000 concurrent calls on at most 3 library threads ({contender})", f"{n:.0f}", n <= 3))
    for metric in ("hostile_redirect_max_ms", "hostile_jwt_max_ms", "hostile_otpauth_max_ms"):
        ms = get("c-library", metric)
        checks.append((f"hostile input under 5 ms: {metric.split('_')[1]}", f"{ms:.2f} ms", ms < 5))
    return checks


def models(r: dict[tuple[str, str], float], rounds: Rounds) -> list[list[str]]:
    """The rows of the completion models' table: figure, library thread, completion queue."""
    rows: list[list[str]] = []

    def row(label: str, old: float | None, new: float | None, unit: str = "") -> None:
        cells = [fmt(value) + unit if value is not None else "—" for value in (old, new)]
        rows.append([label, *cells])

    for label, old, new in MODELS:
        for metric, what in (("methods", "get_methods"), ("grant", "grant exchange")):
            for quantile_name in ("median", "p99"):
                key = f"{metric}_{quantile_name}_ms"
                row(f"{label}: {what}, {quantile_name} (ms)", r.get((old, key)), r.get((new, key)))
                if label == "C":
                    row(f"C: {what}, {quantile_name}, inside the Python process (ms)", None, r.get(("c-queue-in-python", key)))
                    continue
                rows.append([f"{label}: {what}, {quantile_name}: the peer ÷ this",
                             *(ratio(times(rounds, "py-peer", contender, key)) for contender in (old, new))])
            if label == "C":
                rows.append([f"C: {what}, median ÷ the libcurl floor",
                             *(ratio(times(rounds, contender, "c-floor", f"{metric}_median_ms")) for contender in (old, new))])
            else:
                rows.append([f"{label}: {what}, over the same call from C: c-library in its own process (old),"
                             " c-queue-in-python in the same one (new) (µs)",
                             *(overhead_cell(overhead(rounds, contender, metric)) for contender in (old, new))])
                rows.append([f"{label}: {what}, over c-queue, C in a process of its own (µs)",
                             "—", overhead_cell(overhead(rounds, new, metric, "c-queue"))])
        if label == "C":
            row("C: a call that sends nothing, median (ms)", r.get((old, "no_request_median_ms")), r.get((new, "no_request_median_ms")))
        for key, what in (("concurrent_wall_ms", "1,000 concurrent get_methods, wall (ms)"), ("concurrent_threads", "threads created for them")):
            if (old, key) in r or (new, key) in r:
                row(f"{label}: {what}", r.get((old, key)), r.get((new, key)))
        warm = [r.get((contender, "soak_rss_warm_mb")) for contender in (old, new)]
        end = [r.get((contender, "soak_rss_end_mb")) for contender in (old, new)]
        row(f"{label}: soak of 100,000 calls, RSS after 10,000 (MB)", *warm)
        row(f"{label}: soak, RSS at the end (MB)", *end)
        row(f"{label}: soak, growth (MB)", *[growth(r, contender) for contender in (old, new)])
    return rows


def gnome(r: dict[tuple[str, str], float], rounds: Rounds) -> tuple[list[str], list[list[str]]]:
    """The GNOME table: a row per contender, each figure, and the peer's medians over its own
    (run by run)."""
    median_metrics = [metric for metric, _ in GNOME_METRICS if metric.endswith("_median_ms")]
    header = ["contender", *(label for _, label in GNOME_METRICS), "the peer ÷ this, medians (get_methods, persist, restore)"]
    rows = []
    for contender, label in GNOME_CONTENDERS:
        ratios = " / ".join(ratio(times(rounds, GNOME_PEER, contender, metric)) for metric in median_metrics)
        rows.append([f"`{contender}`: {label}", *(fmt(r.get((contender, metric))) for metric, _ in GNOME_METRICS), ratios])
    return header, rows


def conditions(rounds: Rounds) -> list[tuple[str, str]]:
    """(metric prefix, label) of each condition the calls ran under: every CPU, and one CPU
    when the results have its figures (older ones do not)."""
    measured = [("", "")]
    if any(metric.startswith(ONE_CPU) for _, metric in rounds):
        measured.append((ONE_CPU, "on one CPU: "))
    return measured


def one_cpu(r: dict[tuple[str, str], float], rounds: Rounds) -> tuple[list[str], list[list[str]]]:
    """The one-CPU table: a row per contender, its figures there, its medians over the floor's
    there, and the peer's over its own there and on every CPU (the calls mode), round by round."""
    figures = [(f"{metric}_{quantile_name}_ms", f"{what}, {quantile_name} (ms)")
               for metric, what in (("methods", "get_methods"), ("grant", "grant exchange"))
               for quantile_name in ("median", "p99")]
    header = ["contender", *(label for _, label in figures), "this ÷ the libcurl floor, medians (get_methods, grant)",
              "the peer ÷ this, medians (get_methods, grant): one CPU", "the same on every CPU"]

    def both(a: str, b: str, prefix: str) -> str:
        if a == b:
            return "—"
        return " / ".join(ratio(times(rounds, a, b, f"{prefix}{metric}_median_ms")) for metric in ("methods", "grant"))

    rows = [[f"`{contender}`", *(fmt(r.get((contender, ONE_CPU + key))) for key, _ in figures),
             both(contender, "c-floor", ONE_CPU), both("py-peer", contender, ONE_CPU), both("py-peer", contender, "")]
            for contender in ONE_CPU_CONTENDERS]
    return header, rows


def overhead_cell(us: float | None, unit: str = "") -> str:
    """An overhead over C as shown. Below zero, C came out slower than Python over the same
    library in most rounds: the run's noise, which says nothing of the overhead."""
    if us is None:
        return "—"
    return f"{us:.0f}{unit}" + (" (C slower than Python in this run: not measured)" if us < 0 else "")


def growth(r: dict[tuple[str, str], float], contender: str) -> float | None:
    warm, end = r.get((contender, "soak_rss_warm_mb")), r.get((contender, "soak_rss_end_mb"))
    return None if warm is None or end is None else end - warm


def model_targets(r: dict[tuple[str, str], float], rounds: Rounds) -> list[tuple[str, str, bool]]:
    nan = float("nan")

    def get(contender: str, metric: str) -> float:
        return r.get((contender, metric), nan)

    checks = [check for prefix, where in conditions(rounds) for check in call_targets(r, rounds, prefix, where)]
    new, old, threads = get("py-async", "concurrent_wall_ms"), get("py-async-thread", "concurrent_wall_ms"), get("py-async", "concurrent_threads")
    faster = times_checked(rounds, "py-async-thread", "py-async", "concurrent_wall_ms")
    checks.append(("1,000 concurrent asyncio calls: one library thread, faster than the old model",
                   f"{threads:.0f} thread, {new:.0f} ms vs {old:.0f} ms ({faster:.2f}× as fast)", threads <= 1 and faster > 1))
    for contender in ("c-library", "c-queue", "py-blocking", "py-async"):
        mb = growth(r, contender)
        mb = nan if mb is None else mb
        checks.append((f"soak of 100,000 calls ({contender}): RSS growth at most 1 MB", f"{mb:.2f} MB", mb <= 1))
    return checks


def call_targets(r: dict[tuple[str, str], float], rounds: Rounds, prefix: str, where: str) -> list[tuple[str, str, bool]]:
    """Issue 18's targets on the calls under one of the conditions(): their figures' prefix,
    and the label that names it."""
    checks = []
    for contender in ("py-blocking", "py-async"):
        for metric in ("methods", "grant"):
            median = times_checked(rounds, "py-peer", contender, f"{prefix}{metric}_median_ms")
            p99 = times_checked(rounds, "py-peer", contender, f"{prefix}{metric}_p99_ms")
            checks.append((f"{where}{metric}: {contender} at least 4× faster than the peer at the median, 3× at p99",
                           f"{median:.2f}×, {p99:.2f}×", median >= 4 and p99 >= 3))
    for contender in ("py-blocking", "py-async"):
        for metric in ("methods", "grant"):
            us = overhead(rounds, contender, prefix + metric)
            us = float("nan") if us is None else us
            checks.append((f"{where}{metric}: {contender} at most 50 µs over C (the queue, in the same process)",
                           overhead_cell(us, " µs"), 0 <= us <= 50))
    queue = r.get(("c-queue", f"{prefix}no_request_median_ms"), float("nan"))
    thread = r.get(("c-library", f"{prefix}no_request_median_ms"), float("nan"))
    checks.append((f"{where}a call that sends nothing: the queue no dearer than the library thread",
                   f"{queue * 1e3:.1f} µs vs {thread * 1e3:.1f} µs", queue <= thread))
    x = times_checked(rounds, "c-queue", "c-floor", f"{prefix}methods_median_ms")
    checks.append((f"{where}get_methods from C through the queue at most 1.5× the libcurl floor", f"{x:.2f}×", x <= 1.5))
    return checks


def import_targets(r: dict[tuple[str, str], float]) -> list[tuple[str, str, bool]]:
    """Issue 19's: `import portal_auth` and a first client, over a bare interpreter, beside the peer."""
    ms, peer = r.get(("py-library", "load_ms"), float("nan")), r.get(("py-peer", "load_ms"), float("nan"))
    return [("import portal_auth and a first client at most 10 ms over a bare interpreter",
             f"{ms:.1f} ms (requests + keyring: {peer:.0f} ms, {peer / ms:.0f}× as much)", ms <= 10)]


def import_figure(results: str) -> None:
    r = medians(read_rounds(results))
    for name, value, ok in import_targets(r):
        print(f"{'met   ' if ok else 'MISSED'}  {name}: {value}")


def main(results: str, library: str, out: str) -> None:
    rounds = read_rounds(results)
    # The binding's load is recorded as py-library: shown in the py-blocking column.
    for metric in ("load_ms", "load_rss_mb"):
        if ("py-library", metric) in rounds:
            rounds[("py-blocking", metric)] = rounds[("py-library", metric)]
    r = medians(rounds)
    header = ["figure", *CONTENDERS, "C lib ÷ floor", "C queue ÷ floor", "py ÷ floor", "peer ÷ py-blocking", "peer ÷ py-async"]
    rows = []
    for metric, label in METRICS:
        values = [r.get((contender, metric)) for contender in CONTENDERS]
        pairs = (("c-library", "c-floor"), ("c-queue", "c-floor"), ("py-blocking", "c-floor"),
                 ("py-peer", "py-blocking"), ("py-peer", "py-async"))
        rows.append([label, *map(fmt, values), *(ratio(times(rounds, a, b, metric)) for a, b in pairs)])
    model_header = ["figure", "library thread (old model)", "completion queue (new)"]
    model_rows = models(r, rounds)
    one_cpu_header, one_cpu_rows = one_cpu(r, rounds)
    gnome_header, gnome_rows = gnome(r, rounds)
    checks, new_checks, import_checks = targets(r, rounds), model_targets(r, rounds), import_targets(r)

    on_one_cpu = len(conditions(rounds)) > 1
    tables = [(header, rows), (model_header, model_rows), *([(one_cpu_header, one_cpu_rows)] if on_one_cpu else []),
              (gnome_header, gnome_rows)]
    for head, body in tables:
        widths = [max(len(str(row[i])) for row in [head, *body]) for i in range(len(head))]
        for row in [head, *body]:
            print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
        print()
    for name, value, ok in checks + new_checks + import_checks:
        print(f"{'met   ' if ok else 'MISSED'}  {name}: {value}")
    flood = [f"{label}: {fmt(r.get(('listener', metric)))} ms" for metric, label in FLOOD_METRICS]
    print("\n".join(["", *flood]))

    analysis = Path(__file__).with_name("analysis.md")
    text = [
        "# Benchmark results",
        "",
        "Written by `make bench` (bench/run.sh) from the result lines kept in `bench/results.tsv`;",
        "every figure is from one run on this machine unless the analysis below says otherwise.",
        "Contenders: `c-library` libportalauth from C; `py-blocking` / `py-async` the Python",
        "binding (`PortalAuth`, `AsyncPortalAuth`); `py-peer` `requests` (one Session, keep-alive)",
        "plus `keyring`; `c-floor` one reused libcurl easy handle (a multi handle for the",
        "concurrent calls) plus libsecret called directly. One loopback nginx serves the",
        "emulator's responses as static JSON to all of them. A figure is the median over the",
        "rounds (or processes) that measured it; a ratio or a difference of two contenders is",
        "taken within each round, where they ran in turn under the machine's state of the moment,",
        "and the median of those is shown.",
        "",
        "## Machine",
        "",
        *machine(library),
        "",
        "## Figures",
        "",
        *markdown(header, rows),
        "",
        "## Completion models: the library thread beside the completion queue",
        "",
        "C on the library thread (`c-library`) and through the completion queue (`c-queue`); the",
        "Python binding whose completions ran on the library thread (`py-*-thread`, commit c1438ce,",
        "on this same library) and the binding of this checkout, which runs the queue. The",
        "binding's overhead over C is taken against `c-queue-in-python`: the same calls from C,",
        "through the queue, made inside the Python contenders' process in chunks interleaved with",
        "theirs (bench/library.c built as a shared library).",
        "",
        *markdown(model_header, model_rows),
        "",
        *([
            "## One CPU: the calls with the contender and nginx on the same CPU",
            "",
            "The calls above again, in a pass at the end of each of their rounds, each contender's",
            "process and nginx's worker on the first CPU: the CPU a call runs on never waits idle, so",
            "no wake-up out of a halted CPU is on the call's path (why that matters on a VM:",
            "bench/analysis.md, \"One CPU\"). The last column is the same ratio from the calls on",
            "every CPU, above.",
            "",
            *markdown(one_cpu_header, one_cpu_rows),
            "",
        ] if on_one_cpu else []),
        "## GNOME: the library beside what a GNOME app would write instead",
        "",
        "Each on a GMainLoop, in a process of its own, three runs interleaved (medians of their",
        "figures): get_methods (2,000 calls), a grant exchange whose session is persisted in the",
        "keyring (100), the keyring restore (100), each call started from the completion of the one",
        "before; then the resident memory. Same nginx, same private keyring as the rest.",
        "",
        *markdown(gnome_header, gnome_rows),
        "",
        "## The loopback listener under a connect flood (issue 46)",
        "",
        "How long the user's browser waits for a browser sign-in's loopback listener (connect to",
        "the end of its answer) while another user (nobody) holds 8,000 sockets and runs two",
        "connect loops against it (bench/flood_bench.py, scripts/connect-flood.py); 7 samples.",
        "",
        *(f"- {line}" for line in flood),
        "",
        "## Targets (issue 9)",
        "",
        *target_table(checks),
        "",
        "## Targets (issue 18)",
        "",
        *target_table(new_checks),
        "",
        "## Targets (issue 19)",
        "",
        *target_table(import_checks),
        "",
        analysis.read_text().rstrip() if analysis.exists() else "",
        "",
    ]
    Path(out).write_text("\n".join(text))
    print(f"\nwritten: {out}")


def markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header), *("| " + " | ".join(row) + " |" for row in rows)]


def target_table(checks: list[tuple[str, str, bool]]) -> list[str]:
    return markdown(["target", "measured", ""], [[name, value, "met" if ok else "**missed**"] for name, value, ok in checks])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--import"]:
        import_figure(sys.argv[2])
    else:
        main(*sys.argv[1:4])
