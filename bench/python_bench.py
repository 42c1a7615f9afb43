"""Contenders 2 and 3: this library from Python (blocking PortalAuth and asyncio
AsyncPortalAuth), and the pure-Python peer a developer would write without it: `requests`
with one Session (keep-alive) plus `keyring`. One mode per run (a fresh interpreter each):

    python_bench.py load-library | load-peer | calls | concurrent | keyring | soak
    python_bench.py repeat blocking|async|peer methods|grant N

repeat: N calls and nothing printed, for run.sh's count of instructions per call.

soak: 100,000 calls per client (get_methods and grant exchanges in turn), with the resident
memory after the first 10,000 and at the end. BENCH_BASE is the loopback server. With
BENCH_PY_MODEL=thread the binding is the one whose completions ran on the library's thread
(run.sh installs it from the last commit that had it): its contenders are py-blocking-thread
and py-async-thread, and the peer and c-queue-in-python are left to the other run. Lines out:
contender<TAB>metric<TAB>value.

The load modes measure `import` and a first client over a bare interpreter: this module
imports nothing before them that the interpreter has not loaded at start-up already (os and
sys; time is built in), so that nothing either contender needs is paid for in advance."""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

CALLS, WARMUP, CHUNK, CONCURRENT, KEYRING_CALLS, SOAK, SOAK_WARMUP = 2000, 200, 100, 1000, 100, 100_000, 10_000
OLD_MODEL = os.environ.get("BENCH_PY_MODEL") == "thread"
BLOCKING, ASYNC = ("py-blocking-thread", "py-async-thread") if OLD_MODEL else ("py-blocking", "py-async")
ENVIRONMENT, CALLBACK = "env-bench", "myapp://auth/callback"
HEADERS = {"x-portal-auth-environment-id": ENVIRONMENT, "Accept": "application/json", "Content-Type": "application/json"}


def headers() -> dict[str, str]:
    """The headers of every Client Auth request, with a fresh trace id as the library sends."""
    import uuid

    return {**HEADERS, "X-Portal-Trace-Id": str(uuid.uuid4())}
STORED = '{"clientSessionToken":"cst_bench","endUserId":"eu_bench"}'


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / (1024 * 1024)


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def emit(contender: str, metric: str, value: float) -> None:
    print(f"{contender}\t{metric}\t{value:.4f}", flush=True)


def quantile(samples: list[float], p: float) -> float:
    import math

    ordered = sorted(samples)
    return ordered[max(0, math.ceil(len(ordered) * p) - 1)]


def timed(call: Callable[[], Any]) -> Callable[[int], list[float]]:
    """A chunk of `n` calls, one after another: each one's time (ms)."""

    def chunk(n: int) -> list[float]:
        samples = []
        for _ in range(n):
            start = time.perf_counter()
            call()
            samples.append((time.perf_counter() - start) * 1e3)
        return samples

    return chunk


def interleaved(metric: str, contenders: dict[str, Callable[[int], list[float]]]) -> None:
    """CALLS calls of each contender, in chunks of CHUNK, the contenders in turn (each chunk
    led by the next); the first WARMUP of each are left out."""
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    order = list(contenders)
    for round_ in range((WARMUP + CALLS) // CHUNK):
        for name in order[round_ % len(order):] + order[: round_ % len(order)]:
            chunk = contenders[name](CHUNK)
            if round_ * CHUNK >= WARMUP:
                samples[name].extend(chunk)
    for name, taken in samples.items():
        emit_latency(name, metric, taken)


def sequential(contender: str, metric: str, call: Callable[[], Any], n: int, warmup: int) -> None:
    chunk = timed(call)
    chunk(warmup)
    emit_latency(contender, metric, chunk(n))


def emit_latency(contender: str, metric: str, samples: list[float]) -> None:
    emit(contender, f"{metric}_median_ms", quantile(samples, 0.5))
    emit(contender, f"{metric}_p99_ms", quantile(samples, 0.99))


_grant = 0


def next_token() -> str:
    global _grant
    _grant += 1
    return f"mlg_bench{_grant:08d}"


def redirect() -> str:
    return f"{CALLBACK}?token={next_token()}&authMethod=EMAIL_MAGIC_LINK"


IN_PROCESS_C = "c-queue-in-python"


def c_queue_chunks(kind: int) -> Callable[[int], list[float]]:
    """Contender c-queue-in-python: chunks of `n` calls of `kind` (0 get_methods, 1 a grant
    exchange) made from C through the completion queue, in this process (bench/library.c as
    a shared library, BENCH_C_CALLS), each one's time (ms)."""
    import ctypes

    chunk_function = ctypes.CDLL(os.environ["BENCH_C_CALLS"]).bench_queue_chunk
    chunk_function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]

    def chunk(n: int) -> list[float]:
        samples = (ctypes.c_double * n)()
        if chunk_function(kind, n, samples) != 0:
            raise RuntimeError("a call from C failed")
        return list(samples)

    return chunk


def main(mode: str, base: str) -> None:
    if mode == "load-library":
        before, start = rss_mb(), time.perf_counter()
        import portal_auth

        # The default storage (the keyring), as issue 9's load target is defined.
        portal_auth.PortalAuth(auth_environment_id=ENVIRONMENT, redirect_url=CALLBACK, api_host=base)
        emit("py-library", "load_ms", (time.perf_counter() - start) * 1e3)
        emit("py-library", "load_rss_mb", rss_mb() - before)
        return
    if mode == "load-peer":
        before, start = rss_mb(), time.perf_counter()
        import keyring  # noqa: F401
        import requests

        requests.Session()
        emit("py-peer", "load_ms", (time.perf_counter() - start) * 1e3)
        emit("py-peer", "load_rss_mb", rss_mb() - before)
        return

    import asyncio

    import keyring
    import portal_auth
    import requests

    api = base + "/api/v3/auth"
    session = requests.Session()

    def peer_methods() -> Any:
        response = session.get(api + "/methods", headers=headers())
        response.raise_for_status()
        return response.json()["data"]

    def peer_grant() -> Any:
        response = session.post(api + "/magic-links/validations", json={"token": next_token()}, headers=headers())
        response.raise_for_status()
        data = response.json()["data"]
        assert data["clientSessionToken"] and data["endUserId"]
        return data

    def library(storage: str | None = "memory") -> portal_auth.PortalAuth:
        return portal_auth.PortalAuth(auth_environment_id=ENVIRONMENT, redirect_url=CALLBACK, api_host=base, storage=storage)

    def async_library() -> portal_auth.AsyncPortalAuth:
        return portal_auth.AsyncPortalAuth(auth_environment_id=ENVIRONMENT, redirect_url=CALLBACK, api_host=base, storage="memory")

    def signed_in(result: Any) -> None:
        assert isinstance(result, portal_auth.AuthenticatedResult)

    def grant(auth: portal_auth.PortalAuth) -> Callable[[], None]:
        return lambda: signed_in(auth.handle_redirect(redirect()))

    async def async_grant(auth: portal_auth.AsyncPortalAuth) -> None:
        signed_in(await auth.handle_redirect(redirect()))

    if mode == "calls":
        # The contenders in turn, a chunk of calls each, in one process: the machine's load
        # drifts within seconds, and each contender must see the same drift.
        loop = asyncio.new_event_loop()

        async def enter() -> portal_auth.AsyncPortalAuth:
            return await async_library().__aenter__()

        async_auth = loop.run_until_complete(enter())
        with library() as auth:

            def timed_async(call: Callable[[], Any]) -> Callable[[int], list[float]]:
                async def chunk(n: int) -> list[float]:
                    samples = []
                    for _ in range(n):
                        start = time.perf_counter()
                        await call()
                        samples.append((time.perf_counter() - start) * 1e3)
                    return samples

                return lambda n: loop.run_until_complete(chunk(n))

            methods = {BLOCKING: timed(auth.get_methods), ASYNC: timed_async(async_auth.get_methods)}
            grants = {BLOCKING: timed(grant(auth)), ASYNC: timed_async(lambda: async_grant(async_auth))}
            if not OLD_MODEL:
                methods["py-peer"], grants["py-peer"] = timed(peer_methods), timed(peer_grant)
                methods[IN_PROCESS_C], grants[IN_PROCESS_C] = c_queue_chunks(0), c_queue_chunks(1)
            interleaved("methods", methods)
            interleaved("grant", grants)
        loop.run_until_complete(async_auth.__aexit__(None, None, None))
        loop.close()
    elif mode == "concurrent":
        before = threads()

        async def run_concurrent() -> float:
            async with async_library() as auth:
                start = time.perf_counter()
                await asyncio.gather(*(auth.get_methods() for _ in range(CONCURRENT)))
                elapsed = (time.perf_counter() - start) * 1e3
                emit(ASYNC, "concurrent_threads", threads() - before)
                return elapsed

        emit(ASYNC, "concurrent_wall_ms", asyncio.run(run_concurrent()))
        if OLD_MODEL:
            return
        # The peer: a thread pool, one requests.Session per worker thread.
        import threading
        from concurrent.futures import ThreadPoolExecutor

        local = threading.local()

        def pooled_methods(_: int) -> Any:
            if not hasattr(local, "session"):
                local.session = requests.Session()
            response = local.session.get(api + "/methods", headers=headers())
            response.raise_for_status()
            return response.json()["data"]

        before = threads()
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=32) as pool:
            peak = 0
            for _ in pool.map(pooled_methods, range(CONCURRENT)):
                peak = max(peak, threads())
        emit("py-peer", "concurrent_wall_ms", (time.perf_counter() - start) * 1e3)
        emit("py-peer", "concurrent_threads", peak - before)
    elif mode == "keyring":
        with library(storage=None) as auth:
            sequential("py-blocking", "persist", lambda: signed_in(auth.handle_redirect(redirect())), KEYRING_CALLS, 5)
            sequential("py-blocking", "restore", auth.restore_session, KEYRING_CALLS, 5)

        def peer_persist() -> None:
            data = peer_grant()
            keyring.set_password("portal-auth-bench-peer", ENVIRONMENT, STORED.replace("cst_bench", data["clientSessionToken"]))

        sequential("py-peer", "persist", peer_persist, KEYRING_CALLS, 5)
        sequential("py-peer", "restore", lambda: keyring.get_password("portal-auth-bench-peer", ENVIRONMENT), KEYRING_CALLS, 5)
    elif mode == "repeat":
        who, kind, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
        if who not in ("blocking", "async", "peer") or kind not in ("methods", "grant"):
            raise SystemExit("usage: python_bench.py repeat blocking|async|peer methods|grant N")
        if who == "peer":
            once = peer_methods if kind == "methods" else peer_grant
            for _ in range(n):
                once()
        elif who == "blocking":
            with library() as auth:
                call = auth.get_methods if kind == "methods" else grant(auth)
                for _ in range(n):
                    call()
        else:

            async def repeat() -> None:
                async with async_library() as auth:
                    for _ in range(n):
                        await (auth.get_methods() if kind == "methods" else async_grant(auth))

            asyncio.run(repeat())
    elif mode == "soak":

        def soak_call(auth: Any, i: int) -> Any:
            return auth.get_methods() if i % 2 == 0 else auth.handle_redirect(redirect())

        with library() as auth:
            start = time.perf_counter()
            for i in range(SOAK):
                if i == SOAK_WARMUP:
                    emit(BLOCKING, "soak_rss_warm_mb", rss_mb())
                soak_call(auth, i)
            emit(BLOCKING, "soak_rss_end_mb", rss_mb())
            emit(BLOCKING, "soak_call_ms", (time.perf_counter() - start) * 1e3 / SOAK)

        async def run_soak() -> None:
            async with async_library() as auth:
                start = time.perf_counter()
                for i in range(SOAK):
                    if i == SOAK_WARMUP:
                        emit(ASYNC, "soak_rss_warm_mb", rss_mb())
                    await soak_call(auth, i)
                emit(ASYNC, "soak_rss_end_mb", rss_mb())
                emit(ASYNC, "soak_call_ms", (time.perf_counter() - start) * 1e3 / SOAK)

        asyncio.run(run_soak())
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1], os.environ["BENCH_BASE"])
