"""The in-process emulator: wires the parts together and runs the server thread."""

import os
import sys
import threading
from typing import Self

from .config import Config, default_config, load_config_file, parse_config
from .control_api import ControlApi
from .faults import FaultQueue
from .messages import JsonObject
from .portal_api import PortalApi
from .providers import FakeProviders
from .recorder import RequestLog
from .server import EmulatorServer, LogLine
from .state import State


def _stderr_log(line: str) -> None:
    sys.stderr.write(f"portal-auth-emulator: {line}\n")
    sys.stderr.flush()


class Emulator:
    """`Emulator(config).start()` returns the base URL; `.stop()` shuts it down.

    `config` is None (the embedded default), a dict shaped like the JSON file, a
    Config, or a path to a JSON file. `log` is False (silent), True (stderr) or a
    callable taking one line.
    """

    def __init__(
        self,
        config: Config | JsonObject | str | os.PathLike[str] | None = None,
        *,
        port: int = 0,
        log: bool | LogLine = False,
        tls: tuple[str, str] | None = None,
    ) -> None:
        if config is None:
            config = default_config()
        elif isinstance(config, (str, os.PathLike)):
            config = load_config_file(config)
        elif not isinstance(config, Config):
            config = parse_config(config)
        self.config = config
        self.port = port
        # (certificate file, key file) to serve https, e.g. to check that a client refuses
        # a certificate it cannot verify.
        self.tls = tls
        self._log = _stderr_log if log is True else (log or None)
        self.state: State = State(config)
        self.requests: RequestLog = RequestLog()
        self.faults: FaultQueue = FaultQueue()
        self.portal: PortalApi = PortalApi(self.state, lambda: self.base_url)
        self.control: ControlApi = ControlApi(self.state, self.requests, self.faults, FakeProviders(self.state))
        self._server: EmulatorServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("emulator is not running")
        scheme = "https" if self.tls else "http"
        return f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> str:
        """Starts serving on 127.0.0.1; the base URL."""
        if self._server is not None:
            raise RuntimeError("emulator already started")
        self._server = EmulatorServer(self.port, self, self._log, self.tls)
        # Short poll interval: stop() waits for the serve loop to notice the request.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name="portal-auth-emulator", daemon=True,
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stops serving, ending held requests and open connections."""
        server, self._server = self._server, None
        if server is None:
            return
        # Wake everything a handler may block on, then end the connections.
        self.faults.close()
        self.requests.close()
        server.shutdown()
        server.close_connections()
        server.server_close()
        assert self._thread is not None  # start() set it along with the server
        self._thread.join()
        self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
