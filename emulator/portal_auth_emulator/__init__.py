"""Local emulator of Portal's Client Auth HTTP API, for tests (loopback only)."""

from .config import Config, ConfigError, default_config, load_config_file
from .runtime import Emulator

__all__ = ["Config", "ConfigError", "Emulator", "default_config", "load_config_file"]
