"""Turns the contenders' result lines into the table (printed) and bench/RESULTS.md: the
machine's description, every figure, ratios against the C floor and the Python peer, the
issue's targets as met or missed, and the analysis of bench/analysis.md.

    python3 bench/report.py RESULTS.tsv LIBRARY OUT.md"""

import os
import platform
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

CONTENDERS = ("c-library", "py-blocking", "py-async", "py-peer", "c-floor")
METRICS = (
    ("load_ms", "load: dlopen/import to first client (ms, median of 15 processes)"),
    ("load_rss_mb", "load: RSS growth (MB)"),
    ("methods_median_ms", "get_methods, median (ms)"),
    ("methods_p99_ms", "get_methods, p99 (ms)"),
    ("grant_median_ms", "grant exchange, median (ms)"),
    ("grant_p99_ms", "grant exchange, p99 (ms)"),
    ("no_request_median_ms", "a call that sends nothing (a foreign URL), median (ms)"),
    ("concurrent_wall_ms", "1,000 concurrent get_methods, wall (ms)"),
    ("concurrent_threads", "threads created for them"),
    ("persist_median_ms", "exchange + keyring persist, median (ms)"),
    ("restore_median_ms", "keyring restore, median (ms)"),
    ("hostile_redirect_max_ms", "200,000-char redirect URL, max of 20 (ms)"),
    ("hostile_jwt_max_ms", "200,000-char userJwt, max of 20 (ms)"),
    ("hostile_otpauth_max_ms", "200,000-char otpauth link, max of 20 (ms)"),
)


def read(path: str) -> dict[tuple[str, str], float]:
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    for line in Path(path).read_text().splitlines():
        contender, metric, value = line.split("\t")
        samples[(contender, metric)].append(float(value))
    return {key: statistics.median(values) for key, values in samples.items()}


def fmt(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def ratio(a: float | None, b: float | None) -> str:
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


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


def targets(r: dict[tuple[str, str], float]) -> list[tuple[str, str, bool]]:
    def get(contender: str, metric: str) -> float:
        return r.get((contender, metric), float("nan"))

    checks = []
    for contender, what in (("c-library", "dlopen"), ("py-library", "import")):
        ms, mb = get(contender, "load_ms"), get(contender, "load_rss_mb")
        checks.append((f"load ({what}) under 5 ms and 8 MB", f"{ms:.1f} ms, {mb:.1f} MB", ms < 5 and mb < 8))
    for metric in ("methods", "grant"):
        x = get("c-library", f"{metric}_median_ms") / get("c-floor", f"{metric}_median_ms")
        checks.append((f"{metric}: C call within 1.2× of the C floor", f"{x:.2f}×", x <= 1.2))
        for contender in ("py-blocking", "py-async"):
            y = get("py-peer", f"{metric}_median_ms") / get(contender, f"{metric}_median_ms")
            checks.append((f"{metric}: {contender} at least 3× faster than the Python peer", f"{y:.2f}×", y >= 3))
    for contender in ("c-library", "py-async"):
        n = get(contender, "concurrent_threads")
        checks.append((f"1,000 concurrent calls on at most 3 library threads ({contender})", f"{n:.0f}", n <= 3))
    for metric in ("hostile_redirect_max_ms", "hostile_jwt_max_ms", "hostile_otpauth_max_ms"):
        ms = get("c-library", metric)
        checks.append((f"hostile input under 5 ms: {metric.split('_')[1]}", f"{ms:.2f} ms", ms < 5))
    return checks


def main(results: str, library: str, out: str) -> None:
    r = read(results)
    # The binding's load is recorded as py-library: shown in the py-blocking column.
    for metric in ("load_ms", "load_rss_mb"):
        if ("py-library", metric) in r:
            r[("py-blocking", metric)] = r[("py-library", metric)]
    header = ["figure", *CONTENDERS, "C lib ÷ floor", "py ÷ floor", "peer ÷ py-blocking", "peer ÷ py-async"]
    rows = []
    for metric, label in METRICS:
        values = [r.get((contender, metric)) for contender in CONTENDERS]
        c_lib, py_block, py_async, peer, floor = values
        rows.append([label, *map(fmt, values), ratio(c_lib, floor), ratio(py_block, floor), ratio(peer, py_block), ratio(peer, py_async)])
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(row) + " |" for row in rows]
    checks = targets(r)
    target_lines = [f"| {name} | {value} | {'met' if ok else '**missed**'} |" for name, value, ok in checks]

    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
    print()
    for name, value, ok in checks:
        print(f"{'met   ' if ok else 'MISSED'}  {name}: {value}")

    analysis = Path(__file__).with_name("analysis.md")
    text = [
        "# Benchmark results",
        "",
        "Written by `make bench` (bench/run.sh); every figure is from one run on this machine.",
        "Contenders: `c-library` libportalauth from C; `py-blocking` / `py-async` the Python",
        "binding (`PortalAuth`, `AsyncPortalAuth`); `py-peer` `requests` (one Session, keep-alive)",
        "plus `keyring`; `c-floor` one reused libcurl easy handle (a multi handle for the",
        "concurrent calls) plus libsecret called directly. One loopback nginx serves the",
        "emulator's responses as static JSON to all of them.",
        "",
        "## Machine",
        "",
        *machine(library),
        "",
        "## Figures",
        "",
        *table,
        "",
        "## Targets (issue 9)",
        "",
        "| target | measured | |",
        "|---|---|---|",
        *target_lines,
        "",
        analysis.read_text().rstrip() if analysis.exists() else "",
        "",
    ]
    Path(out).write_text("\n".join(text))
    print(f"\nwritten: {out}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
